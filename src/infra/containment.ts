// Runs an agent, and whatever runs an agent's work (gates, metric commands), in a PID namespace of its
// own, so that nothing it starts can outlive it.
//
// The sweep (process.ts) finds what an agent leaves running by the mark in its environment; a process
// started with `setsid env -i …` carries no mark and no group, and used to outlive its bead, free to
// rewrite the tree while the next bead's metric ran. In a PID namespace, when the namespace's process
// 1 exits the kernel kills every process left in it, however it was started. util-linux's `unshare`
// sets it up: `--fork` starts process 1 (a shell that runs the agent, see INIT_SCRIPT), `--kill-child`
// ends it when unshare itself is killed (the runner's SIGKILL of the group), `--mount-proc` gives the
// namespace a /proc that shows its own pids, so a `ps` or `kill` inside agrees with what its children
// report. Where namespaces are not allowed (no unshare, Docker's default seccomp profile, Ubuntu's
// AppArmor restriction on user namespaces, macOS) the agent runs as before and the sweep is the only
// guard; `containmentStatus()` says which.
import { findExecutable } from './executables.js';
import type { Command } from './process.js';
import { runShortProcess } from './short-process.js';

/**
 * Set to `off` in the runner's environment to run agents without a namespace of their own (the sweep
 * still runs). The runner process's own environment decides, not the agent's.
 */
export const CONTAINMENT_ENV = 'FORGE_CONTAINMENT';

export type Containment =
  { kind: 'pid-namespace'; unshare: string; flags: readonly string[] } | { kind: 'none'; why: string };

const NAMESPACE_FLAGS = ['--pid', '--fork', '--kill-child', '--mount', '--mount-proc'] as const;
/**
 * Without root, a user namespace mapped to the same uid and gid, so files and the agent CLIs see the
 * same user (`claude` refuses to skip permissions as root). `--map-current-user` is util-linux 2.38;
 * 2.36 and 2.37 (Debian 11, Ubuntu 22.04) spell it `--map-user=UID --map-group=GID`.
 */
function userFlagSets(): string[][] {
  const uid = process.getuid?.() ?? 0;
  const gid = process.getgid?.() ?? 0;
  return [
    ['--user', '--map-current-user'],
    ['--user', `--map-user=${uid}`, `--map-group=${gid}`],
  ];
}

/**
 * Process 1 of the namespace: a shell that runs the agent as its child and exits with its status.
 * The agent must not be process 1 itself: process 1 ignores every signal it has no handler for, so the
 * runner's SIGTERM (a timeout, a stop) would not reach an agent that never installed one. `; exit $?`
 * keeps a shell from exec'ing the command in its own place. An agent killed by a signal is then
 * reported by the shell as exit 128+N.
 */
const INIT_SCRIPT = '"$@"; exit $?';

let probed: Promise<Containment> | undefined;

/** What agents run in on this machine, probed once per process (a `true` run under each candidate). */
export function containmentStatus(env: NodeJS.ProcessEnv = process.env): Promise<Containment> {
  if (env[CONTAINMENT_ENV] === 'off') {
    return Promise.resolve({ kind: 'none', why: `${CONTAINMENT_ENV}=off` });
  }
  probed ??= probe();
  return probed;
}

/** Forget the probe (tests). */
export function resetContainmentProbe(): void {
  probed = undefined;
}

async function probe(): Promise<Containment> {
  if (process.platform !== 'linux') return { kind: 'none', why: 'PID namespaces are Linux only' };
  const unshare = await findExecutable('unshare', '/usr/bin:/bin:/usr/sbin:/sbin', '/');
  if (unshare === undefined) return { kind: 'none', why: 'util-linux `unshare` was not found' };
  const root = process.getuid?.() === 0;
  const withUser = userFlagSets().map((user) => [...user, ...NAMESPACE_FLAGS]);
  const candidates = root ? [[...NAMESPACE_FLAGS], ...withUser] : withUser;
  let last = '';
  for (const flags of candidates) {
    const failure = await tryRun(unshare, [...flags, 'true']);
    if (failure === undefined) return { kind: 'pid-namespace', unshare, flags };
    last = failure;
  }
  return { kind: 'none', why: `\`unshare\` could not make a PID namespace here (${last})` };
}

/** Undefined when `file args` exited 0; otherwise what it said. */
async function tryRun(file: string, args: string[]): Promise<string | undefined> {
  const ran = await runShortProcess(
    { file, args },
    { cwd: '/', env: { PATH: '/usr/bin:/bin' }, timeoutMs: 5000, maxBufferChars: 400 },
  );
  if (ran.exitCode === 0) return undefined;
  return (
    ran.spawnError ??
    (ran.stderr.trim().split('\n').at(-1) || `exit ${ran.exitCode ?? ran.signal ?? 'unknown'}`)
  );
}

/**
 * `command` run inside a PID namespace of its own when this machine allows one. A command that is not
 * an executable on the child's PATH is left as it is, so that starting it fails the way it always did
 * (ENOENT, EACCES) rather than as unshare's exit code.
 */
export async function containCommand(
  command: Command,
  env: NodeJS.ProcessEnv,
  cwd: string,
): Promise<{ command: Command; contained: boolean }> {
  const containment = await containmentStatus();
  if (containment.kind === 'none') return { command, contained: false };
  const file = await findExecutable(command.file, env.PATH ?? '', cwd);
  if (file === undefined) return { command, contained: false };
  return {
    command: {
      file: containment.unshare,
      args: [
        ...containment.flags,
        '--',
        '/bin/sh',
        '-c',
        INIT_SCRIPT,
        'forge-contained',
        file,
        ...command.args,
      ],
    },
    contained: true,
  };
}
