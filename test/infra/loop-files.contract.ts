// The LoopFiles contract: one suite that the disk implementation and the in-memory one must both pass.
import { describe, expect, it } from 'vitest';
import type { LoopFiles } from '../../src/infra/loop-files.js';

export interface LoopFilesFixture {
  files: LoopFiles;
  /** An absolute directory to work under; it exists and is empty. */
  root: string;
}

export function defineLoopFilesContract(name: string, make: () => Promise<LoopFilesFixture>): void {
  describe(`LoopFiles contract: ${name}`, () => {
    it('reads back what it wrote, creating the directories on the way', async () => {
      const { files, root } = await make();
      expect(await files.readIfExists(`${root}/ws/a/b.txt`)).toBeUndefined();
      await files.writeText(`${root}/ws/a/b.txt`, 'hello ✓\n');
      expect(await files.readIfExists(`${root}/ws/a/b.txt`)).toBe('hello ✓\n');
      expect(await files.exists(`${root}/ws/a`)).toBe(true);
      expect(await files.list(`${root}/ws`)).toEqual(['a']);
    });

    it('locates a file the same through any port onto it, and two files apart', async () => {
      const { files, root } = await make();
      const where = files.locate(`${root}/ws/../ws/j.json`);
      expect(where).toEqual({ store: where.store, path: `${root}/ws/j.json` });
      expect({ ...files }.locate(`${root}/ws/j.json`)).toEqual(where);
      expect(files.locate(`${root}/ws/k.json`).path).not.toBe(where.path);
    });

    it('writes JSON indented with a final newline', async () => {
      const { files, root } = await make();
      await files.writeJson(`${root}/x.json`, { a: 1, b: [true] });
      expect(await files.readIfExists(`${root}/x.json`)).toBe('{\n  "a": 1,\n  "b": [\n    true\n  ]\n}\n');
    });

    it('replaces a file whole: a shorter text leaves nothing of the longer one', async () => {
      const { files, root } = await make();
      await files.writeText(`${root}/f`, 'a long first version');
      await files.writeText(`${root}/f`, 'short');
      expect(await files.readIfExists(`${root}/f`)).toBe('short');
    });

    it('never lets a reader see a half-written file, nor leaves temp files behind', async () => {
      const { files, root } = await make();
      const before = 'old\n'.repeat(1000);
      const after = 'new\n'.repeat(200_000);
      await files.writeText(`${root}/big`, before);
      const seen = new Set<string | undefined>();
      const reads: Promise<void>[] = [];
      const write = files.writeText(`${root}/big`, after);
      let done = false;
      void write.then(() => (done = true));
      while (!done) {
        reads.push(files.readIfExists(`${root}/big`).then((text) => void seen.add(text)));
        await reads[reads.length - 1];
      }
      await write;
      await Promise.all(reads);
      for (const text of seen) expect([before, after]).toContain(text);
      expect(await files.readIfExists(`${root}/big`)).toBe(after);
      expect(await files.list(root)).toEqual(['big']);
    });

    it('appends JSON lines, one value per line, creating the file', async () => {
      const { files, root } = await make();
      const ledger = `${root}/ws/log.jsonl`;
      await files.appendJsonLine(ledger, { n: 1 });
      await files.appendJsonLine(ledger, { n: 2, text: 'a\nb' });
      expect(await files.readIfExists(ledger)).toBe('{"n":1}\n{"n":2,"text":"a\\nb"}\n');
      expect(await files.readLastLine(ledger)).toBe('{"n":2,"text":"a\\nb"}');
    });

    it('drops a torn last line before appending, and never reads it as the last line', async () => {
      const { files, root } = await make();
      const ledger = `${root}/log.jsonl`;
      await files.writeText(ledger, '{"n":1}\n{"n":2,"te');
      expect(await files.readLastLine(ledger)).toBe('{"n":1}');
      await files.appendJsonLine(ledger, { n: 3 });
      expect(await files.readIfExists(ledger)).toBe('{"n":1}\n{"n":3}\n');
    });

    it('completes a last line that is whole JSON but lacks its newline', async () => {
      const { files, root } = await make();
      const ledger = `${root}/log.jsonl`;
      await files.writeText(ledger, '{"n":1}\n{"n":2}');
      expect(await files.readLastLine(ledger)).toBe('{"n":2}');
      await files.appendJsonLine(ledger, { n: 3 });
      expect(await files.readIfExists(ledger)).toBe('{"n":1}\n{"n":2}\n{"n":3}\n');
    });

    it('has no last line for a missing, empty or blank file', async () => {
      const { files, root } = await make();
      expect(await files.readLastLine(`${root}/none.jsonl`)).toBeUndefined();
      await files.writeText(`${root}/empty.jsonl`, '');
      expect(await files.readLastLine(`${root}/empty.jsonl`)).toBeUndefined();
      await files.writeText(`${root}/torn.jsonl`, '{"n":');
      expect(await files.readLastLine(`${root}/torn.jsonl`)).toBeUndefined();
    });

    it('reads byte ranges of a file, shorter at its end, and sees what is appended', async () => {
      const { files, root } = await make();
      expect(await files.openRange(`${root}/none`)).toBeUndefined();
      await files.writeText(`${root}/r`, 'héllo');
      const reader = await files.openRange(`${root}/r`);
      if (reader === undefined) throw new Error('expected a reader');
      try {
        expect(await reader.size()).toBe(6);
        expect((await reader.read(1, 3)).toString('utf8')).toBe('é');
        expect((await reader.read(4, 99)).toString('utf8')).toBe('lo');
        expect((await reader.read(6, 6)).length).toBe(0);
      } finally {
        await reader.close();
      }
    });

    it('gives a file its byte size and a modification time, nothing for a missing one', async () => {
      const { files, root } = await make();
      expect(await files.stat(`${root}/s`)).toBeUndefined();
      const before = Date.now();
      await files.writeText(`${root}/s`, 'ab✓');
      const stat = await files.stat(`${root}/s`);
      expect(stat?.size).toBe(5);
      // File systems round times; a second's slack tells a real time from zero or garbage.
      expect(stat?.mtimeMs).toBeGreaterThan(before - 1000);
      await files.appendJsonLine(`${root}/s2`, 1);
      expect((await files.stat(`${root}/s2`))?.size).toBe(2);
    });

    it('lists a directory sorted, and nothing for a missing directory or a file', async () => {
      const { files, root } = await make();
      await files.writeText(`${root}/d/b`, '');
      await files.writeText(`${root}/d/a/deep`, '');
      await files.mkdir(`${root}/d/c`);
      expect(await files.list(`${root}/d`)).toEqual(['a', 'b', 'c']);
      expect(await files.list(`${root}/d/c`)).toEqual([]);
      expect(await files.list(`${root}/nowhere`)).toBeUndefined();
      expect(await files.list(`${root}/d/b`)).toBeUndefined();
    });

    it('makes directories idempotently', async () => {
      const { files, root } = await make();
      await files.mkdir(`${root}/m/n`);
      await files.mkdir(`${root}/m/n`);
      expect(await files.exists(`${root}/m/n`)).toBe(true);
      expect(await files.list(`${root}/m`)).toEqual(['n']);
    });

    it('renames a file, and a directory with everything in it', async () => {
      const { files, root } = await make();
      await files.writeText(`${root}/a.md`, 'A');
      await files.rename(`${root}/a.md`, `${root}/b.md`);
      expect(await files.exists(`${root}/a.md`)).toBe(false);
      expect(await files.readIfExists(`${root}/b.md`)).toBe('A');

      await files.writeText(`${root}/dir/x/y.txt`, 'Y');
      await files.mkdir(`${root}/archive`);
      await files.rename(`${root}/dir`, `${root}/archive/dir`);
      expect(await files.exists(`${root}/dir`)).toBe(false);
      expect(await files.readIfExists(`${root}/archive/dir/x/y.txt`)).toBe('Y');
      expect(await files.list(`${root}/archive/dir`)).toEqual(['x']);
    });

    it('refuses to rename what does not exist, and changes nothing', async () => {
      const { files, root } = await make();
      await expect(files.rename(`${root}/missing`, `${root}/b`)).rejects.toMatchObject({ code: 'ENOENT' });
      expect(await files.list(root)).toEqual([]);
    });

    it('removes a file or a whole directory, and a missing path quietly', async () => {
      const { files, root } = await make();
      await files.writeText(`${root}/keep`, 'k');
      await files.writeText(`${root}/gone`, 'g');
      await files.writeText(`${root}/tree/a/b`, 'b');
      await files.remove(`${root}/gone`);
      await files.remove(`${root}/tree`);
      await files.remove(`${root}/never-was`);
      expect(await files.list(root)).toEqual(['keep']);
      expect(await files.exists(`${root}/tree/a/b`)).toBe(false);
    });

    it('refuses to read a directory as a file', async () => {
      const { files, root } = await make();
      await files.mkdir(`${root}/d`);
      await expect(files.readIfExists(`${root}/d`)).rejects.toMatchObject({ code: 'EISDIR' });
      await expect(files.scanLog(`${root}/d`, { needle: 'x' })).rejects.toMatchObject({ code: 'EISDIR' });
    });

    it('scans a log for the lines holding a needle, the first a test takes and the last ones, as it grows', async () => {
      const { files, root } = await make();
      const log = `${root}/runs/r.jsonl`;
      const query = { needle: '"end"', first: (line: string) => line.includes('"ts"'), last: 2 };
      expect(await files.scanLog(log, query)).toBeUndefined();
      await files.appendJsonLine(log, { type: 'start' });
      await files.appendJsonLine(log, { type: 'end', n: 1, ts: 1 });
      await files.appendJsonLine(log, { type: 'note', text: 'ünïcode "end" quoted' });
      expect(await files.scanLog(log, query)).toEqual({
        matches: ['{"type":"end","n":1,"ts":1}'],
        first: '{"type":"end","n":1,"ts":1}',
        last: ['{"type":"end","n":1,"ts":1}', '{"type":"note","text":"ünïcode \\"end\\" quoted"}'],
      });
      await files.appendJsonLine(log, { type: 'end', n: 2 });
      const grown = await files.scanLog(log, query);
      expect(grown?.matches).toEqual(['{"type":"end","n":1,"ts":1}', '{"type":"end","n":2}']);
      expect(grown?.last).toEqual([
        '{"type":"note","text":"ünïcode \\"end\\" quoted"}',
        '{"type":"end","n":2}',
      ]);
      await files.writeText(log, '{"type":"end","n":3}\n');
      expect((await files.scanLog(log, query))?.matches).toEqual(['{"type":"end","n":3}']);
    });
  });
}
