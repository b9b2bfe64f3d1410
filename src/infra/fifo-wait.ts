// Whether a child process sleeps opening a FIFO (a named pipe) that no process writes, and which one.
//
// Git opens what it reads with a plain open(): `.gitignore` and `.gitattributes` in the tree,
// `.git/info/exclude`, its config, its index and refs. A FIFO at any of those paths (`mkfifo
// src/.gitignore`, one line of an agent's shell) makes that open wait for a writer that never comes, and
// every later git call of the runner with it: the runner hung for good, in git status, after one doer
// (seen). On Linux the kernel says where a process sleeps: `wait_for_partner` in /proc/<pid>/wchan is
// an open of a FIFO waiting for its other end, and /proc/<pid>/syscall names the call and the address of
// the path, read from the child's memory (a parent may read its child's).
import { closeSync, openSync, readlinkSync, readFileSync, readSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { AppError, ExitCode } from './errors.js';

/** Where the kernel puts a process that opens a FIFO and waits for the other end. */
const FIFO_WAIT = 'wait_for_partner';
/** openat's number, by architecture (the path is its second argument), and open's (its first). */
const OPENAT: Partial<Record<NodeJS.Architecture, number>> = { x64: 257, arm64: 56 };
const OPEN: Partial<Record<NodeJS.Architecture, number>> = { x64: 2 };
/** openat's `dirfd` for "the current directory", as /proc prints it (32 or 64 bits). */
const AT_FDCWD = new Set(['0xffffff9c', '0xffffffffffffff9c']);

export interface FifoWait {
  /** The FIFO's absolute path, when the child's memory could be read; undefined otherwise. */
  path: string | undefined;
}

/** `pid`'s FIFO wait when it is in one (Linux), else undefined; never throws. */
export function fifoWaitOf(pid: number): FifoWait | undefined {
  if (process.platform !== 'linux') return undefined;
  let wchan: string;
  try {
    wchan = readFileSync(`/proc/${pid}/wchan`, 'utf8').trim();
  } catch {
    return undefined;
  }
  if (wchan !== FIFO_WAIT) return undefined;
  return { path: openedPath(pid) };
}

/** The path `pid` is opening, from its syscall and memory; undefined when either cannot be read. */
function openedPath(pid: number): string | undefined {
  try {
    const [nr, ...args] = readFileSync(`/proc/${pid}/syscall`, 'utf8').trim().split(' ');
    const number = Number(nr);
    let dir: string | undefined;
    let pointer: string | undefined;
    if (number === OPENAT[process.arch]) {
      const dirfd = args[0] ?? '';
      dir = AT_FDCWD.has(dirfd)
        ? readlinkSync(`/proc/${pid}/cwd`)
        : readlinkSync(`/proc/${pid}/fd/${Number(dirfd)}`);
      pointer = args[1];
    } else if (number === OPEN[process.arch]) {
      dir = readlinkSync(`/proc/${pid}/cwd`);
      pointer = args[0];
    }
    if (dir === undefined || pointer === undefined) return undefined;
    const path = readCString(pid, Number(pointer));
    if (path === undefined || path === '') return undefined;
    return isAbsolute(path) ? path : join(dir, path);
  } catch {
    return undefined;
  }
}

/** The NUL-ended string at `address` in `pid`'s memory (at most PATH_MAX, 4 KiB). */
function readCString(pid: number, address: number): string | undefined {
  if (!Number.isSafeInteger(address) || address <= 0) return undefined;
  const fd = openSync(`/proc/${pid}/mem`, 'r');
  try {
    // The rest of the page first: the next one may not be mapped, and a read across it fails whole.
    const bytes = Buffer.alloc(4096);
    const first = 4096 - (address % 4096);
    let read = readSync(fd, bytes, 0, first, address);
    let end = bytes.subarray(0, read).indexOf(0);
    if (end < 0 && read === first && first < bytes.length) {
      read += readSync(fd, bytes, first, bytes.length - first, address + first);
      end = bytes.subarray(0, read).indexOf(0);
    }
    return end < 0 ? undefined : bytes.toString('utf8', 0, end);
  } finally {
    closeSync(fd);
  }
}

/**
 * A command (git, br) stopped while it waited on a FIFO where it reads a file: said as an environment
 * fault that names the FIFO, for the user to remove; the run stops there rather than wait for ever.
 */
export function fifoError(what: string, cwd: string, wait: FifoWait): AppError {
  const where = wait.path ?? `a file under ${cwd}`;
  return new AppError(
    `${what} waited on ${where}, a FIFO (named pipe) that nothing writes, so it was stopped: it would have waited for ever.`,
    {
      exitCode: ExitCode.environment,
      hint: `Forge never makes one there: an agent did, or someone else. Remove it (${wait.path === undefined ? 'find it with: find . -type p' : `rm ${wait.path}`}) and run again.`,
    },
  );
}

/**
 * What took a FIFO's place (git-fifo.ts): nothing (`removed`: one in the tree, where git reads its
 * settings; `removed from git`: one in git's own folders; `none before`: where this process last found
 * no file), the file as this process last read it (`put back`: HEAD, its branch, the config), or the
 * index of HEAD (`rebuilt`).
 */
export type FifoRemedy = 'removed' | 'removed from git' | 'put back' | 'none before' | 'rebuilt';

/** What the run's log says of a FIFO taken away. */
export function fifoRemedyText(path: string, remedy: FifoRemedy): string {
  const held = 'every git call would have waited on it for ever';
  switch (remedy) {
    case 'put back':
      return `Put ${path} back as Forge last read it: a FIFO (named pipe) was there, and ${held}.`;
    case 'none before':
      return `Removed ${path}, a FIFO (named pipe) where git reads a file and Forge last found none: ${held}.`;
    case 'rebuilt':
      return `Rebuilt git's index ${path} from HEAD: a FIFO (named pipe) was there, and ${held}. The working tree's files are as they were; what was staged and not committed there is no longer staged.`;
    case 'removed from git':
      return `Removed ${path}, a FIFO (named pipe) in git's own folder: ${held}. Git makes none there; it now finds no file at that path, as if the file it replaced had been deleted.`;
    case 'removed':
      return `Removed ${path}, a FIFO (named pipe) where git reads its settings: ${held}. Git tracks no FIFO, so nothing of the tree's was lost.`;
  }
}

/** Who hears of a FIFO taken away (the runner, for its log): none, outside a run. */
const removedListeners = new Set<(path: string, remedy: FifoRemedy) => void>();

/** Calls `listener` with each FIFO taken away from now on; returns what stops it. */
export function onFifoRemoved(listener: (path: string, remedy: FifoRemedy) => void): () => void {
  removedListeners.add(listener);
  return () => removedListeners.delete(listener);
}

/** Says that the FIFO at `path` was taken away (git-command.ts, once it is gone), and what is there now. */
export function fifoRemoved(path: string, remedy: FifoRemedy = 'removed'): void {
  for (const listener of removedListeners) listener(path, remedy);
}
