// A spawn that fails for want of file descriptors (EMFILE, ENFILE: a low `ulimit -n`, a machine out
// of them) is one Node reports differently from every other: it returns before it sets the child's
// pipes up, and emits the error a tick later. execa reads those pipes at once and throws a TypeError
// ("subprocess.stdio is not iterable") before it listens for anything, so the error event found no
// listener and ended the whole runner with a stack trace, mid-bead (seen: `ulimit -n 26`). Every child
// this process starts is watched for that case here: the event is taken, and the failure is kept for
// the caller, which reports it as the spawn error it is.
import { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { getSystemErrorName } from 'node:util';

const OUT_OF_DESCRIPTORS = new Set([-constants.errno.EMFILE, -constants.errno.ENFILE]);

type SpawnMethod = (this: ChildProcess, options: { file?: string }) => unknown;

/** The last spawn that failed for want of descriptors, until a caller takes it. */
let failed: { file: string; code: string } | undefined;
let installed = false;

/** Watches every child this process starts for a spawn that fails for want of descriptors. Idempotent. */
export function watchSpawnFailures(): void {
  if (installed) return;
  installed = true;
  const prototype = ChildProcess.prototype as unknown as { spawn: SpawnMethod };
  const original = prototype.spawn;
  // A method of Node's own prototype: what every spawn of this process goes through, execa's too.
  Object.defineProperty(prototype, 'spawn', {
    configurable: true,
    writable: true,
    value: function spawn(this: ChildProcess, options: { file?: string }): unknown {
      const code = original.call(this, options);
      if (typeof code === 'number' && OUT_OF_DESCRIPTORS.has(code)) {
        failed = { file: options.file ?? 'a program', code: getSystemErrorName(code) };
        this.on('error', () => undefined);
      }
      return code;
    },
  });
}

/**
 * The spawn failure the last call left, taken (undefined when there is none): for a caller whose spawn
 * threw, to say why. Its message names the program and the remedy.
 */
export function takeSpawnFailure(): string | undefined {
  const found = failed;
  failed = undefined;
  if (found === undefined) return undefined;
  return `spawn ${found.file} ${found.code}: ${REMEDY}`;
}

const REMEDY = 'this process is out of file descriptors (raise its limit: ulimit -n)';

/**
 * A spawn's error event as a sentence: one for want of descriptors says so, and what to do; an ENOENT
 * whose program is there but whose folder `cwd` is not (Node names the program either way) names the folder.
 */
export function spawnErrorText(error: NodeJS.ErrnoException, cwd?: string): string {
  if (error.code === 'EMFILE' || error.code === 'ENFILE') return `${error.message}: ${REMEDY}`;
  if (error.code === 'ENOENT' && cwd !== undefined && !existsSync(cwd))
    return `${error.message}: the folder it was to run in is gone (${cwd})`;
  return error.message;
}
