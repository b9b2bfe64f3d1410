// The files a loop's metric tools read besides the tree: project and home, npm's own override.
import { describe, expect, it } from 'vitest';
import { toolConfigPaths } from '../../src/infra/tool-config.js';

describe('toolConfigPaths', () => {
  it('lists the project files in each directory, the home files, and npm’s userconfig', () => {
    const paths = toolConfigPaths(['/repo', '/repo/.forge/worktrees/e'], {
      HOME: '/home/u',
      npm_config_userconfig: '/etc/npmrc-of-u',
    });
    expect(paths).toEqual(
      expect.arrayContaining([
        '/repo/.npmrc',
        '/repo/.env',
        '/repo/sitecustomize.py',
        '/repo/.forge/worktrees/e/.npmrc',
        '/home/u/.npmrc',
        '/home/u/.yarnrc.yml',
        '/etc/npmrc-of-u',
      ]),
    );
    expect(new Set(paths).size).toBe(paths.length);
  });

  it('without a HOME, only the project’s', () => {
    const paths = toolConfigPaths(['/repo'], {});
    expect(paths.every((path) => path.startsWith('/repo/'))).toBe(true);
  });
});
