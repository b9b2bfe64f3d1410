// Typed application errors and the exit codes both programs use.
import { statSync, type Stats } from 'node:fs';
import { dirname } from 'node:path';
import type { FieldProblem } from './zod-issues.js';

export const ExitCode = {
  ok: 0,
  failure: 1,
  usage: 2,
  environment: 3,
  config: 4,
  beadFailed: 5,
  needsHuman: 6,
  stalled: 7,
  locked: 8,
  auth: 9,
  interrupted: 130,
} as const;
export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode];

export interface AppErrorOptions {
  exitCode?: ExitCodeValue | undefined;
  hint?: string | undefined;
  cause?: unknown;
}

/** An expected failure: one sentence for the user, an optional hint saying what to do, an exit code. */
export class AppError extends Error {
  readonly exitCode: ExitCodeValue;
  readonly hint: string | undefined;

  constructor(message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.exitCode = options.exitCode ?? ExitCode.failure;
    this.hint = options.hint;
  }
}

export class UsageError extends AppError {
  constructor(message: string, options: Omit<AppErrorOptions, 'exitCode'> = {}) {
    super(message, { ...options, exitCode: ExitCode.usage });
    this.name = 'UsageError';
  }
}

export class ConfigError extends AppError {
  /** The fields at fault, when the error came from validating a document: read these, not the message. */
  readonly problems: readonly FieldProblem[] | undefined;

  constructor(
    message: string,
    options: Omit<AppErrorOptions, 'exitCode'> & { problems?: readonly FieldProblem[] } = {},
  ) {
    super(message, { ...options, exitCode: ExitCode.config });
    this.name = 'ConfigError';
    this.problems = options.problems;
  }
}

/** Something outside Forge is missing or broken: br, an agent binary, git, a repo. */
export class EnvironmentError extends AppError {
  constructor(message: string, options: Omit<AppErrorOptions, 'exitCode'> = {}) {
    super(message, { ...options, exitCode: ExitCode.environment });
    this.name = 'EnvironmentError';
  }
}

/** An error reported by a bead store; carries br's machine-readable code when there is one. */
export class BeadStoreError extends AppError {
  readonly code: string;
  readonly retryable: boolean;

  constructor(
    message: string,
    options: AppErrorOptions & { code: string; retryable?: boolean } = { code: 'UNKNOWN' },
  ) {
    super(message, { exitCode: ExitCode.environment, ...options });
    this.name = 'BeadStoreError';
    this.code = options.code;
    this.retryable = options.retryable ?? false;
  }
}

/** `error` and the errors it was caused by, outermost first (five deep at most: a cycle ends there too). */
export function causeChain(error: unknown): Error[] {
  const chain: Error[] = [];
  for (let current = error; current instanceof Error && chain.length < 5; current = current.cause) {
    chain.push(current);
  }
  return chain;
}

/**
 * What to say when a file Forge writes is read-only or not its to write (EROFS, EPERM, EACCES with the
 * path the system names) somewhere in `error`'s chain, else undefined (seen: the store made immutable
 * with `chattr +i` mid-run ended in "unexpected error", exit 1).
 */
export function readOnlyFault(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    const { code, path, syscall } = current as NodeJS.ErrnoException;
    if ((code === 'EROFS' || code === 'EPERM' || code === 'EACCES') && path !== undefined) {
      const why =
        code === 'EROFS' ? 'on a read-only file system' : 'not writable by this user (or immutable)';
      return `Could not ${syscall ?? 'write'} ${path}: it is ${why} (${code})`;
    }
  }
  return undefined;
}

/**
 * What to say when the disk (or the quota) is full somewhere in `error`'s chain, else undefined: by the
 * error's code, or by the words a child process (git, br) printed for it.
 */
export function diskFullFault(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    const { code, path } = current as NodeJS.ErrnoException;
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      const what = code === 'ENOSPC' ? 'The disk is full' : 'The disk quota is used up';
      return `${what} (${code}${path === undefined ? '' : ` writing ${path}`})`;
    }
    // Git words it its own way too: "sha1 file … write error. Out of diskspace".
    if (/no space left on device|disk quota exceeded|out of diskspace/i.test(current.message)) {
      return `The disk is full (${current.message.trim().split('\n')[0] ?? ''})`;
    }
  }
  return undefined;
}

/** What is at a path, in words, for a path-shape fault; undefined when nothing is there. */
function kindAt(path: string): { folder: boolean; words: string } | undefined {
  let info: Stats;
  try {
    info = statSync(path);
  } catch {
    return undefined;
  }
  return { folder: info.isDirectory(), words: kindWords(info) };
}

/** What a path's stat says is there, in words: "a folder", "a FIFO (named pipe)", … */
export function kindWords(info: Pick<Stats, 'isDirectory' | 'isFIFO' | 'isSocket' | 'isFile'>): string {
  if (info.isDirectory()) return 'a folder';
  if (info.isFIFO()) return 'a FIFO (named pipe)';
  if (info.isSocket()) return 'a socket';
  return info.isFile() ? 'a file' : 'a device or other special file';
}

/**
 * What to say when a path Forge makes has the wrong kind of thing in its way, somewhere in `error`'s
 * chain (ENOTDIR, EEXIST from mkdir, EISDIR), else undefined: a file where `.forge/` or `.beads/` (or a
 * folder under them) goes, or a folder where a file goes. Seen: an agent's `touch .forge/epics`, after
 * which every run ended in "unexpected error: ENOTDIR", exit 1.
 */
export function pathShapeFault(error: unknown): string | undefined {
  for (const current of causeChain(error)) {
    const { code, path, syscall } = current as NodeJS.ErrnoException;
    if (path === undefined) continue;
    if (code === 'ENOTDIR') {
      // The first folder on the way that is not one.
      for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
        const found = kindAt(dir);
        if (found !== undefined && !found.folder)
          return `Could not ${syscall ?? 'open'} ${path}: ${dir} is ${found.words}, where a folder must be (ENOTDIR)`;
      }
      return `Could not ${syscall ?? 'open'} ${path}: a part of it is not a folder (ENOTDIR)`;
    }
    if (code === 'EEXIST' && syscall === 'mkdir') {
      const found = kindAt(path);
      if (found !== undefined && !found.folder)
        return `Could not make the folder ${path}: ${found.words} is there (EEXIST)`;
    }
    if (code === 'EISDIR')
      return `Could not ${syscall ?? 'open'} ${path}: it is a folder, where a file must be (EISDIR)`;
  }
  return undefined;
}
