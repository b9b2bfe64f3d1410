// The one test for "a JSON object" (not null, not an array) that the hand-written checks share: br's
// output, the config's store settings, the embedded store's lines, event-log tails.

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * What each line of `text` holds, as `as` takes it: a line that is not JSON, or that `as` turns away
 * (undefined), is left out. For logs that code outside Forge's control can write to.
 */
export function parseJsonLines<T>(text: string, as: (value: unknown) => T | undefined): T[] {
  const out: T[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      continue;
    }
    const taken = as(value);
    if (taken !== undefined) out.push(taken);
  }
  return out;
}
