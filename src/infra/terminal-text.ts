// Text from beads, agents and the repository, made safe to print on a person's terminal. A bead title,
// an agent's message or a transcript line is written by whoever made it (an agent stamps beads and
// writes its own hypothesis), and a terminal obeys what it is sent: an escape sequence can hide the
// rest of a line, repaint it, retitle the window or write to the clipboard, a carriage return can print
// "✓ ok" over "✗ error", and a bidirectional override can show a line in another order than its bytes.
// Each such character is shown as its escape instead (`\u001b`, `\r`, `\u202e`), so what is printed
// is what is there; the escapes are JSON's, so a JSON line stays the same JSON. Tabs and line ends stay.
// A carriage return that ends a line (CRLF) moves nothing: it stays.
const UNSAFE =
  // eslint-disable-next-line no-control-regex -- control characters are what it looks for
  /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]|\r(?!\n)/g;

/** `text` with every control character and direction override shown as its escape. */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, (char) =>
    char === '\r' ? '\\r' : `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** A copy of `value` with terminalText applied to every string in it, at any depth (plain data only). */
export function terminalValue<T>(value: T): T {
  if (typeof value === 'string') return terminalText(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => terminalValue(item)) as T;
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = terminalValue(item);
    return copy as T;
  }
  return value;
}
