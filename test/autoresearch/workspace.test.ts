// The loops registry (.forge/loops.json) and workspace resolution, as the runner and status use them.
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  findLoopWorkspace,
  readLoopsRegistry,
  registerLoop,
  requireLoopWorkspace,
  resolveWorkspaceDir,
  workspacePaths,
} from '../../src/autoresearch/workspace.js';
import { runDirFor } from '../../src/cli/epic-dirs.js';
import { ConfigError, ExitCode, type AppError } from '../../src/infra/errors.js';

async function repo(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-workspace-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('the loops registry', () => {
  it('registers loops without losing the others, and finds each workspace by epic id', async () => {
    const dir = await repo();
    await registerLoop(dir, 'bd-a', { workspace: '.autoresearch', subject: 'parser' });
    await registerLoop(dir, 'bd-b', { workspace: '.autoresearch-docs' });
    expect(await readLoopsRegistry(dir)).toEqual({
      'bd-a': { workspace: '.autoresearch', subject: 'parser' },
      'bd-b': { workspace: '.autoresearch-docs' },
    });
    expect(JSON.parse(await readFile(join(dir, '.forge', 'loops.json'), 'utf8'))).toHaveProperty('bd-b');
    expect(await findLoopWorkspace(dir, 'bd-b')).toBe(join(dir, '.autoresearch-docs'));
    expect(await findLoopWorkspace(dir, 'bd-zzz')).toBeUndefined();
  });

  it('names the file and the field of a malformed entry', async () => {
    const dir = await repo();
    await mkdir(join(dir, '.forge'));
    await writeFile(join(dir, '.forge', 'loops.json'), JSON.stringify({ 'bd-a': { workspace: 3 } }));
    const error = await readLoopsRegistry(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      '.forge/loops.json: bd-a.workspace: expected the path of the loop workspace',
    );
    // The same structured problems as a schema's refusal (readJsonFile), so no caller re-parses text.
    expect((error as ConfigError).problems).toEqual([
      {
        file: '.forge/loops.json',
        field: 'bd-a.workspace',
        message: 'expected the path of the loop workspace',
      },
    ]);
    await writeFile(
      join(dir, '.forge', 'loops.json'),
      JSON.stringify({ 'bd-a': { workspace: 'w', store: 'x' } }),
    );
    await expect(readLoopsRegistry(dir)).rejects.toThrow(
      '.forge/loops.json: bd-a.store: expected "br" or "embedded"',
    );
    await writeFile(join(dir, '.forge', 'loops.json'), '[]');
    const top = await readLoopsRegistry(dir).catch((e: unknown) => e);
    expect((top as ConfigError).problems).toEqual([
      { file: '.forge/loops.json', field: '', message: 'expected an object mapping epic ids to loops' },
    ]);
    await writeFile(
      join(dir, '.forge', 'loops.json'),
      JSON.stringify({ 'bd-a': { workspace: 'w', extra: 1 } }),
    );
    await expect(readLoopsRegistry(dir)).rejects.toThrow('bd-a.extra: unknown key');
    await writeFile(join(dir, '.forge', 'loops.json'), '{ nope');
    await expect(readLoopsRegistry(dir)).rejects.toThrow(/loops\.json: not valid JSON/);
  });

  it('falls back to the default workspace when its config names the epic (a clone without .forge/)', async () => {
    const dir = await repo();
    await mkdir(join(dir, '.autoresearch'));
    await writeFile(join(dir, '.autoresearch', 'config.json'), JSON.stringify({ epic_id: 'bd-c' }));
    expect(await findLoopWorkspace(dir, 'bd-c')).toBe(join(dir, '.autoresearch'));
    expect(await findLoopWorkspace(dir, 'bd-d')).toBeUndefined();
  });

  it('an epic without a loop is a usage error that says how to create one', async () => {
    const dir = await repo();
    const error = (await requireLoopWorkspace(dir, 'bd-x').catch((e: unknown) => e)) as AppError;
    expect(error.exitCode).toBe(ExitCode.usage);
    expect(error.message).toContain('bd-x has no autoresearch loop');
    expect(error.hint).toContain('forge-pack loop');
  });

  it("runDirFor puts a loop's run files (lock, logs) in its workspace, other epics under .forge/epics", async () => {
    const dir = await repo();
    await registerLoop(dir, 'bd-a', { workspace: 'loops/one' });
    expect((await runDirFor(dir, 'bd-a')).lockPath).toBe(join(dir, 'loops', 'one', 'ralph-loop.lock'));
    expect((await runDirFor(dir, 'bd-b')).root).toBe(join(dir, '.forge', 'epics', 'bd-b'));
    expect(workspacePaths(join(dir, 'loops', 'one')).lock).toBe(join(dir, 'loops', 'one', 'ralph-loop.lock'));
  });
});

describe('resolveWorkspaceDir', () => {
  it('resolves inside the repository and refuses the root itself or anything outside it', async () => {
    const dir = await repo();
    expect(resolveWorkspaceDir(dir, undefined)).toEqual({
      root: join(dir, '.autoresearch'),
      relative: '.autoresearch',
    });
    expect(resolveWorkspaceDir(dir, join(dir, 'a', 'b')).relative).toBe('a/b');
    expect(() => resolveWorkspaceDir(dir, '../elsewhere')).toThrow(/inside the repository/);
    expect(() => resolveWorkspaceDir(dir, '.')).toThrow(/inside the repository/);
    expect(() => resolveWorkspaceDir(dir, '/tmp')).toThrow(/inside the repository/);
  });
});
