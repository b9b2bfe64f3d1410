// Gates: the repo's checks (test, lint, build…) run after a code-writing bead; which ones, per bead.

/** A bead's `gates:` labels choose its gates: `gates:test` (one per label, or comma-joined), `gates:none`. */
export const GATES_LABEL_PREFIX = 'gates:';
/** The label value that turns every gate off for a bead. */
export const NO_GATES = 'none';

/** The gates a bead runs, in config order, or why its labels name none that can run. */
export type GateSelection = { gates: string[] } | { error: string };

/**
 * Which of the configured gates run for a bead with these labels. No `gates:` label: all of them.
 * `gates:none`: none. `gates:test` and `gates:lint` (or `gates:test,lint` where a store allows commas):
 * only those. A name that is not configured, or `none` beside a name, is an error for that bead.
 * Pure: labels are agent-written text, read only as names to look up, never as commands.
 */
export function gatesForBead(labels: readonly string[], configuredNames: readonly string[]): GateSelection {
  const named = labels
    .filter((label) => label.startsWith(GATES_LABEL_PREFIX))
    .flatMap((label) => label.slice(GATES_LABEL_PREFIX.length).split(','))
    .map((name) => name.trim());
  if (named.length === 0) return { gates: [...configuredNames] };
  if (named.includes(NO_GATES)) {
    const others = named.filter((name) => name !== NO_GATES);
    if (others.length === 0) return { gates: [] };
    return {
      error: `the bead's labels say both gates:none and gates:${others.join(',')}; remove one of them`,
    };
  }
  const empty = named.some((name) => name === '');
  const unknown = [...new Set(named.filter((name) => name !== '' && !configuredNames.includes(name)))];
  if (empty || unknown.length > 0) {
    const what =
      unknown.length > 0
        ? `unknown gate${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`
        : 'an empty gate name';
    const known =
      configuredNames.length > 0
        ? `the configured gates are ${configuredNames.join(', ')}`
        : 'no gates are configured in .forge/config.json';
    return {
      error: `the bead's gates: label names ${what}; ${known} (fix the label, use gates:none, or add the gate under "gates" in .forge/config.json)`,
    };
  }
  const wanted = new Set(named);
  return { gates: configuredNames.filter((name) => wanted.has(name)) };
}

/** One configured gate as the runner runs it. */
export interface GateCommand {
  name: string;
  argv: readonly string[];
  timeoutMs: number;
}

/** What running one gate's argv gave: the port's answer. */
export interface GateProcessResult {
  /** undefined when the process was killed (timeout, interrupt) or never started. */
  exitCode: number | undefined;
  timedOut: boolean;
  aborted: boolean;
  /** The program could not be started (not found, not executable). */
  spawnError?: string | undefined;
  /** The last lines of stdout and stderr together, bounded. */
  tail: string;
  durationMs: number;
}

/** Runs a gate's argv (never a shell string) in `cwd`; the real one is src/infra/process.ts. */
export interface GateProcess {
  run(
    argv: readonly string[],
    options: { cwd: string; timeoutMs: number; signal: AbortSignal },
  ): Promise<GateProcessResult>;
}

/** One gate's result, as the runner reports it (the `gate_finished` event's fields). */
export interface GateOutcome {
  gate: string;
  argv: string[];
  ok: boolean;
  /** null: killed or never started. */
  exit: number | null;
  duration_ms: number;
  tail: string;
  timed_out?: true;
}

/** The gates of one attempt: all passed, or how the first to fail did. */
export type GatesVerdict =
  | { ok: true; outcomes: GateOutcome[] }
  | {
      ok: false;
      outcomes: GateOutcome[];
      /** One line for the attempt's message (and the bead's failure message after the last attempt). */
      message: string;
      /** Name, argv, exit and output tail: for the bead's comment and the next attempt's prompt. */
      report: string;
      /** The run was interrupted while a gate ran. */
      aborted?: true;
      /** The gate's program could not be started: the machine's problem, not the bead's. */
      environment?: true;
    };

export interface RunGatesOptions {
  cwd: string;
  signal: AbortSignal;
  /** No gate may run past this many ms from now (the run's wall clock). */
  maxMs?: number | undefined;
  /** Called as each gate finishes, before the next starts. */
  onOutcome?: ((outcome: GateOutcome) => void) | undefined;
}

/**
 * Runs the gates in order and stops at the first that fails: one red gate is enough to fail the
 * attempt, and its output is what the next attempt needs.
 */
export async function runGates(
  gates: readonly GateCommand[],
  port: GateProcess,
  options: RunGatesOptions,
): Promise<GatesVerdict> {
  const outcomes: GateOutcome[] = [];
  for (const gate of gates) {
    const timeoutMs = Math.max(1, Math.min(gate.timeoutMs, options.maxMs ?? Number.POSITIVE_INFINITY));
    const ran = await port.run(gate.argv, { cwd: options.cwd, timeoutMs, signal: options.signal });
    const passed = ran.exitCode === 0 && !ran.timedOut && !ran.aborted && ran.spawnError === undefined;
    const outcome: GateOutcome = {
      gate: gate.name,
      argv: [...gate.argv],
      ok: passed,
      exit: ran.exitCode ?? null,
      duration_ms: ran.durationMs,
      tail: ran.spawnError ?? ran.tail,
      ...(ran.timedOut ? { timed_out: true as const } : {}),
    };
    outcomes.push(outcome);
    options.onOutcome?.(outcome);
    if (passed) continue;
    const how = ran.aborted
      ? 'was interrupted'
      : ran.timedOut
        ? `timed out after ${Math.round(timeoutMs / 1000)}s and was killed`
        : ran.spawnError !== undefined
          ? `could not start: ${ran.spawnError}`
          : `exited ${ran.exitCode ?? '(killed)'}`;
    const message = `gate ${gate.name} (${gate.argv.join(' ')}) ${how}`;
    return {
      ok: false,
      outcomes,
      message,
      report: gateReport(outcome, how),
      ...(ran.aborted ? { aborted: true as const } : {}),
      ...(ran.spawnError !== undefined && !ran.aborted ? { environment: true as const } : {}),
    };
  }
  return { ok: true, outcomes };
}

/** A failed gate for people and for the next agent: what ran, how it ended, the end of its output. */
export function gateReport(outcome: GateOutcome, how: string): string {
  const tail = outcome.tail.trimEnd();
  return [
    `Gate ${outcome.gate} failed: ${how}.`,
    `Command (argv): ${JSON.stringify(outcome.argv)}`,
    `Exit code: ${outcome.exit ?? 'none (killed or not started)'}`,
    'Output (last lines):',
    '```',
    tail === '' ? '(no output)' : tail,
    '```',
  ].join('\n');
}

/** The gates config the runner gets: every configured gate with its timeout, in config order. */
export interface GatesSettings {
  commands: readonly GateCommand[];
}

/** Which gates this bead's attempt runs, or the error its labels make (a failed attempt, not a crash). */
export function planGates(
  labels: readonly string[],
  settings: GatesSettings,
): GateCommand[] | { error: string } {
  const names = settings.commands.map((gate) => gate.name);
  const chosen = gatesForBead(labels, names);
  if ('error' in chosen) return { error: `Gates: ${chosen.error}.` };
  return settings.commands.filter((gate) => chosen.gates.includes(gate.name));
}
