// The marks of the runs a piece of work belongs to. A runner marks its run before it takes its lock;
// every swept child started inside the run (agents, gates, metric runs) then carries the run's mark
// beside its own, so a runner that takes over from one killed outright can end whatever that run left,
// even an agent it was killed too soon to record.
import { AsyncLocalStorage } from 'node:async_hooks';

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
