// Where a command is on the test's PATH, as a shell finds it.
import { execFileSync } from 'node:child_process';

/**
 * `command -v <name>` through sh, with stdin closed. Not `bash -c` with Node's default stdin: Node's
 * pipes are sockets, and bash given `-c`, a socket for stdin and no SHLVL takes itself for an ssh
 * session and sources ~/.bashrc (on this machine `pyenv init`, which rehashes the shims every loop in
 * the suite watches on PATH: a tamper none of them made).
 */
export function commandPath(name: string): string {
  return execFileSync('sh', ['-c', 'command -v "$1"', 'sh', name], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  }).trim();
}
