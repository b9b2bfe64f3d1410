// What a doer wrote that reaches into the process measuring it, rather than making the artifact better:
// code that patches the runtime the metric runs in (`performance.now = () => 0`, `console.log = …`
// rewriting the score the metric prints, `process.on('exit', …)` printing one after it, `sys.stdout =
// …`, `time.perf_counter = …`; by brackets or through a name of its own too), hooks the module loader,
// makes code from text as it runs (`eval`, `exec`: what no reading sees into), or names the metric's
// own files or the loop's ledger (code that behaves differently when it knows it is measured). The
// metric loads the doer's code into its own process, so no guard on the files around it sees this: it
// is read from the code. A reading, not a proof: code can still hide a reach from it, and the note
// says so. Pure: the caller hands each file's text as it was at the iteration's base and as the doer
// left it.

import { countMatches } from './match-counts.js';
import { isTestFile } from './test-files.js';

/** Each pattern is matched from its start; two findings are the same when their text is. */
interface Language {
  file: RegExp;
  patterns: readonly RegExp[];
  /** A name the code gives a runtime object (`const p = performance`), in its first group. */
  alias: RegExp;
  /** What reaches through such a name, as `patterns` do through the object's own. */
  aliasUse: (name: string) => RegExp;
}

const JS_GLOBALS = String.raw`console|performance|Math|JSON|Date|Reflect|Atomics|Intl|globalThis|global`;
const JS_PROTOTYPES = String.raw`(?:Object|Array|String|Number|Boolean|Function|Promise|Map|Set|WeakMap|Date|RegExp|Error|Symbol|BigInt|ArrayBuffer|Uint8Array|Buffer)\s*\.\s*prototype`;
const JS_TARGETS = String.raw`(?:${JS_GLOBALS}|process(?:\s*\.\s*[\w$]+)?|${JS_PROTOTYPES})`;
const ASSIGN = String.raw`\s*(?:[-+*/%|&^]|\?\?|\|\||&&)?=(?![=>])`;
/** A member, by name or by brackets, and the members under it: `.now`, `['now']`, `.hrtime.bigint`. */
const JS_MEMBERS = String.raw`(?:\s*\.\s*[\w$]+|\s*\[[^\]\n]+\])+`;
const PROCESS_PARTS =
  'stdout|stderr|hrtime|exit|reallyExit|emit|kill|abort|nextTick|binding|memoryUsage|cpuUsage|uptime';
const PY_MODULES =
  'sys|time|builtins|__builtins__|os|timeit|gc|atexit|random|io|math|json|importlib|inspect|threading|signal|resource|cProfile|tracemalloc';
const escape = (name: string) => name.replace(/\$/g, '\\$');
/** Test frameworks and assertion libraries: what the tests load to test the code, not the code's own. */
const TEST_LIBRARIES = String.raw`node:test|vitest|@vitest\/[\w.-]+|jest|@jest\/[\w.-]+|chai|chai-[\w.-]+|mocha|jasmine|ava|tap|tape|uvu(?:\/[\w.-]+)?|expect|should|sinon`;
const ASSERT_MODULE = String.raw`['"\x60](?:node:)?assert(?:\/strict)?['"\x60]`;
const PY_TEST_LIBRARIES = 'pytest|_pytest|unittest|nose2?|pluggy';

const LANGUAGES: readonly Language[] = [
  {
    file: /\.(?:[cm]?[jt]sx?|vue|svelte|astro)$/,
    patterns: [
      // A runtime global's member replaced: `performance.now = …`, `console['log'] = …`, `Math.random = …`.
      new RegExp(String.raw`(?<![\w$.])(?:${JS_GLOBALS})${JS_MEMBERS}${ASSIGN}`, 'gm'),
      // The process's output, clock, exit and events: `process.stdout.write = …`, `process.hrtime.bigint = …`.
      new RegExp(
        String.raw`(?<![\w$.])process\s*(?:\.\s*(?:${PROCESS_PARTS})\b|\[\s*['"\x60](?:${PROCESS_PARTS})['"\x60]\s*\])(?:${JS_MEMBERS})?${ASSIGN}`,
        'gm',
      ),
      // A built-in's prototype: `Array.prototype.sort = …`.
      new RegExp(String.raw`(?<![\w$.])${JS_PROTOTYPES}${JS_MEMBERS}${ASSIGN}`, 'gm'),
      new RegExp(
        String.raw`\b(?:Object\s*\.\s*(?:defineProperty|defineProperties|assign|setPrototypeOf)|Reflect\s*\.\s*(?:set|defineProperty|setPrototypeOf))\s*\(\s*${JS_TARGETS}\s*,`,
        'gm',
      ),
      // Something said after the metric has printed its own.
      /\bprocess\s*\.\s*(?:on|once|prependListener|prependOnceListener|addListener)\s*\(\s*['"`](?:exit|beforeExit)['"`]/gm,
      // The module loader hooked: what the metric imports is not what it names.
      /(?:\bModule|\bmodule\s*\.\s*constructor|\))\s*\.\s*(?:_load|_resolveFilename|_extensions|_compile|_cache)\b/gm,
      /\bregisterHooks\s*\(/gm,
      /\brequire\s*\.\s*cache\b/gm,
      // An end no runner around it sees coming, wherever the code runs (a test runner's worker too).
      /(?<![\w$.])process\s*\.\s*(?:reallyExit|abort)\s*\(|\bprocess\s*\.\s*kill\s*\(\s*process\s*\.\s*pid\b/gm,
      // What tests the code: a test framework or an assertion library reached from the code under test
      // (seen: \`assert.equal = () => {}\` in a module the tests import, kept with a wrong result).
      new RegExp(
        String.raw`(?:\bfrom|\bimport|\brequire\s*\(|\bimport\s*\()\s*['"\x60](?:${TEST_LIBRARIES})['"\x60]`,
        'gm',
      ),
      /(?<![\w$.])(?:expect\s*\.\s*(?:extend|addSnapshotSerializer)|chai\s*\.\s*(?:use|Assertion|assert|expect)|(?:jest|vi)\s*\.\s*[\w$]+)\b|(?<![\w$.])(?:beforeAll|afterAll|beforeEach|afterEach)\s*\(/gm,
      /(?<![\w$])(?:globalThis|global|window|self)\s*(?:\.\s*|\[\s*['"`])(?:expect|describe|it|test|before|after|beforeEach|afterEach|beforeAll|afterAll|vi|jest|chai|assert)\b/gm,
      // A value made to pass every comparison: jest's and vitest's \`toEqual\` take any object with an
      // \`asymmetricMatch\` method for a matcher and ask it.
      /\basymmetricMatch(?:er)?\b/gm,
      // A test the code under test registers, as the only one (jest's and vitest's \`.only\` is the file's,
      // mocha's the run's) or skipped, through the framework's globals.
      /(?<![\w$.])(?:it|test|describe|suite|specify)\s*\.\s*(?:only|skip|todo|skipIf|runIf|fails)\s*\(|(?<![\w$.])(?:xit|fit|xtest|xdescribe|fdescribe)\s*\(/gm,
      // Asking whether it is tested: a framework's globals there, NODE_ENV set to `test` (jest and
      // vitest set it): code that asks does otherwise when tested.
      /\btypeof\s+(?:describe|it|expect|jest|vi|suite|beforeEach|afterEach|beforeAll|afterAll)\b/gm,
      /\bNODE_ENV['"`]?\s*\]?\s*[!=]==?\s*['"`]test['"`]|['"`]test['"`]\s*[!=]==?\s*[\w$.[\]'"`]*NODE_ENV\b/gm,
      // Code made from text as it runs, which no reading of the code sees.
      /(?<![\w$.])eval\s*\(/gm,
      // eval handed on and called by another name (`(0, eval)('this')` is the global object).
      /(?<![\w$.'"`])eval\b(?![\w$'"`]|\s*\()/gm,
      /(?<![\w$.])(?:new\s+)?Function\s*\(/gm,
      // The same reached without its name (red team: `(() => {}).constructor` called on a decoded text,
      // and a `data:` URL imported, each kept a JSON.stringify patch at 1000 for a worse 5): a function's
      // constructor, `Reflect.construct(Function, …)`, a module made from text, an object URL.
      /\)\s*\.\s*constructor\b|(?<!\bnew\s+[\w$.\s]*)\.\s*constructor\s*\(|\[\s*['"`]constructor['"`]\s*\]/gm,
      /\bReflect\s*\.\s*construct\s*\(\s*Function\b/gm,
      /['"`]\s*(?:data:(?:text|application)\/(?:javascript|ecmascript|x-javascript|wasm)|blob:)/gim,
      /\bURL\s*\.\s*createObjectURL\s*\(/gm,
      /['"`](?:node:)?vm['"`]/gm,
    ],
    alias: new RegExp(
      [
        String.raw`\b(?:const|let|var)\s+([\w$]+)\s*=\s*(?:${JS_GLOBALS}|process|${JS_PROTOTYPES})(?:\s*\.\s*[\w$]+)*\s*(?=[;,\n)])`,
        // node:assert, by the name an import or a require gives it.
        String.raw`\bimport\s+(?:\*\s*as\s+)?([\w$]+)\s+from\s*${ASSERT_MODULE}`,
        String.raw`\bimport\s*\{[^}]*\bstrict\s+as\s+([\w$]+)[^}]*\}\s*from\s*${ASSERT_MODULE}`,
        String.raw`\b(?:const|let|var)\s+([\w$]+)\s*=\s*require\s*\(\s*${ASSERT_MODULE}\s*\)`,
      ].join('|'),
      'gm',
    ),
    aliasUse: (name) =>
      new RegExp(
        String.raw`(?<![\w$.])${escape(name)}${JS_MEMBERS}${ASSIGN}|\b(?:Object\s*\.\s*(?:defineProperty|defineProperties|assign|setPrototypeOf)|Reflect\s*\.\s*(?:set|defineProperty|setPrototypeOf))\s*\(\s*${escape(name)}\s*,`,
        'gm',
      ),
  },
  {
    file: /\.pyw?$/,
    patterns: [
      // `sys.stdout = …`, `time.perf_counter = …`, `builtins.print = …`, `random.random = …`.
      new RegExp(
        String.raw`(?<![\w.])(?:${PY_MODULES})\s*\.\s*\w+(?:\s*\.\s*\w+)*\s*(?:[-+*/%|&^]|\/\/|\*\*)?=(?!=)`,
        'gm',
      ),
      new RegExp(String.raw`\bsetattr\s*\(\s*(?:${PY_MODULES})\s*,`, 'gm'),
      new RegExp(
        String.raw`(?<![\w.])(?:(?:${PY_MODULES})\s*\.\s*__dict__|vars\s*\(\s*(?:${PY_MODULES})\s*\))`,
        'gm',
      ),
      /\b(?:atexit\s*\.\s*register|sys\s*\.\s*(?:settrace|setprofile|addaudithook|displayhook|excepthook)|threading\s*\.\s*(?:settrace|setprofile))\b/gm,
      /\bsys\s*\.\s*(?:modules\s*\[[^\]\n]*\]\s*=(?!=)|meta_path|path_hooks)/gm,
      /\b__builtins__\b/gm,
      /\bos\s*\.\s*(?:_exit|abort)\s*\(|\bos\s*\.\s*kill(?:pg)?\s*\(\s*os\s*\.\s*get(?:pid|pgid|ppid)\b/gm,
      // A value made to pass every comparison (seen: \`work()\` returning an object whose \`__eq__\` is
      // \`return True\` passed both the metric's \`assert r == 500000\` and the guard's \`assertEqual\`,
      // kept thousands of times faster): a comparison or a truth answered by a constant.
      /\bdef\s+__(?:eq|ne|lt|le|gt|ge|contains|bool)__\s*\([^)]*\)\s*(?:->[^:\n]*)?:\s*(?:#[^\n]*)?\s*return\s+(?:True|False|1|0)\s*$/gm,
      /\b__(?:eq|ne|lt|le|gt|ge|contains|bool)__\s*=\s*lambda\b[^:\n]*:\s*(?:True|False|1|0)\s*$/gm,
      // What tests the code, reached from the code under test: pytest's or unittest's machinery.
      new RegExp(String.raw`^[ \t]*(?:import|from)[ \t]+(?:${PY_TEST_LIBRARIES})\b`, 'gm'),
      new RegExp(String.raw`['"](?:${PY_TEST_LIBRARIES})(?:\.[\w.]+)?['"]`, 'gm'),
      // Code made from text as it runs.
      /(?<![\w.])(?:exec|eval|compile|__import__)\s*\(/gm,
      // Any class or module reached with no import a reading sees: `object.__subclasses__()` finds
      // `Popen` or unittest's `SkipTest`, a function's `__globals__` the modules it was defined among.
      /\b__(?:subclasses|globals)__\b/gm,
    ],
    alias: new RegExp(
      String.raw`^[ \t]*(?:import\s+(?:${PY_MODULES})\s+as\s+(\w+)|(\w+)\s*=\s*(?:${PY_MODULES})[ \t]*$)`,
      'gm',
    ),
    aliasUse: (name) =>
      new RegExp(
        String.raw`(?<![\w.])${name}\s*\.\s*\w+(?:\s*\.\s*\w+)*\s*(?:[-+*/%|&^]|\/\/|\*\*)?=(?!=)|\bsetattr\s*\(\s*${name}\s*,`,
        'gm',
      ),
  },
];

/** Files whose words run: where a name of the metric's is a reach, not prose. */
const CODE_FILE =
  /\.(?:[cm]?[jt]sx?|vue|svelte|astro|pyw?|rb|go|rs|java|kt|kts|scala|cs|fs|swift|php|pl|pm|lua|r|jl|ex|exs|erl|hs|ml|dart|c|cc|cpp|cxx|h|hh|hpp|m|mm|zig|nim|sh|bash|zsh|ps1)$/i;

/**
 * The loop's own files, named in code: the ledger, its signals, its environment; and what a test
 * runner sets in the processes it tests (`NODE_TEST_CONTEXT`, `VITEST`, `JEST_WORKER_ID`,
 * `PYTEST_CURRENT_TEST`, `import.meta.vitest`, vitest's `globalThis.__vitest_worker__`) or npm in the
 * scripts it runs (`npm_lifecycle_event`: `test` under `npm test`, `bench` under `npm run bench`):
 * code that asks is code that does otherwise when tested, as when it ends the test's process before a
 * failing test runs.
 */
const LOOP_NAMES =
  /\.autoresearch\b|research-log|\bFORGE_[A-Z][A-Z0-9_]*|\b(?:NODE_TEST_CONTEXT|VITEST(?:_[A-Z_]+)?|JEST_WORKER_ID|PYTEST_CURRENT_TEST|PYTEST_VERSION|PYTEST_XDIST_WORKER|MOCHA_[A-Z_]+|npm_lifecycle_event|npm_lifecycle_script|npm_command)\b|\bimport\s*\.\s*meta\s*\.\s*vitest\b|\b__vitest_\w+/g;

/** A count as code writes it: a number, or one filled in (`{n}`, `${n}`, `%d`, `' + n + '`). */
const COUNT = String.raw`(?:\d+|\{[^}\n]*\}|\$\{[^}\n]*\}|%[ds]|['"\x60]\s*\+[^+\n]*\+\s*['"\x60])`;
/** Where a summary's first word starts: not inside a word, but after an escape (`'\nRan 2 tests'`). */
const STARTS = String.raw`(?:(?<![\w$])|(?<=\\[nrt]))`;
/**
 * A test runner's summary written out by the code under test (`Ran 2 tests in`, `5 passing (`, `# pass
 * 5`): a guard is held to the tests its runner's summary says it passed (test-summary.ts), and code
 * that prints one of its own and ends the process forges that count.
 */
const RUNNER_SUMMARIES = new RegExp(
  [
    String.raw`${STARTS}Ran ${COUNT}\s*tests?\b`,
    String.raw`${STARTS}${COUNT} passing \(`,
    String.raw`(?<=^|['"\x60\n]|\\n)[ \t]*(?:#|\u2139) pass ${COUNT}`,
    String.raw`${STARTS}test result: ok\.`,
    String.raw`${STARTS}${COUNT} passed in \d`,
    String.raw`${STARTS}Tests:\s+${COUNT} passed`,
    String.raw`${STARTS}OK \(${COUNT} tests?,`,
    String.raw`${STARTS}${COUNT} examples?, 0 failures\b`,
  ].join('|'),
  'gm',
);

/**
 * What in `text` (the file `path`) reaches into the process measuring it, by what each says, with how
 * often each is there. `metricNames` are the file names of the metric's own scripts (`score.mjs`): code
 * that names one knows it is measured, or reads how.
 */
export function runtimeReaches(
  text: string,
  path: string,
  metricNames: readonly string[] = [],
): Map<string, number> {
  const found = new Map<string, number>();
  const add = (key: string) => found.set(key, (found.get(key) ?? 0) + 1);
  for (const language of LANGUAGES) {
    if (!language.file.test(path)) continue;
    const aliases = [...text.matchAll(language.alias)].flatMap((match) => match.slice(1).filter(Boolean));
    countMatches(text, [...language.patterns, ...[...new Set(aliases)].map(language.aliasUse)], found);
  }
  if (!CODE_FILE.test(path)) return found;
  // A comment may say how the code is measured (`// hot path of bench.mjs`): only the code counts.
  text = withoutComments(text, HASH_COMMENTS.test(path) ? '#' : '//');
  for (const match of text.matchAll(LOOP_NAMES)) add(`names ${match[0]}`);
  for (const match of text.matchAll(RUNNER_SUMMARIES))
    add(`writes a test runner's summary (${match[0].trim()})`);
  for (const name of new Set(metricNames)) {
    let at = text.indexOf(name);
    while (at >= 0) {
      const before = text[at - 1] ?? '';
      const after = text[at + name.length] ?? '';
      // As a name of its own, not part of a longer one (`score.mjs` in `myscore.mjs`); a folder
      // (`metric/`) from the tree's root, not another of that name (`src/metric/`).
      const folder = name.endsWith('/');
      if (!(folder ? /[\w./-]/ : /[\w.-]/).test(before) && (folder || !/\w/.test(after)))
        add(`names ${name}`);
      at = text.indexOf(name, at + name.length);
    }
  }
  return found;
}

/** Languages whose comments start with `#`; the others' with `//` (and `/* … *\/`). */
export const HASH_COMMENTS = /\.(?:pyw?|rb|pl|pm|r|jl|ex|exs|sh|bash|zsh|ps1|nim)$/i;

/**
 * `text` without its comments, strings kept whole (a `//` in `"http://…"` starts none): a reading that
 * is enough to tell a name in code from one in a comment.
 */
export function withoutComments(text: string, line: '#' | '//'): string {
  let out = '';
  let quote: string | undefined;
  for (let at = 0; at < text.length; at += 1) {
    const char = text[at] ?? '';
    if (quote !== undefined) {
      out += char;
      if (char === '\\') out += text[(at += 1)] ?? '';
      // A quote or apostrophe left open (a Rust lifetime, a quote in prose) ends with its line.
      else if (char === quote || (char === '\n' && quote !== '`')) quote = undefined;
      continue;
    }
    const starts = (token: string) => text.startsWith(token, at);
    if (starts(line)) {
      const end = text.indexOf('\n', at);
      if (end < 0) break;
      at = end - 1;
      continue;
    }
    if (line === '//' && starts('/*')) {
      const end = text.indexOf('*/', at + 2);
      if (end < 0) break;
      at = end + 1;
      continue;
    }
    if (char === '"' || char === "'" || char === '`') quote = char;
    out += char;
  }
  return out;
}

/**
 * The names a doer's code would know the metric by: each metric script's own name, where it says
 * something (`score.mjs`, `bench.py`), not a task runner's file every project has, nor the data a
 * metric reads (`words.txt`), which the artifact may well read too.
 */
export function metricNames(metricFiles: readonly string[]): string[] {
  const names = metricFiles
    .map((path) => path.split('/').at(-1) ?? '')
    .filter(
      (name) =>
        /^[\w-]{3,}\.\w+$/.test(name) && CODE_FILE.test(name) && !COMMON_NAMES.has(name.toLowerCase()),
    );
  return [...new Set(names)];
}

/** The folders of the metric's scripts (not tests it names: theirs are the project's) that hold no scope. */
export function metricFolders(
  metricFiles: readonly string[],
  heldByScope: (folder: string) => boolean,
): string[] {
  const code = metricFiles.filter((path) => CODE_FILE.test(path) && path.includes('/') && !isTestFile(path));
  const folders = new Set(code.map((path) => path.slice(0, path.lastIndexOf('/'))));
  return [...folders].filter((folder) => !heldByScope(folder)).sort();
}

/**
 * The names of the files kept beside the metric's scripts, in a folder of their own: the cases a
 * metric checks, with their answers (seen: a solver that read `../metric/cases.json` and returned
 * each case's expected answer, kept at 100 from 33). Code that names one reads the metric's key. Not
 * the tree's root nor a folder the doer may change (its files are the artifact's), and not a name a
 * file elsewhere in the tree also has (the artifact's own `utils.js`), nor one every project has.
 * `tree` is every file of the tree; `inScope` says whether a path lies in the doer's scope.
 */
export function metricFolderNames(
  tree: readonly string[],
  metricFiles: readonly string[],
  inScope: (path: string) => boolean,
): string[] {
  const holdsScope = (folder: string) => tree.some((path) => path.startsWith(`${folder}/`) && inScope(path));
  const folders = new Set(metricFolders(metricFiles, (folder) => holdsScope(folder) || inScope(folder)));
  const inFolder = (path: string) => [...folders].some((folder) => path.startsWith(`${folder}/`));
  const elsewhere = new Set(tree.filter((path) => !inFolder(path)).map((path) => baseName(path)));
  // The folder too, as the tree's root names it (`metric/`) and as a sibling does (`../metric`).
  const names = [...folders].flatMap((folder) => [`${folder}/`, `../${baseName(folder)}`]);
  names.push(
    ...tree
      .filter(inFolder)
      .map(baseName)
      .filter(
        (name) =>
          /^[\w-]{3,}\.\w+$/.test(name) && !COMMON_NAMES.has(name.toLowerCase()) && !elsewhere.has(name),
      ),
  );
  return [...new Set(names)].slice(0, MAX_FOLDER_NAMES);
}

/** How many names of the metric's folders are looked for (a folder of 10,000 fixtures: the first). */
const MAX_FOLDER_NAMES = 500;

const baseName = (path: string) => path.slice(path.lastIndexOf('/') + 1);

const COMMON_NAMES = new Set([
  'package.json',
  'pyproject.toml',
  'cargo.toml',
  'go.mod',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'settings.gradle',
  'settings.gradle.kts',
  'deno.json',
  'deno.jsonc',
  'composer.json',
  'cmakelists.txt',
  'mix.exs',
  'build.sbt',
  'package.swift',
  'setup.cfg',
  'tox.ini',
  'noxfile.py',
  'tasks.py',
  'dodo.py',
  'invoke.yaml',
  'taskfile.yml',
  'taskfile.yaml',
  'rakefile.rb',
  'index.js',
  'index.ts',
  'main.py',
  'main.go',
  'main.rs',
  'lib.rs',
  'mod.rs',
  '__init__.py',
  'conftest.py',
  'setup.py',
]);
