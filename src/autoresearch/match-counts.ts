// How often each marker a set of patterns finds in a text is there: the shape suppressions and reaches
// are counted in, so that one added is told from one held before.

/**
 * Adds to `found` each match of `patterns` (global) in `text`, keyed by its text with runs of
 * whitespace made one space (and `trim`'s ends cut), at most 160 characters; returns `found`.
 */
export function countMatches(
  text: string,
  patterns: readonly RegExp[],
  found = new Map<string, number>(),
  trim = /^\s+|\s+$/g,
): Map<string, number> {
  for (const pattern of patterns) {
    for (const match of text.matchAll(pattern)) {
      const key = match[0].replace(/\s+/g, ' ').replace(trim, '').slice(0, 160);
      found.set(key, (found.get(key) ?? 0) + 1);
    }
  }
  return found;
}

/**
 * A marker's key as a person reads it after a path, `src/lib.py (os._exit(…))`: a key cut at an open
 * bracket (`os._exit(`, `os.kill(os.getpid`) is closed with an ellipsis, so what follows it does not
 * read as part of the call.
 */
export function shownMarker(key: string): string {
  let open = '';
  for (const char of key) {
    if (char === '(' || char === '[') open += char === '(' ? ')' : ']';
    else if ((char === ')' || char === ']') && open.endsWith(char)) open = open.slice(0, -1);
  }
  return open === '' ? key : `${key}\u2026${[...open].reverse().join('')}`;
}
