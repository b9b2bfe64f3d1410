// Runs async tasks one at a time in the order they were queued: the one write queue behind the bead
// stores (one writer per workspace) and the runner's lock file (a late write never lands after another).

export interface SerialQueue {
  /** Runs `task` after every task queued before it, whether those succeeded or failed. */
  run<T>(task: () => Promise<T>): Promise<T>;
  /** Settles once every task queued so far has settled; never rejects. */
  idle(): Promise<void>;
}

export function createSerialQueue(): SerialQueue {
  let tail: Promise<void> = Promise.resolve();
  return {
    run(task) {
      const run = tail.then(task);
      // The tail only orders tasks: a failed one is its caller's to hear, never the next task's.
      tail = run.then(
        () => undefined,
        () => undefined,
      );
      return run;
    },
    idle: () => tail,
  };
}

const queues = new Map<string, SerialQueue>();

/** Runs `task` after every task queued under the same key in this process (a queue per workspace). */
export function runSerialised<T>(key: string, task: () => Promise<T>): Promise<T> {
  let queue = queues.get(key);
  if (queue === undefined) {
    queue = createSerialQueue();
    queues.set(key, queue);
  }
  const run = queue.run(task);
  const idle = queue.idle();
  // A key whose queue has drained is forgotten, so a long run over many workspaces holds no map.
  void idle.then(() => {
    if (queues.get(key)?.idle() === idle) queues.delete(key);
  });
  return run;
}
