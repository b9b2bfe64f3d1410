// What `ralph-loop status` reports for a loop, as data (rendered as text in the CLI layer), and the
// ports it reads through.
import type { LoopFiles } from '../infra/loop-files.js';
import type { TrackFigure } from './check-figures.js';
import type { Decision } from './ledger.js';
import type { SummarySource } from './ledger-summary.js';
import type { LoopFigures } from './loop-figures.js';
import type { BestNoise } from './status-figures.js';

export interface StatusPorts {
  now(): number;
  /** This machine's host name: a lock taken on another host cannot be checked by pid. */
  host: string;
  isProcessAlive(pid: number): boolean;
  /** The loop's state files (its workspace, `.forge/loops.json`): on disk, or in memory in tests. */
  files: LoopFiles;
}

export type LoopPhase =
  | {
      state: 'running';
      pid: number;
      host: string;
      /** False when the runner is on another host and its pid could not be checked. */
      verified: boolean;
      run_started_at: string;
      run_elapsed_ms: number | null;
      bead: string | null;
      bead_elapsed_ms: number | null;
    }
  | { state: 'waiting_for_human'; needs_human: string; question: string }
  | {
      state: 'terminated';
      reason: string;
      iter: number | null;
      final_score: number | null;
      best_score: number | null;
    }
  | {
      state: 'idle';
      /** An iteration whose doer has started but which no arbiter has decided yet (the run stopped mid-way). */
      underway_iter: number | null;
    };

export interface RecentIteration {
  iter: number;
  decision: Decision;
  score: number | null;
  delta: number | null;
  hypothesis: string;
  cost_usd: number;
  ts: string;
  /** What agents changed that was not theirs (put back by the runner), by role. */
  tamper: { role: string; paths: string[] }[];
  /** The guard or track threshold that failed (decision `guard_failed`), in one sentence; null otherwise. */
  failed_guard: string | null;
  /** A population iteration: the candidate its decision is about (the best one). */
  candidate?: number;
}

/** One candidate of a recent population iteration. */
export interface CandidateStatus {
  iter: number;
  candidate: number;
  angle: string;
  score: number | null;
  decision: 'kept' | 'lost' | 'reverted';
  reason?: string;
}

export interface LoopStatus {
  epic: string;
  subject: string;
  workspace: string;
  metric: {
    type: 'hard' | 'soft' | 'unknown';
    direction: string;
    command?: string;
    score?: string;
    rubric?: string;
    artifact?: string;
  };
  target: number | null;
  phase: LoopPhase;
  /** A lock left by a runner that died: the next run takes it over. */
  stale_lock: { pid: number; host: string; started_at: string } | null;
  iterations: {
    decided: number;
    kept: number;
    reverted: number;
    crashed: number;
    tampered: number;
    guard_failed: number;
  };
  scores: {
    baseline: number | null;
    best: number | null;
    best_iter: number | null;
    /** The score of the tree in the repository (the last kept iteration or the baseline). */
    current: number | null;
    last: number | null;
    last_iter: number | null;
  };
  /** The loop's tracks (second figures recorded beside the score): baseline → last. */
  tracks: TrackFigure[];
  /** Scores of the recent iterations, oldest first (null: crashed), and their sparkline. */
  trajectory: { iters: number[]; scores: (number | null)[]; sparkline: string };
  /** The best kept score's samples and noise band, when the metric is measured more than once. */
  noise: BestNoise | null;
  /** Rates and ratios: iterations per hour, keep rate, time per iteration by role, cost per keep. */
  figures: LoopFigures;
  /** Everything the loop's agents have spent, including runs after the last ledger line. */
  cost_usd: number;
  tokens: { input: number; output: number };
  agent_runs: number;
  /** Runs by the built-in scripted agent: a demo or test loop, not a model. */
  scripted_runs: number;
  duration_ms: number;
  recent: RecentIteration[];
  /** The candidates of recent population iterations, oldest first (empty for a one-candidate loop). */
  candidates: CandidateStatus[];
  summary_source: SummarySource;
  /** The epic's beads by status, when asked for (`--beads`). */
  beads?: Record<string, number>;
  /** What is wrong with config.json (file, field, problem), which the next run will refuse; null when valid. */
  config_error: string | null;
}
