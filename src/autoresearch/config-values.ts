// The config's value rules that need no schema library: relative paths, score regexes and JSON paths,
// guard names, and field paths in messages. Modules that only need these (keep/revert, the scorers)
// import them from here and load no zod.

export type Direction = 'maximize' | 'minimize';

/** Paths the doer may never own: the loop's own workspace. */
export const WORKSPACE_DIR = '.autoresearch';

export type Threshold = { absolute: number } | { relative_percent: number; text: string };

/** `caps.max_iterations`, `scope.doer_paths[0]`. */
export { formatFieldPath as formatPath } from '../infra/zod-issues.js';

// ---- paths ----

/** `./src//x/` → `src/x`; `.` and `./` → ``. No `..` handling: those are rejected by validation. */
export function normalizeRelativePath(path: string): string {
  return path
    .split('/')
    .filter((part) => part !== '' && part !== '.')
    .join('/');
}

export function relativePathProblem(path: string): string | undefined {
  if (path.startsWith('/') || /^[A-Za-z]:[\\/]/.test(path))
    return 'expected a path relative to the repository root';
  if (path.includes('\\')) return 'expected a path with forward slashes';
  if (path.split('/').includes('..')) return 'expected a path inside the repository (no "..")';
  return undefined;
}

// ---- score sources ----

export function regexProblem(pattern: string): string | undefined {
  let groups: number;
  try {
    // Matching the empty alternative always succeeds, and the result has one slot per capture group.
    groups = (new RegExp(`(?:${pattern})|`, 'm').exec('')?.length ?? 1) - 1;
  } catch (error) {
    return `expected a valid regular expression (${(error as Error).message})`;
  }
  return groups === 0
    ? 'expected a regular expression with a capture group around the number, e.g. "Score: ([0-9.]+)"'
    : undefined;
}

/** `results.0.score` or `results[0].score` → ['results', 0, 'score']; undefined when malformed. */
export function parseJsonPath(path: string): (string | number)[] | undefined {
  const parts: (string | number)[] = [];
  for (const raw of path.replace(/\[(\d+)\]/g, '.$1').split('.')) {
    if (raw === '') return undefined;
    parts.push(/^\d+$/.test(raw) ? Number(raw) : raw);
  }
  return parts.length === 0 ? undefined : parts;
}

/** A guard's name when none is given: its first words, e.g. `npm test` → `npm-test`. */
export function defaultCheckName(argv: readonly string[]): string {
  const words = argv
    .filter((word) => !word.startsWith('-'))
    .slice(0, 3)
    .map(
      (word) =>
        word
          .split('/')
          .filter((part) => part !== '')
          .pop() ?? '',
    )
    .filter((word) => word !== '');
  const name = words
    .join('-')
    .replace(/[^\w.-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '');
  return name === '' ? 'guard' : name.slice(0, 64);
}
