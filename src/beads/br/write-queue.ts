// One writer at a time per workspace within this process: br's SQLite takes one writer, and queueing here
// is cheaper and fairer than letting every call wait on br's lock timeout.

const tails = new Map<string, Promise<void>>();

/** Runs `task` after every task queued before it under the same key, whether those succeeded or failed. */
export function runSerialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  void tail.then(() => {
    if (tails.get(key) === tail) tails.delete(key);
  });
  return run;
}
