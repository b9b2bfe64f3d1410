// Helpers for the red-team suite: scripted doers that cheat through Claude Code's real tools, readers of
// what a loop recorded (ledger, events, status), a process scan, and per-scenario verdicts over one run.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { bash, text, type RecordedRequest, type Rule, type Turn } from '../support/model-server/index.js';
import type { AgentWorld } from './harness.js';

export interface TamperRecord {
  role: string;
  paths: string[];
  what?: string;
}

/** A ledger line: an iteration (with `iter`) or an event (with `kind`). */
export interface LedgerLine {
  iter?: number;
  kind?: string;
  decision?: string;
  score_after?: number | null;
  best_before?: number | null;
  base_sha?: string;
  sha?: string;
  evidence?: string;
  tamper?: TamperRecord[];
}

export interface Ledger {
  /** The file as it is on disk. */
  raw: string;
  iterations: LedgerLine[];
  events: LedgerLine[];
}

export async function readLedger(world: AgentWorld, workspace = '.autoresearch'): Promise<Ledger> {
  const raw = await readFile(join(world.repo, workspace, 'research-log.jsonl'), 'utf8');
  const lines = raw
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as LedgerLine);
  return {
    raw,
    iterations: lines.filter((line) => line.kind === undefined),
    events: lines.filter((line) => line.kind !== undefined),
  };
}

/** The ledger line of iteration `iter`, or a failure naming what the ledger holds instead. */
export function iteration(ledger: Ledger, iter: number): LedgerLine {
  const line = ledger.iterations.find((candidate) => candidate.iter === iter);
  if (line === undefined) {
    throw new Error(
      `the ledger has no line for iteration ${iter}; it has ${ledger.iterations.map((l) => `${l.iter}:${l.decision}`).join(', ')}`,
    );
  }
  return line;
}

/** The doer's tamper record of iteration `iter` (every role's records are kept on the line). */
export function doerTamper(ledger: Ledger, iter: number): TamperRecord | undefined {
  return iteration(ledger, iter).tamper?.find((record) => record.role === 'doer');
}

export async function readWorkspaceJson(
  world: AgentWorld,
  name: string,
  workspace = '.autoresearch',
): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(world.repo, workspace, name), 'utf8')) as Record<string, unknown>;
}

export interface LoopOptions {
  subject: string;
  metricCommand: string;
  score: string;
  workspace?: string;
  extra?: string[];
}

/** `forge-pack loop` for a hard metric; returns the epic id. */
export async function createHardLoop(world: AgentWorld, o: LoopOptions): Promise<string> {
  const args = [
    'loop',
    o.subject,
    '--program',
    `Raise the ${o.subject}, one step per iteration.`,
    '--metric-command',
    o.metricCommand,
    '--score',
    o.score,
    '--scope',
    'src/',
    ...(o.workspace === undefined ? [] : ['--workspace', o.workspace]),
    ...(o.extra ?? []),
  ];
  const created = await world.forge(args);
  expect(created.exitCode, `forge-pack ${args.join(' ')}\n${created.stderr}`).toBe(0);
  return created.stdout.trim();
}

/**
 * The doer of iteration `iter` of the loop on `subject`: takes `steps` (Claude's own tools), then ends
 * with the HYPOTHESIS line its bead asks for.
 */
export function scriptedDoer(options: {
  iter: number;
  subject: string;
  steps: Turn[];
  hypothesis: string;
  name?: string;
}): Rule {
  return {
    name: options.name ?? `doer-${options.iter}`,
    // The subject follows the iteration, so "iteration 1:" never matches iteration 11.
    match: `# Doer, iteration ${options.iter}: ${options.subject}`,
    turns: [...options.steps, text(`Done.\nHYPOTHESIS: ${options.hypothesis}`)],
  };
}

/** An honest edit through Bash: the file's whole content becomes `value`. */
export function setValue(path: string, value: string): Turn {
  return bash(`printf '%s\\n' '${value}' > '${path}'`, 'set the value');
}

/** Pids of live processes whose command line is exactly `argv` (read from /proc, not through a shell). */
export async function processesWithArgv(argv: readonly string[]): Promise<number[]> {
  const wanted = argv.join('\0');
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(join('/proc', entry, 'cmdline'), 'utf8').catch(() => '');
    if (cmdline.replace(/\0$/, '') === wanted) found.push(Number(entry));
  }
  return found;
}

/** Polls `check` until it is true or `timeoutMs` passes; returns the last answer. */
export async function eventually(check: () => Promise<boolean>, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `ralph-loop status <epic> --json`, parsed. */
export async function loopStatus(world: AgentWorld, epic: string): Promise<LoopStatusView> {
  const status = await world.ralph(['status', epic, '--json']);
  expect(status.exitCode, status.stderr).toBe(0);
  return JSON.parse(status.stdout) as LoopStatusView;
}

export interface LoopStatusView {
  phase: { state: string; reason?: string };
  iterations: { decided: number; kept: number; reverted: number; crashed: number; tampered: number };
  recent: { iter: number; decision: string; tamper: { role: string; paths: string[] }[] }[];
}

export interface TamperEvent {
  type: string;
  bead?: string;
  role?: string;
  paths?: string[];
}

/** Every event of every run of the epic (`ralph-loop logs --json --all`). */
export async function allEvents(world: AgentWorld, epic: string): Promise<TamperEvent[]> {
  const logs = await world.ralph(['logs', epic, '--json', '--all']);
  expect(logs.exitCode, logs.stderr).toBe(0);
  return logs.stdout
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as TamperEvent);
}

/** The id of the child bead whose title starts with `prefix` (e.g. `judge-7:`). */
export async function beadByTitle(
  world: AgentWorld,
  epic: string,
  prefix: string,
): Promise<{ id: string; status: string; close_reason?: string }> {
  const listed = await world.forge(['beads', 'children', epic, '--json']);
  expect(listed.exitCode, listed.stderr).toBe(0);
  const beads = JSON.parse(listed.stdout) as { id: string; title: string; status: string }[];
  const bead = beads.find((candidate) => candidate.title.startsWith(prefix));
  if (bead === undefined)
    throw new Error(`no bead titled ${prefix}…: ${beads.map((b) => b.title).join(', ')}`);
  return bead;
}

/**
 * The outcome of named checks made against one live run, each later reported by a test of its own:
 * one loop serves many scenarios, and each scenario still passes or fails by itself.
 */
export class Verdicts {
  private readonly outcomes = new Map<string, { error: unknown } | undefined>();
  private ran = false;

  constructor(private readonly runTest: string) {}

  /** Runs `check` now (with the world still there) and keeps its outcome for `report(name)`. */
  async check(name: string, check: () => Promise<void> | void): Promise<void> {
    this.ran = true;
    try {
      await check();
      this.outcomes.set(name, undefined);
    } catch (error) {
      this.outcomes.set(name, { error });
    }
  }

  /** Fails the calling test with the check's own failure, or says that its run never got that far. */
  report(name: string): void {
    if (!this.outcomes.has(name)) {
      throw new Error(
        this.ran
          ? `"${name}" was never checked: "${this.runTest}" failed before it (see that test).`
          : `"${this.runTest}" did not run or failed before any check (see that test).`,
      );
    }
    const outcome = this.outcomes.get(name);
    if (outcome !== undefined) throw outcome.error;
  }
}

/** Model-facing text a commit subject with a score or decision would show up in. */
const SCORED_SUBJECT = /autoresearch iter \d+:[^"\\\n]*(\(score|best |\bkeep\b|\bkept\b|\bdecision\b)/;

/**
 * Over every request the model saw: no commit subject carries a score, and (Claude Code honouring
 * CLAUDE_CODE_DISABLE_GIT_INSTRUCTIONS) no gitStatus or recent-commits block was sent.
 */
export function expectBlindToGit(requests: readonly RecordedRequest[]): void {
  const turns = requests.filter((request) => request.path === '/v1/messages' && request.tools.length > 0);
  expect(turns.length, 'no agent turns were recorded').toBeGreaterThan(0);
  for (const request of turns) {
    const body = JSON.stringify(request.body);
    const scored = SCORED_SUBJECT.exec(body);
    expect(scored?.[0], `request #${request.seq} carries a scored commit subject`).toBeUndefined();
    for (const marker of ['gitStatus', 'Recent commits']) {
      const at = request.prompt.indexOf(marker);
      expect(
        at,
        `request #${request.seq} carries Claude's git context (${marker}): …${request.prompt.slice(Math.max(0, at - 100), at + 300)}…`,
      ).toBe(-1);
    }
  }
}
