// Paths in code the metric loads that lead to files no commit holds: git's, Forge's and br's folders in
// the repository (`.git/`, `.forge/`, `.beads/`), and a climb above the repository (`'../../cache'`).
// The doer's turn can leave anything there (an agent has a shell), and the code it changed can read it
// back when measured: seen, `readFileSync('.git/probe-cache')` and
// `readFileSync(new URL('../../probe-cache', import.meta.url))` with 999 written there by the doer's
// turn, each kept at 999 from 1. A score is the commit's only when the code reads what the commit
// holds; the ignored-file guard and the reading of homes and `/tmp` cover the other places. Pure.

/** A folder of git's, Forge's or br's named in a string (`'.git/x'`, `path.join(root, '.forge')`). */
const TOOL_FOLDERS = /(?<=['"`/\\])\.(?:git|forge|beads)(?=['"`/\\])/g;

/** A string literal (one line); group 2 is its text. */
const STRING = /(['"`])((?:\\.|(?!\1)[^\\\n])*)\1/g;

/** A string that starts with climbs: `..`, `../..`, `../../cache`, `/../cache` (added to a folder). */
const CLIMB = /^[/\\]?((?:\.\.(?:[/\\]|$))+)/;

/** A module's name, not a path read: `from '../x'`, `import('../x')`, `require('../x')`. */
const SPECIFIER_BEFORE = /(?:\bfrom|\bimport\s*\(?|\brequire\s*\()\s*$/;

/** A line that resolves from the file's own folder (`new URL(…, import.meta.url)`, `__dirname`). */
const FILE_RELATIVE = /\bimport\s*\.\s*meta\b|\b__dirname\b|\b__filename\b|\b__file__\b/;

/**
 * What in `code` (the file `path`, relative to the repository, comments removed) names a place no
 * commit holds, by what it says, with how often. A climb counts when it leads above the repository:
 * from the file's folder on a line that resolves from it, else from the repository's root, where the
 * metric runs.
 */
export function outsidePaths(code: string, path: string): Map<string, number> {
  const found = new Map<string, number>();
  const add = (key: string) => found.set(key, (found.get(key) ?? 0) + 1);
  for (const match of code.matchAll(TOOL_FOLDERS)) add(match[0]);
  const depth = path.split('/').length - 1;
  for (const line of code.split('\n')) {
    let climbs = 0;
    let shown: string | undefined;
    for (const match of line.matchAll(STRING)) {
      const text = match[2] ?? '';
      const climb = CLIMB.exec(text);
      if (climb === null || SPECIFIER_BEFORE.test(line.slice(0, match.index))) continue;
      climbs += (climb[1] ?? '').split('..').length - 1;
      shown ??= text;
    }
    const above = FILE_RELATIVE.test(line) ? climbs > depth : climbs > 0;
    if (above && shown !== undefined) add(`'${shown}' above the repository`);
  }
  return found;
}
