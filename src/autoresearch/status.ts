// `ralph-loop status`: where a loop stands (scores, phase, cost, last iterations), read without disturbing it.
//
// This is the hot path of a command people run in a loop while the runner works, on ledgers of
// 100k lines: it reads the cached ledger summary and a handful of small files, and loads no schema
// library unless the cache is stale (then ledger-summary loads the ledger parser by itself) or
// config.json changed after the ledger did (then the config schema, to say what is wrong with it).
import { join } from 'node:path';
import { describeGuardFailure, trackFigures } from './check-figures.js';
import { AppError, ConfigError, ExitCode } from '../infra/errors.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { isOwnerLive, parseLockRecord } from '../infra/lock-record.js';
import { readSpend } from './spend.js';
import { sparkline } from './sparkline.js';
import { bestNoise, figuresFor } from './status-figures.js';
import {
  loadLedgerSummary,
  readCachedSummary,
  type LedgerSummary,
  type SummarySource,
} from './ledger-summary.js';
import {
  requireLoopWorkspace,
  resolveWorkspaceDir,
  workspacePaths,
  type WorkspacePaths,
} from './workspace.js';
import type { LoopPhase, LoopStatus, StatusPorts } from './status-types.js';

export type { CandidateStatus, LoopPhase, LoopStatus, RecentIteration, StatusPorts } from './status-types.js';

const RECENT_SHOWN = 5;

export async function loopStatus(
  repo: string,
  epicId: string,
  ports: StatusPorts,
  options: { workspace?: string | undefined } = {},
): Promise<LoopStatus> {
  const paths =
    options.workspace === undefined
      ? await requireLoopWorkspace(repo, epicId)
      : workspacePaths(resolveWorkspaceDir(repo, options.workspace).root);
  const { files } = ports;
  const config = await readConfigFacts(files, paths);
  if (config.epic !== undefined && config.epic !== epicId) {
    throw new AppError(`${paths.config} belongs to epic ${config.epic}, not ${epicId}.`, {
      exitCode: ExitCode.usage,
      hint: `See that loop with: ralph-loop status ${config.epic}`,
    });
  }
  const [loaded, lockText, question, terminalText, configError] = await Promise.all([
    loadSummary(files, paths, config),
    files.readIfExists(paths.lock),
    files.readIfExists(paths.needsHuman),
    files.readIfExists(paths.terminalSignal),
    checkConfig(files, paths, config.raw),
  ]);
  const { summary, source } = loaded;
  const lock = lockText === undefined ? undefined : parseLockRecord(lockText);
  const now = ports.now();
  // The lock's last write tells a recycled pid from its holder, on the holder's own host only.
  const lockWrittenAt =
    lock !== undefined && lock.host === ports.host ? (await files.stat(paths.lock))?.mtimeMs : undefined;
  const live =
    lock !== undefined && isOwnerLive(lock, ports.host, lockWrittenAt, (pid) => ports.isProcessAlive(pid));

  let phase: LoopPhase;
  if (lock !== undefined && live) {
    phase = {
      state: 'running',
      pid: lock.pid,
      host: lock.host,
      verified: lock.host === ports.host,
      run_started_at: lock.started_at,
      run_elapsed_ms: elapsedSince(lock.started_at, now),
      bead: lock.bead ?? null,
      bead_elapsed_ms: lock.bead_started_at === undefined ? null : elapsedSince(lock.bead_started_at, now),
    };
  } else if (question !== undefined) {
    phase = { state: 'waiting_for_human', needs_human: paths.needsHuman, question: firstLine(question) };
  } else if (terminalText !== undefined) {
    phase = terminalPhase(terminalText, paths.terminalSignal);
  } else {
    // The runner's record of an iteration it started (the doer's base): read by its name only, as status
    // loads no schema. One past the last decided iteration, so a baseline's own record never counts.
    const next = Math.max(0, summary.last_iter) + 1;
    const started = await files.stat(join(paths.root, 'iterations', `iter-${next}.json`));
    phase = { state: 'idle', underway_iter: started === undefined ? null : next };
  }

  const recentLines = summary.recent;
  const last = recentLines[recentLines.length - 1];
  const spend = await readSpend(files, paths.root);
  const costUsd = Math.max(spend.cost_usd, summary.total_cost_usd);
  return {
    epic: epicId,
    subject: config.subject,
    workspace: paths.root,
    metric: config.metric,
    target: config.target,
    phase,
    stale_lock:
      lock !== undefined && !live ? { pid: lock.pid, host: lock.host, started_at: lock.started_at } : null,
    iterations: {
      decided: Math.max(0, summary.last_iter),
      kept: summary.kept,
      reverted: summary.reverted,
      crashed: summary.crashed,
      tampered: summary.tampered ?? 0,
      guard_failed: summary.guard_failed ?? 0,
    },
    scores: {
      baseline: summary.baseline_score,
      best: summary.best_score,
      best_iter: summary.best_iter,
      current: summary.current_score,
      last: last?.score_after ?? null,
      last_iter: last?.iter ?? null,
    },
    tracks: trackFigures(summary),
    trajectory: {
      iters: recentLines.map((line) => line.iter),
      scores: recentLines.map((line) => line.score_after),
      sparkline: sparkline(
        recentLines.map((line) => line.score_after),
        true,
      ),
    },
    noise: bestNoise(summary),
    figures: await figuresFor(files, paths.root, summary, config.direction, costUsd),
    cost_usd: costUsd,
    tokens: { input: spend.input_tokens, output: spend.output_tokens },
    agent_runs: spend.runs,
    scripted_runs: spend.scripted_runs,
    duration_ms: summary.total_duration_ms,
    recent: recentLines
      .slice(-RECENT_SHOWN)
      .reverse()
      .map((line) => ({
        iter: line.iter,
        decision: line.decision,
        score: line.score_after,
        delta: line.delta,
        hypothesis: line.hypothesis,
        cost_usd: line.cost_usd,
        ts: line.ts,
        tamper: (line.tamper ?? []).map((record) => ({ role: record.role, paths: [...record.paths] })),
        failed_guard: line.failed_guard === undefined ? null : describeGuardFailure(line),
        ...(line.candidate === undefined ? {} : { candidate: line.candidate }),
      })),
    candidates: (summary.recent_candidates ?? []).map((c) => ({
      iter: c.iter,
      candidate: c.candidate,
      angle: c.angle,
      score: c.score,
      decision: c.decision,
      ...(c.reason === undefined ? {} : { reason: c.reason }),
    })),
    summary_source: source,
    config_error: configError,
  };
}

/**
 * What the runner would say about config.json. The schema costs more than the rest of status, so it is
 * checked only when the file changed after the ledger did: every ledger line is written by a run (or
 * `forge-pack loop`) that had validated the config first.
 */
async function checkConfig(files: LoopFiles, paths: WorkspacePaths, raw: unknown): Promise<string | null> {
  const [config, ledger] = (await Promise.all([files.stat(paths.config), files.stat(paths.ledger)])).map(
    (stat) => stat?.mtimeMs,
  );
  if (config !== undefined && ledger !== undefined && config < ledger) return null;
  const { parseLoopConfig } = await import('./config.js');
  try {
    parseLoopConfig(raw, paths.config);
    return null;
  } catch (error) {
    if (error instanceof ConfigError) return error.message;
    throw error;
  }
}

// ---- reading ----

interface ConfigFacts {
  /** The parsed file, for the schema check. */
  raw: unknown;
  epic: string | undefined;
  subject: string;
  metric: LoopStatus['metric'];
  target: number | null;
  direction: 'maximize' | 'minimize';
}

/** The few config fields status shows, read without the schema (the runner validated the file). */
async function readConfigFacts(files: LoopFiles, paths: WorkspacePaths): Promise<ConfigFacts> {
  // Any unreadable config (missing, a directory, no permission) means no loop here.
  const text = await files.readIfExists(paths.config).catch(() => undefined);
  if (text === undefined) {
    throw new AppError(`${paths.config} is missing: this workspace holds no loop.`, {
      exitCode: ExitCode.config,
      hint: 'Create the loop with forge-pack loop (it writes config.json and prints the epic id).',
    });
  }
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new ConfigError(`${paths.config}: not valid JSON`, {
      hint: `Fix the JSON syntax in ${paths.config}.`,
    });
  }
  const metric = (typeof value.metric === 'object' && value.metric !== null ? value.metric : {}) as Record<
    string,
    unknown
  >;
  const direction = metric.direction === 'minimize' ? 'minimize' : 'maximize';
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const type = metric.type === 'hard' || metric.type === 'soft' ? metric.type : 'unknown';
  const facts: LoopStatus['metric'] = { type, direction };
  if (type === 'hard') {
    facts.command = str(metric.command) ?? '';
    facts.score = describeScore(metric.score);
  }
  const rubric = str(metric.rubric_path);
  if (rubric !== undefined) facts.rubric = rubric;
  const artifact = str(metric.artifact_path);
  if (artifact !== undefined) facts.artifact = artifact;
  return {
    raw: value,
    epic: str(value.epic_id),
    subject: str(value.subject) ?? '(no subject)',
    metric: facts,
    target: typeof value.target === 'number' ? value.target : null,
    direction,
  };
}

function describeScore(score: unknown): string {
  const s = (typeof score === 'object' && score !== null ? score : { from: 'exit-code' }) as Record<
    string,
    unknown
  >;
  if (s.from === 'regex') return `regex:${String(s.pattern)}`;
  if (s.from === 'json') return `json:${String(s.path)}`;
  return typeof s.from === 'string' ? s.from : 'exit-code';
}

async function loadSummary(
  files: LoopFiles,
  paths: WorkspacePaths,
  config: ConfigFacts,
): Promise<{ summary: LedgerSummary; source: SummarySource }> {
  const cached = await readCachedSummary(files, paths.ledger);
  if (
    cached !== undefined &&
    cached.params.direction === config.direction &&
    cached.params.target === config.target
  ) {
    return { summary: cached, source: 'cache' };
  }
  const loaded = await loadLedgerSummary(files, paths.ledger, {
    direction: config.direction,
    target: config.target,
  });
  return { summary: loaded.summary, source: loaded.source };
}

function terminalPhase(text: string, path: string): LoopPhase {
  try {
    const value = JSON.parse(text) as Record<string, unknown>;
    const num = (v: unknown) => (typeof v === 'number' ? v : null);
    return {
      state: 'terminated',
      reason: typeof value.reason === 'string' ? value.reason : 'unknown',
      iter: num(value.iter),
      final_score: num(value.final_score),
      best_score: num(value.best_score),
    };
  } catch {
    return {
      state: 'terminated',
      reason: `unreadable ${path}`,
      iter: null,
      final_score: null,
      best_score: null,
    };
  }
}

function elapsedSince(iso: string, now: number): number | null {
  const start = Date.parse(iso);
  return Number.isFinite(start) ? Math.max(0, now - start) : null;
}

function firstLine(text: string): string {
  const line =
    text.split('\n').find((l) => l.trim() !== '' && !/^#+\s*answer\s*:?\s*$/i.test(l.trim())) ?? '';
  const clean = line.replace(/^#+\s*/, '').trim();
  return clean.length > 100 ? `${clean.slice(0, 99)}…` : clean;
}
