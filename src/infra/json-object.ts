// The one test for "a JSON object" (not null, not an array) that the hand-written checks share: br's
// output, the config's store settings, the embedded store's lines, event-log tails.

export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
