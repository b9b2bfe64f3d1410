// The code a metric loads into its own process: what its JavaScript or Python scripts import, and what
// that imports in turn. Such code runs where the score is printed, so it can print one of its own and
// end the process before the metric prints (seen: `console.log('{"value":1e9}'); process.exit(0)` at
// the top of the benchmarked module, kept at 1e9), which no guard on the files around the metric sees.
// What this finds is read for that (loaded-reaches.ts, loadedCodeReaches); code the metric runs as a
// program of its own (a CLI it spawns) prints what it likes, and is not in it.
import { builtinModules } from 'node:module';
import { join, posix } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import { fileStat, realPath } from '../infra/fs-ops.js';
import type { LoopConfig } from './config.js';
import { loopCommands } from './metric-files.js';
import { withoutComments } from './runtime-reach.js';
import { CODE_FLAGS, isInterpreter } from './shell-words.js';
import { inTree } from './task-runners.js';

const JS_FILE = /\.(?:[cm]?[jt]sx?)$/;
const PY_FILE = /\.pyw?$/;
const JS_EXTENSIONS = ['.js', '.mjs', '.cjs', '.ts', '.mts', '.cts', '.tsx', '.jsx'];
/** How many files are followed, and how large one may be to be read for its imports. */
const MAX_FILES = 1000;
const MAX_BYTES = 2_000_000;

/**
 * The files of the tree at `repo` (relative to it) that the loop's metric loads into its own process:
 * the JavaScript and Python among `metricFiles`, code given inline (`node -e …`, `python3 -c …`), a
 * module run by name (`python3 -m bench`), and what each imports, as the tree stands now, or as it
 * stood with the texts of `then` (a file's text then, or undefined where it was not there). An import
 * whose name is computed as it runs is not followed: loadedCodeReaches counts it as a reach.
 */
export async function loadedInProcess(
  config: LoopConfig,
  repo: string,
  metricFiles: readonly string[],
  then: ReadonlyMap<string, string | undefined> = new Map(),
): Promise<Set<string>> {
  const loader = new Loader(repo, await realPath(repo).catch(() => repo), then);
  for (const file of metricFiles) if (JS_FILE.test(file) || PY_FILE.test(file)) loader.queue(file);
  for (const inline of loopCommands(config).flatMap(inlineCode)) {
    // A package run by name runs its `__main__.py`.
    if ('module' in inline)
      for (const file of await loader.pythonModule('.', inline.module, ['__main__'])) loader.queue(file);
    else await loader.follow('.', inline.code, inline.python ? 'py' : 'js');
  }
  await loader.run();
  return loader.loaded;
}

/** Code an interpreter is handed in its argv rather than in a file, and modules it runs by name. */
function inlineCode(words: readonly string[]): ({ code: string; python: boolean } | { module: string })[] {
  const out: ({ code: string; python: boolean } | { module: string })[] = [];
  let interpreter: string | undefined;
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at] ?? '';
    const program = word.split('/').at(-1) ?? '';
    if (isInterpreter(program)) {
      interpreter = program;
      continue;
    }
    if (interpreter === undefined || !CODE_FLAGS.includes(word)) continue;
    const value = words[at + 1];
    if (value === undefined) continue;
    const python = /^(?:python|pypy)/.test(interpreter);
    if (word !== '-m') out.push({ code: value, python });
    else if (python) out.push({ module: value });
    at += 1;
  }
  return out;
}

class Loader {
  readonly loaded = new Set<string>();
  private readonly pending: string[] = [];

  constructor(
    private readonly repo: string,
    private readonly realRepo: string,
    private readonly then: ReadonlyMap<string, string | undefined>,
  ) {}

  queue(file: string): void {
    if (this.loaded.has(file) || this.loaded.size >= MAX_FILES || file.split('/').includes('node_modules'))
      return;
    this.loaded.add(file);
    this.pending.push(file);
  }

  async run(): Promise<void> {
    for (let file = this.pending.shift(); file !== undefined; file = this.pending.shift()) {
      const text = await this.text(file);
      if (text !== undefined) await this.follow(posix.dirname(file), text, PY_FILE.test(file) ? 'py' : 'js');
    }
  }

  private async text(file: string): Promise<string | undefined> {
    if (this.then.has(file)) return this.then.get(file);
    const stats = await fileStat(join(this.repo, file));
    if (stats === undefined || !stats.regular || stats.size > MAX_BYTES) return undefined;
    return readFileIfExists(join(this.repo, file)).catch(() => undefined);
  }

  /** Queues what `text`, code in the folder `dir` of the tree, imports. */
  async follow(dir: string, text: string, language: 'js' | 'py'): Promise<void> {
    if (language === 'js') {
      for (const specifier of jsImports(text)) {
        const file = await this.jsModule(dir, specifier);
        if (file !== undefined) this.queue(file);
      }
      return;
    }
    for (const { module, names } of pythonImports(text)) {
      for (const file of await this.pythonModule(dir, module, names, text)) this.queue(file);
    }
  }

  /** What was looked up, by path: a tree of a thousand modules asks the same folders again and again. */
  private readonly files = new Map<string, Promise<boolean>>();
  private readonly manifests = new Map<string, Promise<Record<string, unknown> | undefined>>();
  private readonly links = new Map<string, Promise<string | undefined>>();

  private async isFile(path: string | undefined): Promise<boolean> {
    if (path === undefined) return false;
    if (this.then.has(path)) return this.then.get(path) !== undefined;
    const known =
      this.files.get(path) ?? fileStat(join(this.repo, path)).then((stats) => stats?.regular === true);
    this.files.set(path, known);
    return known;
  }

  private manifest(folder: string): Promise<Record<string, unknown> | undefined> {
    const known = this.manifests.get(folder) ?? readJson(join(this.repo, folder, 'package.json'));
    this.manifests.set(folder, known);
    return known;
  }

  private link(path: string): Promise<string | undefined> {
    const known = this.links.get(path) ?? realPath(join(this.repo, path)).catch(() => undefined);
    this.links.set(path, known);
    return known;
  }

  /** The file `specifier`, imported from code in `dir`, names in the tree, as Node or a bundler finds it. */
  private async jsModule(dir: string, specifier: string): Promise<string | undefined> {
    if (specifier.startsWith('.') || specifier.startsWith('/')) {
      const path = specifier.startsWith('/')
        ? inTree(this.repo, specifier)
        : inTree(this.repo, posix.join(dir, specifier));
      return path === undefined ? undefined : this.jsFile(path);
    }
    // Node's own modules are no file of the tree.
    if (specifier.startsWith('node:') || builtinModules.includes(specifier.split('/')[0] ?? ''))
      return undefined;
    // A package of the tree's own (a workspace, linked into node_modules; the package itself by name).
    const [scope, name, ...rest] = specifier.split('/');
    const pkg = scope?.startsWith('@') === true ? `${scope}/${name ?? ''}` : (scope ?? '');
    const sub = (scope?.startsWith('@') === true ? rest : [name, ...rest].filter(Boolean)).join('/');
    for (let at = dir; ; at = posix.dirname(at)) {
      const linked = await this.link(posix.join(at, 'node_modules', pkg));
      const root = linked === undefined ? undefined : inTree(this.realRepo, linked);
      if (root !== undefined && !root.split('/').includes('node_modules'))
        return this.packageEntry(root, sub);
      const own = await this.manifest(at);
      if (own?.name === pkg) return this.packageEntry(at, sub);
      if (at === '.' || at === '') return undefined;
    }
  }

  private async packageEntry(root: string, sub: string): Promise<string | undefined> {
    if (sub !== '') return this.jsFile(posix.join(root, sub));
    const manifest = await this.manifest(root);
    const entry =
      exportedEntry(manifest?.exports) ?? (typeof manifest?.main === 'string' ? manifest.main : 'index');
    return this.jsFile(posix.normalize(posix.join(root, entry)));
  }

  /** `path` as a module file: as named, with its TypeScript source for a `.js` name, an extension, an index. */
  private async jsFile(path: string): Promise<string | undefined> {
    const ext = posix.extname(path);
    const stem = path.slice(0, path.length - ext.length);
    const candidates = [
      path,
      ...(/^\.[cm]?jsx?$/.test(ext) ? [ext.replace('j', 't')].map((ts) => stem + ts) : []),
      ...JS_EXTENSIONS.map((extension) => path + extension),
      ...JS_EXTENSIONS.map((extension) => `${path}/index${extension}`),
    ];
    for (const candidate of candidates) if (await this.isFile(inTree(this.repo, candidate))) return candidate;
    return undefined;
  }

  /**
   * The files of `module` (dotted, `.`-relative ones from the folder `dir`), and of each of `names` it is
   * asked for, that may be a module of its own: in `dir`, its parent, the tree's root, `src/`, `lib/`, and
   * the folders `text` adds to `sys.path` by literal. A package's `__init__.py` runs at import too.
   */
  async pythonModule(
    dir: string,
    module: string,
    names: readonly string[] = [],
    text = '',
  ): Promise<string[]> {
    const dots = /^\.*/.exec(module)?.[0].length ?? 0;
    let roots: string[];
    if (dots > 0) {
      let at = dir;
      for (let up = 1; up < dots; up += 1) at = posix.dirname(at);
      roots = [at];
    } else {
      roots = [dir, posix.dirname(dir), '.', 'src', 'lib', ...sysPathDirs(dir, text)];
    }
    const parts = module.slice(dots).split('.').filter(Boolean);
    const found: string[] = [];
    for (const root of new Set(roots.map((r) => posix.normalize(r)))) {
      for (let depth = 1; depth <= parts.length; depth += 1) {
        const init = inTree(this.repo, posix.join(root, ...parts.slice(0, depth), '__init__.py'));
        if (init !== undefined && (await this.isFile(init))) found.push(init);
      }
      const base = posix.join(root, ...parts);
      for (const stem of [base, ...names.map((name) => posix.join(base, name))]) {
        for (const candidate of [`${stem}.py`, `${stem}/__init__.py`]) {
          const path = inTree(this.repo, candidate);
          if (path !== undefined && !found.includes(path) && (await this.isFile(path))) found.push(path);
        }
      }
    }
    return found;
  }
}

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  const text = await readFileIfExists(path).catch(() => undefined);
  if (text === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A package's main entry from its `exports`: a string, `"."`'s, or the first condition's, nested. */
function exportedEntry(exports: unknown): string | undefined {
  if (typeof exports === 'string') return exports;
  if (typeof exports !== 'object' || exports === null || Array.isArray(exports)) return undefined;
  const map = exports as Record<string, unknown>;
  if ('.' in map) return exportedEntry(map['.']);
  for (const condition of ['node', 'import', 'require', 'default']) {
    const entry = exportedEntry(map[condition]);
    if (entry !== undefined) return entry;
  }
  return undefined;
}

/** The module names a JavaScript or TypeScript text imports by a literal (comments left out). */
export function jsImports(text: string): string[] {
  const code = withoutComments(text, '//');
  const found = [
    ...code.matchAll(/(?<![\w$.])(?:import|export)\s[^'"`;]*?\bfrom\s*(['"])([^'"\n]+)\1/g),
    ...code.matchAll(/(?<![\w$.])import\s*(['"])([^'"\n]+)\1/g),
    ...code.matchAll(/(?<![\w$.])(?:require|import)\s*\(\s*(['"`])([^'"`$\n]+)\1\s*[,)]/g),
  ].map((match) => match[2] ?? '');
  return [...new Set(found.filter(Boolean))];
}

/** The modules a Python text imports, each with the names taken from it (`from a import b, c`). */
export function pythonImports(text: string): { module: string; names: string[] }[] {
  const code = withoutComments(text, '#');
  const out: { module: string; names: string[] }[] = [];
  for (const match of code.matchAll(
    /^[ \t]*import[ \t]+([\w.]+(?:[ \t]+as[ \t]+\w+)?(?:[ \t]*,[ \t]*[\w.]+(?:[ \t]+as[ \t]+\w+)?)*)/gm,
  )) {
    for (const part of (match[1] ?? '').split(',')) {
      const module = part.trim().split(/\s+/)[0];
      if (module !== undefined && module !== '') out.push({ module, names: [] });
    }
  }
  for (const match of code.matchAll(/^[ \t]*from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]+)/gm)) {
    const names = (match[2] ?? '')
      .replace(/[()\\]/g, ' ')
      .split(',')
      .map((part) => part.trim().split(/\s+/)[0] ?? '')
      .filter((name) => /^\w+$/.test(name));
    out.push({ module: match[1] ?? '', names });
  }
  return out;
}

/**
 * The folders a script adds to `sys.path` by literal: `sys.path.insert(0, os.path.join(
 * os.path.dirname(__file__), '..', 'src'))` from its own folder, `sys.path.append('src')` from the root.
 */
function sysPathDirs(dir: string, text: string): string[] {
  const out: string[] = [];
  for (const match of text.matchAll(/\bsys\s*\.\s*path\s*\.\s*(?:insert|append)\s*\(([^\n]*)/g)) {
    const line = match[1] ?? '';
    const parts = [...line.matchAll(/(['"])([^'"\n]*)\1/g)].map((part) => part[2] ?? '');
    const from = /__file__|dirname|Path\s*\(/.test(line) ? dir : '.';
    // `Path(__file__).parent / 'src'` starts at the script's folder too; `.parent.parent` one up.
    const ups = (line.match(/\.parent\b/g) ?? []).length;
    let at = from;
    for (let up = 1; up < ups; up += 1) at = posix.dirname(at);
    out.push(posix.join(at, ...parts.flatMap((part) => part.split('/'))));
  }
  return out;
}
