// `ralph-loop logs E | head`: when the reader goes away, stop quietly instead of crashing on EPIPE.
import { writeSync } from 'node:fs';

export function exitQuietlyOnClosedPipe(): void {
  for (const stream of [process.stdout, process.stderr]) {
    stream.on('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
      throw error;
    });
  }
}

/**
 * Writes all of `text` to the file descriptor `fd` (1: stdout) with blocking writes, for a command
 * that prints once and leaves. process.stdout is a stream: its first use loads Node's stream modules
 * (and, to a pipe, net), ~4 ms of every status. A reader that
 * went away (EPIPE) ends the writing quietly, as exitQuietlyOnClosedPipe does; a descriptor left
 * non-blocking by another process (EAGAIN) is waited on, a millisecond at a time.
 */
export function writeWholeToFd(fd: number, text: string): void {
  const bytes = Buffer.from(text, 'utf8');
  let written = 0;
  let pause: Int32Array | undefined;
  while (written < bytes.length) {
    try {
      written += writeSync(fd, bytes, written, bytes.length - written);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'EPIPE') return;
      if (code !== 'EAGAIN') throw error;
      pause ??= new Int32Array(new SharedArrayBuffer(4));
      Atomics.wait(pause, 0, 0, 1);
    }
  }
}
