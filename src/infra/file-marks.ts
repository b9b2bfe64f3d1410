// A file too large to copy into git is saved as a mark of what it is instead: its size, times and inode.
// Seen: a user's 500 MB untracked dataset beside a loop was hashed into .git before every agent step
// (the repository grew by 500 MB, each iteration took 9 s longer), and a 50 GB one would have filled
// the disk. A mark tells an untouched file from a changed one as a copy would; what it cannot do is
// put a changed one back, which the code that writes saved files says (NoCopyError).
import type { BigIntStats } from 'node:fs';
import { stat } from 'node:fs/promises';
import { EnvironmentError } from './errors.js';
import { DEFAULT_MAX_FILE_BYTES, formatSize } from './size-limits.js';

/** Files larger than this are saved as a mark, never copied into git's store. */
export const SAVED_MAX_BYTES = DEFAULT_MAX_FILE_BYTES;

const PREFIX = 'mark:';

/** The mark of a file as stat (bigint) saw it: equal while the file is untouched. */
export function markOf(info: BigIntStats): string {
  return `${PREFIX}${info.size}:${info.mtimeNs}:${info.ctimeNs}:${info.ino}`;
}

/** Whether a saved file's `blob` is a mark rather than an object of git's. */
export function isMark(blob: string | null | undefined): blob is string {
  return blob?.startsWith(PREFIX) === true;
}

/**
 * The mark of the file at `path` now (through a link, as saveFiles reads it); undefined when it is gone
 * or no longer a regular file.
 */
export async function markNow(path: string): Promise<string | undefined> {
  const info = await stat(path, { bigint: true }).catch(() => undefined);
  return info?.isFile() === true ? markOf(info) : undefined;
}

/** Files changed since they were saved as marks: there is no copy to put back. */
export class NoCopyError extends EnvironmentError {
  readonly paths: string[];

  constructor(paths: readonly string[]) {
    const one = paths.length === 1;
    super(
      `${paths.join(', ')} changed while a step ran (an agent, or the metric command), and Forge holds no copy of ${one ? 'it' : 'them'} to put back: over ${formatSize(SAVED_MAX_BYTES)}, ${one ? 'it is' : 'they are'} never copied into git.`,
      {
        hint: `Check ${one ? 'it' : 'them'} (yours, uncommitted); bring ${one ? 'it' : 'them'} back from where you keep ${one ? 'it' : 'them'} if need be, then run again.`,
      },
    );
    this.name = 'NoCopyError';
    this.paths = [...paths];
  }
}
