// File system calls over many paths, a few at a time: one at a time, a doer's 100,000 new files took
// over a minute to remove here; all at once would hold that many promises and file handles.

/** How many calls go at once: libuv's pool runs four, and a few more keep it busy. */
export const FS_CONCURRENCY = 16;

/**
 * `fn` over `items`, at most `limit` at once; the results in the items' order. The first failure
 * rejects, and no item is started after it.
 */
export async function mapConcurrent<T, R>(
  items: readonly T[],
  fn: (item: T) => Promise<R>,
  limit = FS_CONCURRENCY,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const index = next;
      next += 1;
      try {
        results[index] = await fn(items[index] as T);
      } catch (error) {
        failed = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}
