// What the installed dependencies hold, as the runner hashes it to tell a reinstall from a patch: links
// by where they lead, a file by its bytes, and nothing trusted that changed while it was read.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ContentHashes } from '../../src/infra/content-hashes.js';
import { changedFiles, fingerprintFiles } from '../../src/infra/ignored-files.js';

async function install(dir: string, files: Record<string, string>, links: Record<string, string> = {}) {
  await rm(join(dir, 'node_modules'), { recursive: true, force: true });
  for (const [path, text] of Object.entries(files)) {
    await mkdir(join(dir, 'node_modules', path, '..'), { recursive: true });
    await writeFile(join(dir, 'node_modules', path), text);
  }
  for (const [path, target] of Object.entries(links)) {
    await mkdir(join(dir, 'node_modules', path, '..'), { recursive: true });
    await symlink(target, join(dir, 'node_modules', path));
  }
}

async function world() {
  const dir = await mkdtemp(join(tmpdir(), 'forge-hashes-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const snapshot = () => fingerprintFiles(dir, ['node_modules/']).dependencies;
  return { dir, snapshot, contents: new ContentHashes(dir) };
}

/** The files that changed in content from `before` to `after`, as the guard asks. */
const changed = (contents: ContentHashes, before: Map<string, string>, after: Map<string, string>) =>
  contents.contentChanged(before, after, changedFiles(before, after));

describe('content hashes of installed dependencies', () => {
  it('a link made again to the same place is unchanged; one led elsewhere is changed', async () => {
    const { dir, snapshot, contents } = await world();
    const files = { 'pkg/cli.js': 'run()\n' };
    await install(dir, files, { '.bin/pkg': '../pkg/cli.js' });
    const before = snapshot();
    await contents.prime(before);
    await install(dir, files, { '.bin/pkg': '../pkg/cli.js' });
    const again = snapshot();
    expect(changedFiles(before, again)).toContain('node_modules/.bin/pkg');
    expect(await changed(contents, before, again)).toEqual([]);
    await unlink(join(dir, 'node_modules/.bin/pkg'));
    await symlink('../../evil.js', join(dir, 'node_modules/.bin/pkg'));
    expect(await changed(contents, again, snapshot())).toEqual(['node_modules/.bin/pkg']);
  });

  it('a FIFO put in a file’s place is a change, and reading it does not hang', async () => {
    const { dir, snapshot, contents } = await world();
    await install(dir, { 'pkg/index.js': 'x\n' });
    const before = snapshot();
    await contents.prime(before);
    await unlink(join(dir, 'node_modules/pkg/index.js'));
    execFileSync('mkfifo', [join(dir, 'node_modules/pkg/index.js')]);
    const after = snapshot();
    expect(await changed(contents, before, after)).toEqual(['node_modules/pkg/index.js']);
    await contents.prime(after);
  });

  it('the same bytes read back through a changed identity are unchanged only once hashed before', async () => {
    const { dir, snapshot, contents } = await world();
    await install(dir, { 'a.js': 'a\n', 'b.js': 'b\n' });
    const first = snapshot();
    await contents.prime(first);
    await install(dir, { 'a.js': 'a\n', 'b.js': 'b\n' });
    const second = snapshot();
    // Hashed at `first`, not at `second`: the second reinstall is measured against what was hashed.
    expect(await changed(contents, first, second)).toEqual([]);
    await install(dir, { 'a.js': 'a\n', 'b.js': 'B\n' });
    expect(await changed(contents, second, snapshot())).toEqual(['node_modules/b.js']);
    // A file whose identity the snapshot did not see is never hashed as that identity.
    const stale = new Map(second);
    await install(dir, { 'a.js': 'a\n', 'b.js': 'b\n' });
    const fresh = new ContentHashes(dir);
    await fresh.prime(stale);
    expect(await changed(fresh, stale, snapshot())).toEqual(['node_modules/a.js', 'node_modules/b.js']);
  });

  it('hashes ahead only within its bound, in path order: a file past it counts as changed', async () => {
    const { dir, snapshot } = await world();
    const files = { 'a.js': 'a'.repeat(10), 'b.js': 'b'.repeat(10), 'c.js': 'c'.repeat(10) };
    await install(dir, files);
    const bounded = new ContentHashes(dir, 25);
    const before = snapshot();
    await bounded.prime(before);
    await install(dir, files);
    expect(await changed(bounded, before, snapshot())).toEqual(['node_modules/c.js']);
  });
});
