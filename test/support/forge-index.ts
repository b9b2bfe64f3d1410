// A cheat for tests: rewrite a tracked file, then give its index entry the new file's stat data while
// keeping the old blob, written straight into `.git/index` as an agent with a shell could. Git trusts
// matching stat data, so `git status` and `git diff` then take the file for unchanged.
import { createHash } from 'node:crypto';
import { readFile, rename, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes `content` to `path` (relative to `dir`) and forges its entry in `dir/.git/index` (v2 or v3). */
export async function forgeIndexEntry(dir: string, path: string, content: string): Promise<void> {
  const file = join(dir, path);
  await writeFile(file, content);
  // Well before the index is written, so git does not take the entry for "racily clean" and look.
  const past = new Date(Date.now() - 60_000);
  await utimes(file, past, past);
  const st = await stat(file, { bigint: true });
  const indexPath = join(dir, '.git', 'index');
  const buf = await readFile(indexPath);
  if (buf.toString('ascii', 0, 4) !== 'DIRC') throw new Error('not a git index');
  const version = buf.readUInt32BE(4);
  if (version !== 2 && version !== 3) throw new Error(`index version ${version} not handled`);
  const u32 = (n: bigint) => Number(n & 0xffffffffn);
  const seconds = (ns: bigint) => u32(ns / 1_000_000_000n);
  const nanos = (ns: bigint) => u32(ns % 1_000_000_000n);
  let offset = 12;
  let found = false;
  for (let i = 0; i < buf.readUInt32BE(8); i++) {
    const extended = version >= 3 && (buf.readUInt16BE(offset + 60) & 0x4000) !== 0;
    const nameStart = offset + 62 + (extended ? 2 : 0);
    const nameEnd = buf.indexOf(0, nameStart);
    if (buf.toString('utf8', nameStart, nameEnd) === path) {
      const fields = [
        seconds(st.ctimeNs),
        nanos(st.ctimeNs),
        seconds(st.mtimeNs),
        nanos(st.mtimeNs),
        u32(st.dev),
        u32(st.ino),
      ];
      fields.forEach((value, k) => buf.writeUInt32BE(value, offset + 4 * k));
      buf.writeUInt32BE(u32(st.uid), offset + 28);
      buf.writeUInt32BE(u32(st.gid), offset + 32);
      buf.writeUInt32BE(u32(st.size), offset + 36);
      found = true;
    }
    // An entry is padded with 1 to 8 NULs to a multiple of 8 bytes.
    offset += (nameEnd - offset + 8) & ~7;
  }
  if (!found) throw new Error(`${path} is not in the index`);
  createHash('sha1')
    .update(buf.subarray(0, buf.length - 20))
    .digest()
    .copy(buf, buf.length - 20);
  await writeFile(`${indexPath}.forged`, buf);
  await rename(`${indexPath}.forged`, indexPath);
}
