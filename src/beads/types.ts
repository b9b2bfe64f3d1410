// The BeadStore contract: what the runner and the CLI need from an issue tracker, whichever store serves it.
//
// Bead records keep br's own field names (snake_case), so `--json` output mirrors br's shapes and the
// embedded store's JSONL is br's line format without a translation layer.

export type BeadStatus = 'open' | 'in_progress' | 'blocked' | 'deferred' | 'closed' | (string & {});

/** Dependency edge types that block readiness (br's blocking set). */
export const BLOCKING_DEPENDENCY_TYPES: readonly string[] = ['blocks', 'conditional-blocks', 'waits-for'];

export interface Bead {
  id: string;
  title: string;
  status: BeadStatus;
  priority: number;
  issue_type: string;
  created_at: string;
  updated_at: string;
  description?: string | undefined;
  assignee?: string | undefined;
  labels: string[];
  /** Parent id when known (from a parent-child edge). */
  parent?: string | undefined;
  closed_at?: string | undefined;
  close_reason?: string | undefined;
}

export interface BeadEdge {
  /** The other issue of the edge. */
  id: string;
  title?: string;
  status?: BeadStatus;
  priority?: number;
  dependency_type: string;
}

export interface BeadComment {
  id: number;
  issue_id: string;
  author: string;
  text: string;
  created_at: string;
}

export interface BeadDetail extends Bead {
  /**
   * Until when the bead is deferred (ready only from then on), where the store says: the embedded
   * store's graph carries it when set.
   */
  defer_until?: string;
  /** Issues this bead depends on (its blockers and its parent). */
  dependencies: BeadEdge[];
  /** Issues that depend on this bead (its dependents and its children). */
  dependents: BeadEdge[];
  comments: BeadComment[];
}

export interface CreateBeadInput {
  title: string;
  /** task (default), epic, bug, feature, chore, … */
  type?: string | undefined;
  /** 0 (highest) to 4; default 2. */
  priority?: number | undefined;
  description?: string | undefined;
  labels?: readonly string[] | undefined;
  parent?: string | undefined;
  /** Ids this bead is blocked by (edges of type `blocks`). */
  dependsOn?: readonly string[] | undefined;
}

/** An epic's whole dependency graph as it is now: what `forge-pack validate` checks before a run. */
export interface EpicGraph {
  epic: BeadDetail;
  /** Every descendant of the epic (children, their children, …), with its edges. */
  beads: BeadDetail[];
  /** Beads outside the epic that the epic or its beads depend on, as they are now. */
  outside: Bead[];
  /** Ids the epic or its beads depend on that the store does not hold (dangling dependencies). */
  missing: string[];
}

export interface GraphOptions {
  /**
   * Ids believed to be the epic's beads (from an earlier read): a store may show them with the epic in
   * one call and walk on only from edges to beads it has not seen. The graph is the same either way.
   */
  known?: Iterable<string>;
}

export interface ReadyOptions {
  /** All descendants of the epic rather than its direct children only. */
  recursive?: boolean;
}

export interface ListFilter {
  status?: BeadStatus | undefined;
  label?: string | undefined;
  /** Include closed beads (br's `-a`). */
  all?: boolean | undefined;
}

export type ClaimResult = { ok: true; bead: Bead } | { ok: false; reason: string };
export type CloseResult = { ok: true } | { ok: false; reason: string };
export interface DependencyResult {
  status: 'ok' | 'exists';
}

export interface BeadStore {
  readonly kind: 'br' | 'embedded';
  /** Creates the store in the workspace when absent. Safe to call on an initialised store. */
  init(options?: { prefix?: string | undefined }): Promise<void>;
  create(input: CreateBeadInput): Promise<Bead>;
  /**
   * Beads of the epic that can run now: status open, not blocked, not deferred, never the epic
   * itself, never in_progress. Ordered as br orders them (hybrid: P0–P1 oldest first, then the rest
   * oldest first); callers that need a total order sort again.
   */
  ready(epicId: string, options?: ReadyOptions): Promise<Bead[]>;
  show(id: string): Promise<BeadDetail>;
  list(filter?: ListFilter): Promise<Bead[]>;
  /** Children of the epic with their statuses (all descendants with `recursive`). */
  children(epicId: string, options?: ReadyOptions): Promise<Bead[]>;
  /**
   * The epic, all its descendants with their dependencies, and the far end of every dependency that
   * leaves the epic: one read of the store (br: the calls `children -r` makes, plus one `show`).
   */
  graph(epicId: string, options?: GraphOptions): Promise<EpicGraph>;
  /** Marks the bead in_progress. Fails (not throws) when it is no longer open. */
  claim(id: string): Promise<ClaimResult>;
  /** Sets the bead back to open, with the reason as a comment when given. */
  reopen(id: string, reason?: string): Promise<void>;
  /** Closes the bead. ok only when the store reports the bead actually closed. */
  close(id: string, reason: string): Promise<CloseResult>;
  /** `blocked` depends on `blocker`. */
  addDependency(blocked: string, blocker: string, type?: string): Promise<DependencyResult>;
  addLabel(id: string, label: string): Promise<void>;
  removeLabel(id: string, label: string): Promise<void>;
  comment(id: string, text: string): Promise<BeadComment>;
  /**
   * Makes sure everything written is on disk in `.beads/issues.jsonl`. With `onlyIfWritten`, a store
   * this process has written nothing through may skip it (the runner's end of run).
   */
  flush(options?: { onlyIfWritten?: boolean }): Promise<void>;
  /**
   * What the store holds, named without reading it: the same token while nothing in it changed. The
   * embedded store's is its file's identity; undefined where it cannot tell (br: no version).
   */
  version?(): Promise<StoreVersion | undefined>;
}

/** A store's version (BeadStore.version): a token that changes with every change, and when it last did. */
export interface StoreVersion {
  token: string;
  /** The last change, as the file system dates it (ms since the epoch). */
  changedAtMs: number;
}

/** br's label rule: letters, digits, `_`, `:` and `-`, 1 to 50 characters. */
export const LABEL_PATTERN = /^[A-Za-z0-9_:-]{1,50}$/;

/**
 * Hybrid order as br sorts ready work: P0–P1 first (oldest first), then the rest oldest first;
 * ties broken by id so the order is total.
 */
export function compareHybrid(a: Bead, b: Bead): number {
  const urgentA = a.priority <= 1 ? 0 : 1;
  const urgentB = b.priority <= 1 ? 0 : 1;
  if (urgentA !== urgentB) return urgentA - urgentB;
  const byTime = compareTimestamps(a.created_at, b.created_at);
  if (byTime !== 0) return byTime;
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * Compares RFC 3339 timestamps, including br's nanosecond ones, whose fractional parts vary in length
 * (so neither plain string order nor Date.parse, which stops at milliseconds, is enough).
 */
export function compareTimestamps(a: string, b: string): number {
  const ms = Date.parse(a) - Date.parse(b);
  if (Number.isFinite(ms) && ms !== 0) return ms < 0 ? -1 : 1;
  const fa = fractionOf(a);
  const fb = fractionOf(b);
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

function fractionOf(timestamp: string): string {
  const match = /\.(\d+)/.exec(timestamp);
  return (match?.[1] ?? '').padEnd(9, '0');
}
