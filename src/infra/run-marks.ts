// The marks of the runs a piece of work belongs to. A runner marks its run before it takes its lock;
// every swept child started inside the run (agents, gates, metric runs) then carries the run's mark
// beside its own, so a runner that takes over from one killed outright can end whatever that run left,
// even an agent it was killed too soon to record.
import { AsyncLocalStorage } from 'node:async_hooks';
import { readFileSync } from 'node:fs';

/** The variable that marks every process started under a swept child: `:`-separated marks when runs nest. */
export const RUN_MARK_VAR = 'FORGE_AGENT_RUN';

const marks = new AsyncLocalStorage<readonly string[]>();

/** A mark joins others with ':' in one variable: it must be a plain token. */
export function isValidMark(mark: string): boolean {
  return /^[A-Za-z0-9._-]+$/.test(mark);
}

/**
 * Runs `work` with `mark` added to the marks of the runs around it (a pipeline's stage runs inside its
 * pipeline's run). Only the work's own async calls see it: two runs in one process keep their marks apart.
 */
export function withRunMark<T>(mark: string, work: () => Promise<T>): Promise<T> {
  if (!isValidMark(mark)) throw new Error(`Not a run mark: ${JSON.stringify(mark)}`);
  return marks.run([...currentRunMarks(), mark], work);
}

/** The marks of the runs the caller is inside, outermost first. */
export function currentRunMarks(): readonly string[] {
  return marks.getStore() ?? [];
}

/**
 * Whether process `pid` (on this host, readable by this user) carries `mark` in its environment. Read
 * synchronously: a sweep reads every process's environ after each attempt, and procfs answers from
 * memory. Through the promise API the open, read and close of each file cost a round trip to the
 * thread pool: over 65 processes a sweep took 1.9 ms of the runner's CPU, against 0.9 ms read in place.
 * False where /proc cannot tell (another OS, the process gone, another user's).
 */
export function carriesMark(pid: number, mark: string): boolean {
  // A zombie's environ reads empty, so a zombie never matches: it is gone already.
  let environ = '';
  try {
    environ = readFileSync(`/proc/${pid}/environ`, 'latin1');
  } catch {
    return false;
  }
  const prefix = `${RUN_MARK_VAR}=`;
  const entry = environ.split('\0').find((variable) => variable.startsWith(prefix));
  return namesMark(entry?.slice(prefix.length), mark);
}

/** Whether a value of RUN_MARK_VAR (marks joined by ':', outermost first) names `mark`. */
export function namesMark(value: string | undefined, mark: string): boolean {
  return value !== undefined && value.split(':').includes(mark);
}
