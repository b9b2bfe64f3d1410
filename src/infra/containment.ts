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
import { constants } from 'node:os';
import { EnvironmentError, UsageError } from './errors.js';
import { findExecutable } from './executables.js';
import type { Command } from './process.js';
import { runShortProcess } from './short-process.js';

/**
 * The runner's setting, in its own environment (the agent's cannot change it): `auto` (the default)
 * contains agents where the machine allows it, `off` never, `required` refuses to run without it.
 */
export const CONTAINMENT_ENV = 'FORGE_CONTAINMENT';

export type ContainmentSetting = 'off' | 'auto' | 'required';

export type Containment =
  { kind: 'pid-namespace'; unshare: string; flags: readonly string[] } | { kind: 'none'; why: string };

const PID_FLAGS = ['--pid', '--fork', '--kill-child'] as const;
/**
 * System V IPC of the namespace's own: a shared-memory segment or semaphore outlives every process (seen:
 * a doer's `ipcmk -M` segment read by the artifact as the judge measured it, a flag no commit holds);
 * the namespace's go with it.
 */
const IPC_FLAGS = ['--ipc'] as const;
/** A /proc of the namespace's own; refused where the host's /proc has masked entries (Docker, Podman). */
const PROC_FLAGS = ['--mount', '--mount-proc'] as const;
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
  const setting = containmentSetting(env);
  if (setting === undefined) {
    const why = `${CONTAINMENT_ENV}=${env[CONTAINMENT_ENV] ?? ''} is not a setting (off, auto or required)`;
    return Promise.resolve({ kind: 'none', why });
  }
  if (setting === 'off') return Promise.resolve({ kind: 'none', why: `${CONTAINMENT_ENV}=off` });
  probed ??= probe();
  return probed;
}

/** The setting in `env`; undefined when it is not one of the three. */
export function containmentSetting(env: NodeJS.ProcessEnv = process.env): ContainmentSetting | undefined {
  const value = env[CONTAINMENT_ENV];
  if (value === undefined || value === '' || value === 'auto') return 'auto';
  return value === 'off' || value === 'required' ? value : undefined;
}

/**
 * Before a run starts any agent: a setting that is not one is a usage error, and `required` on a
 * machine that cannot make a namespace stops the run before anything is claimed.
 */
export async function refuseUncontainedRun(
  env: NodeJS.ProcessEnv = process.env,
  status: (env: NodeJS.ProcessEnv) => Promise<Containment> = containmentStatus,
): Promise<void> {
  const setting = containmentSetting(env);
  if (setting === undefined) {
    throw new UsageError(
      `${CONTAINMENT_ENV}=${env[CONTAINMENT_ENV] ?? ''} is not a setting: use off, auto (the default) or required.`,
    );
  }
  if (setting !== 'required') return;
  const found = await status(env);
  if (found.kind === 'pid-namespace') return;
  throw new EnvironmentError(
    `${CONTAINMENT_ENV}=required, and agents cannot get a PID namespace here: ${found.why}.`,
    {
      hint: '`forge-pack doctor` says how to allow one; FORGE_CONTAINMENT=auto runs agents with the sweep alone.',
    },
  );
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
  const candidates = containmentCandidates(root);
  let last = '';
  for (const flags of candidates) {
    const failure = await tryRun(unshare, [...flags, 'true']);
    if (failure === undefined) return { kind: 'pid-namespace', unshare, flags };
    last = failure;
  }
  return { kind: 'none', why: `\`unshare\` could not make a PID namespace here (${last})` };
}

/**
 * The flag sets to try, best first: as root without a user namespace; each with a /proc of its own,
 * then without one (the namespace still ends everything in it; only `ps` inside shows the host's pids).
 */
export function containmentCandidates(root: boolean): string[][] {
  const users = [...(root ? [[]] : []), ...userFlagSets()];
  return users.flatMap((user) => [
    [...user, ...PID_FLAGS, ...IPC_FLAGS, ...PROC_FLAGS],
    [...user, ...PID_FLAGS, ...IPC_FLAGS],
    [...user, ...PID_FLAGS, ...PROC_FLAGS],
    [...user, ...PID_FLAGS],
  ]);
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

/** Signal numbers to names (SIGKILL is 9 on Linux); SIGIOT and SIGPOLL share a number with another name. */
const SIGNAL_NAMES = new Map<number, NodeJS.Signals>(
  (Object.entries(constants.signals) as [NodeJS.Signals, number][])
    .filter(([name]) => name !== 'SIGIOT' && name !== 'SIGPOLL' && name !== 'SIGUNUSED')
    .map(([name, number]) => [number, name]),
);

/**
 * The signal that ended a contained command, from the exit code its process 1 reported. The shell that
 * runs the command (INIT_SCRIPT) can only say "exit 128+N" for a command killed by signal N, so an OOM
 * kill or a `kill -9` mid-run would read as an ordinary failing exit, and a metric's half-printed
 * output would be scored as if the command had finished; uncontained, the same death is a signal.
 * A command that itself exits with 129–192 is read as that signal too (shells use the same convention).
 */
export function signalOfContainedExit(exitCode: number | undefined): NodeJS.Signals | undefined {
  if (exitCode === undefined || exitCode <= 128) return undefined;
  return SIGNAL_NAMES.get(exitCode - 128);
}
