// Code a doer moved where a checker does not look, rather than making it better: renamed to another
// extension (`src/app.js` to `src/app.cjs`, which a metric counting `*.js` no longer reads; `.ts` to
// `.js`, out of the type checker's sight), or moved into a folder or name checkers leave out by
// convention (`vendor/`, `generated/`, `dist/`, `*.min.js`). A count of lint warnings or type errors
// falls and no line got better. Pure: the caller hands each file's text at the base and now.
import type { FileVersions } from './silenced-checks.js';

/** Folders checkers, coverage and type checkers leave out by convention. */
const UNCHECKED_DIR =
  /^(?:vendor|vendored|third[_-]?party|external|externals|extern|deps|generated|__generated__|gen|dist|build|out|target|node_modules|bower_components|jspm_packages|\.?venv|site-packages|__pycache__|coverage|\.next|\.nuxt|tmp|temp|\.cache)$/i;
/** Names of generated or bundled files, which checkers leave out by convention. */
const UNCHECKED_NAME =
  /(?:\.min\.[cm]?js|\.bundle\.[cm]?js|\.generated\.\w+|\.gen\.\w+|_pb2\.pyi?|\.pb\.go|_generated\.go|\.g\.dart)$/i;

const JS = new Set(['js', 'jsx', 'mjs', 'cjs']);
const TS = new Set(['ts', 'tsx', 'mts', 'cts']);
/**
 * Extensions code moves between without leaving its checkers' sight: TypeScript with and without JSX
 * (tsc takes both by default), and C and C++ sources and headers (code moves into a header to be
 * inlined, and the header is checked where it is included).
 */
const ALIKE: readonly ReadonlySet<string>[] = [
  new Set(['ts', 'tsx']),
  new Set(['c', 'h', 'cc', 'cpp', 'cxx', 'hpp', 'hh', 'hxx', 'ipp', 'inl']),
];

/** Lines this short say too little to tell moved code from code written anew (`}`, `return x;`). */
const MIN_LINE = 8;
const MIN_WORD_CHARS = 4;
/** How many lines it takes to call code moved (fewer when a whole small file went). */
const MIN_MOVED = 3;

export interface MovedCode {
  /** The file the code went to. */
  file: string;
  /** Where the code went, and where from (`src/app.cjs (moved from src/app.js)`). */
  path: string;
}

function extension(path: string): string {
  const name = path.split('/').at(-1) ?? '';
  const dot = name.lastIndexOf('.');
  return dot <= 0 ? '' : name.slice(dot + 1).toLowerCase();
}

/** Whether checkers leave `path` out by convention: a folder or a name of generated code. */
export function isConventionallyUnchecked(path: string): boolean {
  const parts = path.split('/');
  return parts.slice(0, -1).some((part) => UNCHECKED_DIR.test(part)) || UNCHECKED_NAME.test(path);
}

/** Moving code from `from` to `to` takes it out of a checker's sight. A move to a stricter language is not. */
function outOfSight(from: string, to: string): boolean {
  if (isConventionallyUnchecked(to) && !isConventionallyUnchecked(from)) return true;
  const a = extension(from);
  const b = extension(to);
  if (a === b || ALIKE.some((family) => family.has(a) && family.has(b))) return false;
  return !(JS.has(a) && TS.has(b));
}

/** A text's lines that say enough, normalised, with how often each is there. */
function lines(text: string | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const raw of (text ?? '').split('\n')) {
    const line = raw.trim().replace(/\s+/g, ' ');
    if (line.length < MIN_LINE || line.replace(/\W/g, '').length < MIN_WORD_CHARS) continue;
    out.set(line, (out.get(line) ?? 0) + 1);
  }
  return out;
}

/** What `b` holds more of than `a`: lines added going from a to b. */
function more(a: Map<string, number>, b: Map<string, number>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [line, count] of b) {
    const extra = count - (a.get(line) ?? 0);
    if (extra > 0) out.set(line, extra);
  }
  return out;
}

/**
 * Each file of `files` that took lines another of them lost, where the move takes them out of a
 * checker's sight: at least MIN_MOVED lines, or most of a file that went whole.
 */
export function movedOutOfSight(files: readonly FileVersions[]): MovedCode[] {
  const versions = files.map((file) => ({ file, before: lines(file.before), after: lines(file.after) }));
  const out: MovedCode[] = [];
  for (const to of versions) {
    if (to.file.after === undefined || to.file.before === to.file.after) continue;
    const added = more(to.before, to.after);
    if (added.size === 0) continue;
    for (const from of versions) {
      if (from === to || from.file.before === undefined || !outOfSight(from.file.path, to.file.path))
        continue;
      const lost = more(from.after, from.before);
      let moved = 0;
      for (const [line, count] of lost) moved += Math.min(count, added.get(line) ?? 0);
      const total = [...from.before.values()].reduce((sum, count) => sum + count, 0);
      const wentWhole = from.file.after === undefined && moved > 0 && moved * 2 >= total;
      if (moved >= MIN_MOVED || wentWhole) {
        out.push({ file: to.file.path, path: `${to.file.path} (moved from ${from.file.path})` });
        break;
      }
    }
  }
  return out;
}
