// The files a loop's metric tools read besides the tree: in a project directory, and in the home.
import { describe, expect, it } from 'vitest';
import { homeToolFiles, projectToolFiles } from '../../src/infra/tool-config.js';

describe('tool config files', () => {
  it('in a project directory: npm, yarn, bun, dotenv, Python and version-manager files', () => {
    expect(projectToolFiles('/repo')).toEqual(
      expect.arrayContaining([
        '/repo/.npmrc',
        '/repo/.yarnrc.yml',
        '/repo/bunfig.toml',
        '/repo/.env',
        '/repo/sitecustomize.py',
        '/repo/.nvmrc',
      ]),
    );
  });

  it('in the home, and npm’s user config wherever the environment puts it', () => {
    expect(homeToolFiles({ HOME: '/home/u', npm_config_userconfig: '/etc/npmrc-of-u' })).toEqual(
      expect.arrayContaining(['/home/u/.npmrc', '/home/u/.yarnrc.yml', '/etc/npmrc-of-u']),
    );
    expect(homeToolFiles({})).toEqual([]);
  });
});
