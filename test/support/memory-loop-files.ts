// LoopFiles in memory, for tests that only need a loop's state and no real tree: the same contract as
// the disk implementation (test/infra/loop-files.contract.ts runs against both), no temp directories.
import { dirname, posix, resolve } from 'node:path';
import { scanLogText } from '../../src/infra/log-scan.js';
import type { FileStat, LoopFiles, RangeReader } from '../../src/infra/loop-files.js';

export interface MemoryLoopFiles extends LoopFiles {
  /** Every file held, as sorted absolute paths (directories are implied or made by mkdir). */
  paths(): string[];
}

/** An fs-like error (`code` ENOENT, EEXIST, …) so callers' not-found checks work as on disk. */
function fsError(code: string, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

export function createMemoryLoopFiles(options: { now?: () => number } = {}): MemoryLoopFiles {
  const now = options.now ?? (() => Date.now());
  const files = new Map<string, { bytes: Buffer; mtimeMs: number }>();
  const dirs = new Set<string>(['/']);

  const norm = (path: string) => resolve(path);
  const under = (dir: string, path: string) => path.startsWith(dir === '/' ? '/' : `${dir}/`);
  const isDir = (path: string) => dirs.has(path);
  const makeDirs = (path: string) => {
    for (let dir = path; !dirs.has(dir); dir = dirname(dir)) {
      if (files.has(dir)) throw fsError('EEXIST', `${dir} is a file`);
      dirs.add(dir);
    }
  };
  const put = (path: string, bytes: Buffer) => {
    if (isDir(path)) throw fsError('EISDIR', path);
    makeDirs(dirname(path));
    files.set(path, { bytes, mtimeMs: now() });
  };
  const text = (path: string) => files.get(path)?.bytes.toString('utf8');

  const writeText = async (path: string, content: string) => {
    const target = norm(path);
    const bytes = Buffer.from(content, 'utf8');
    // Visible only once whole, as the disk's rename makes it: a reader in between sees the old text.
    await Promise.resolve();
    put(target, bytes);
  };

  return {
    locate: (path) => ({ store: files, path: norm(path) }),
    async readIfExists(path) {
      const target = norm(path);
      if (isDir(target)) throw fsError('EISDIR', target);
      return text(target);
    },
    async scanLog(path, query) {
      const target = norm(path);
      if (isDir(target)) throw fsError('EISDIR', target);
      const content = text(target);
      return content === undefined ? undefined : scanLogText(content, query);
    },
    writeText,
    writeJson: (path, value) => writeText(path, `${JSON.stringify(value, null, 2)}\n`),
    async appendJsonLine(path, value) {
      const target = norm(path);
      const line = `${JSON.stringify(value)}\n`;
      const existing = text(target) ?? '';
      if (existing === '' || existing.endsWith('\n')) {
        put(target, Buffer.from(existing + line, 'utf8'));
        return;
      }
      const cut = existing.lastIndexOf('\n') + 1;
      const tail = existing.slice(cut);
      const kept = isCompleteJson(tail) ? `${existing}\n` : existing.slice(0, cut);
      await writeText(target, kept + line);
    },
    async readLastLine(path) {
      const content = text(norm(path));
      if (content === undefined) return undefined;
      const lines = content.split('\n');
      const tail = lines.pop() ?? '';
      if (tail.trim() !== '' && isCompleteJson(tail)) return tail;
      return lines.reverse().find((line) => line.trim() !== '');
    },
    async openRange(path) {
      const target = norm(path);
      if (!files.has(target)) return undefined;
      const bytes = () => files.get(target)?.bytes ?? Buffer.alloc(0);
      const reader: RangeReader = {
        size: async () => bytes().length,
        read: async (from, to) => Buffer.from(bytes().subarray(from, Math.max(from, to))),
        close: async () => undefined,
      };
      return reader;
    },
    async stat(path): Promise<FileStat | undefined> {
      const entry = files.get(norm(path));
      return entry === undefined ? undefined : { size: entry.bytes.length, mtimeMs: entry.mtimeMs };
    },
    async exists(path) {
      const target = norm(path);
      return files.has(target) || isDir(target);
    },
    async list(path) {
      const dir = norm(path);
      if (!isDir(dir)) return undefined;
      const names = new Set<string>();
      for (const entry of [...files.keys(), ...dirs]) {
        if (entry !== dir && under(dir, entry)) {
          names.add(posix.relative(dir, entry).split('/')[0] ?? '');
        }
      }
      return [...names].sort();
    },
    async mkdir(path) {
      makeDirs(norm(path));
    },
    async rename(from, to) {
      const source = norm(from);
      const target = norm(to);
      if (!isDir(dirname(target))) throw fsError('ENOENT', `no directory for ${target}`);
      const file = files.get(source);
      if (file !== undefined) {
        if (isDir(target)) throw fsError('EISDIR', target);
        files.delete(source);
        files.set(target, file);
        return;
      }
      if (!isDir(source)) throw fsError('ENOENT', source);
      if (files.has(target)) throw fsError('ENOTDIR', target);
      if ([...files.keys(), ...dirs].some((path) => under(target, path))) {
        throw fsError('ENOTEMPTY', target);
      }
      const moved = (path: string) => target + path.slice(source.length);
      for (const [path, entry] of [...files]) {
        if (under(source, path)) {
          files.delete(path);
          files.set(moved(path), entry);
        }
      }
      for (const dir of [...dirs]) {
        if (dir === source || under(source, dir)) {
          dirs.delete(dir);
          dirs.add(moved(dir));
        }
      }
    },
    async remove(path) {
      const target = norm(path);
      files.delete(target);
      if (target === '/') return;
      for (const file of [...files.keys()]) if (under(target, file)) files.delete(file);
      for (const dir of [...dirs]) if (dir === target || under(target, dir)) dirs.delete(dir);
    },
    paths: () => [...files.keys()].sort(),
  };
}

function isCompleteJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
