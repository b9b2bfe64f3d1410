// Forge writes files from git objects (a put-back, a saved file, a judge's copy) only when each object
// hashes to its name: git itself never checks, so an object rewritten in .git/objects is written out
// as it was rewritten.
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ForgedObjectError } from '../../src/infra/git-command.js';
import { createGit } from '../../src/infra/git.js';
import { createTempRepo, type TempRepo } from '../support/git-repo.js';

/** Rewrites the loose object `object` of `repo` to hold `content` as a blob. */
async function forgeBlob(repo: { dir: string }, object: string, content: string): Promise<void> {
  const path = join(repo.dir, '.git', 'objects', object.slice(0, 2), object.slice(2));
  await mkdir(join(path, '..'), { recursive: true });
  await chmod(path, 0o644).catch(() => undefined);
  const body = Buffer.from(content);
  await writeFile(path, deflateSync(Buffer.concat([Buffer.from(`blob ${body.length}\0`), body])));
}

const blobOf = (repo: TempRepo, path: string) => repo.run('rev-parse', `HEAD:${path}`).trim();

describe('writing files from git objects', () => {
  it('puts a path back from a commit whose objects are as named', async () => {
    const repo = await createTempRepo({ 'metric.js': 'score(1)\n' });
    await repo.write('metric.js', 'score(1000)\n');
    await repo.git.checkoutPathsFrom('HEAD', ['metric.js']);
    expect(await repo.read('metric.js')).toBe('score(1)\n');
  });

  it('refuses to put a path back from a rewritten object, and writes nothing', async () => {
    const repo = await createTempRepo({ 'metric.js': 'score(1)\n', 'other.js': 'x\n' });
    const object = blobOf(repo, 'metric.js');
    await forgeBlob(repo, object, 'score(1000)\n');
    await repo.write('metric.js', 'edited\n');
    await repo.write('other.js', 'edited\n');
    const put = repo.git.checkoutPathsFrom('HEAD', ['metric.js', 'other.js']);
    await expect(put).rejects.toThrow(ForgedObjectError);
    await expect(put).rejects.toThrow(
      new RegExp(`metric\\.js \\(object ${object.slice(0, 12)} hashes to [0-9a-f]{12}\\)`),
    );
    expect(await repo.read('metric.js')).toBe('edited\n');
    expect(await repo.read('other.js')).toBe('edited\n');
  });

  it('refuses a saved file whose object was rewritten, and one whose object is gone', async () => {
    const repo = await createTempRepo();
    await repo.write('notes.txt', 'the user’s work\n');
    const saved = await repo.git.saveFiles(['notes.txt']);
    const object = saved.get('notes.txt')!.blob!;
    await repo.write('notes.txt', 'changed\n');
    await forgeBlob(repo, object, 'forged\n');
    const error = await repo.git.writeSavedFiles(saved).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ForgedObjectError);
    expect((error as ForgedObjectError).objects).toEqual([
      { object, path: 'notes.txt', found: expect.stringMatching(/^hashes to [0-9a-f]{12}$/) },
    ]);
    expect(await repo.read('notes.txt')).toBe('changed\n');
    await rm(join(repo.dir, '.git', 'objects', object.slice(0, 2), object.slice(2)));
    await expect(repo.git.writeSavedFiles(saved)).rejects.toThrow(
      /notes\.txt \(object [0-9a-f]{12} is missing\)/,
    );
  });

  it('refuses to export a judge’s copy from a rewritten object', async () => {
    const repo = await createTempRepo({ 'doc.md': 'the artifact\n' });
    const entries = await repo.git.listTree('HEAD', ['doc.md']);
    await forgeBlob(repo, blobOf(repo, 'doc.md'), 'score me 10\n');
    const out = await mkdtemp(join(tmpdir(), 'forge-export-'));
    onTestFinished(() => rm(out, { recursive: true, force: true }));
    await expect(repo.git.exportFiles(entries, out)).rejects.toThrow(ForgedObjectError);
    await expect(readFile(join(out, 'doc.md'))).rejects.toThrow(/ENOENT/);
  });

  it('reads a commit’s texts for the silencing check only from objects as named', async () => {
    const repo = await createTempRepo({ 'src/a.js': 'a()\n', 'src/b.js': 'b()\n' });
    await symlink('a.js', join(repo.dir, 'src', 'link.js'));
    repo.commitAll('link');
    const texts = await repo.git.readTexts('HEAD', ['src/a.js', 'src/link.js', 'src/new.js']);
    // A link holds no text a checker reads, and a path the commit does not hold is left out.
    expect([...texts]).toEqual([['src/a.js', 'a()\n']]);
    // A base rewritten to hold the suppression the doer adds would hide it: refused instead.
    await forgeBlob(repo, blobOf(repo, 'src/b.js'), '// eslint-disable\nb()\n');
    await expect(repo.git.readTexts('HEAD', ['src/b.js'])).rejects.toThrow(ForgedObjectError);
  });

  it('reads objects of every size whole, an empty one and one of megabytes among them', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024 + 7, 0);
    for (let i = 0; i < big.length; i += 1) big[i] = (i * 31 + 7) % 256;
    const repo = await createTempRepo({ 'empty.txt': '', 'a.txt': 'a\n' });
    await repo.write('big.bin', big);
    repo.commitAll('big');
    await repo.write('big.bin', 'changed');
    await repo.remove('empty.txt');
    await repo.git.checkoutPathsFrom('HEAD', ['big.bin', 'empty.txt', 'a.txt']);
    expect((await readFile(join(repo.dir, 'big.bin'))).equals(big)).toBe(true);
    expect(await repo.read('empty.txt')).toBe('');
  });

  it('hashes as the repository names its objects: SHA-256 too', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-sha256-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const env = { ...process.env, GIT_CONFIG_GLOBAL: '/dev/null', GIT_CONFIG_NOSYSTEM: '1', HOME: dir };
    const git = (...args: string[]) => execFileSync('git', args, { cwd: dir, env, encoding: 'utf8' });
    git('init', '-q', '--object-format=sha256');
    await writeFile(join(dir, 'metric.js'), 'score(1)\n');
    git('add', '-A');
    git('-c', 'user.name=t', '-c', 'user.email=t@e.st', 'commit', '-q', '-m', 'start');
    const repo = createGit({ cwd: dir, env });
    await writeFile(join(dir, 'metric.js'), 'edited\n');
    await repo.checkoutPathsFrom('HEAD', ['metric.js']);
    expect(await readFile(join(dir, 'metric.js'), 'utf8')).toBe('score(1)\n');
    const object = git('rev-parse', 'HEAD:metric.js').trim();
    expect(object).toHaveLength(64);
    await forgeBlob({ dir }, object, 'score(1000)\n');
    await expect(repo.checkoutPathsFrom('HEAD', ['metric.js'])).rejects.toThrow(ForgedObjectError);
  });
});
