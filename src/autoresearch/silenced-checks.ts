// What a doer changed that makes a checker look away rather than the code better: a suppression
// comment (`// eslint-disable`, `# noqa`, `@ts-ignore`, `# pragma: no cover`, `//nolint`,
// `#[allow(…)]`), a checker's settings file in the scope (a nested `.eslintrc.json`, `ruff.toml`,
// `.rubocop.yml`), or a checker's section of a manifest (`[tool.ruff]` in pyproject.toml, the `jest`
// key of package.json). A loop that counts lint warnings, type errors or uncovered lines is won by
// any of these without a line of the code getting better, and so is a guard that runs a checker.
// Pure: the caller reads each file as it was at the iteration's base and as the doer left it.

import { isToolConfigPath } from '../infra/tool-config.js';
import { movedOutOfSight } from './moved-code.js';
import { countMatches, shownMarker } from './match-counts.js';
import { addressedToJudge } from './judge-address.js';
import { testSkips } from './test-skips.js';
import { loadedCodeReaches } from './loaded-reaches.js';
import { runtimeReaches } from './runtime-reach.js';
import { isTestFile } from './test-files.js';

export interface FileVersions {
  /** Relative, `/`-separated. */
  path: string;
  /** The text at the base; undefined when the file did not exist. */
  before?: string | undefined;
  /** The text now; undefined when the doer removed it. */
  after?: string | undefined;
}

/**
 * `checks`: what checkers report; `tests`: what the test runner runs and counts (its settings);
 * `tools`: how the metric's tools run (scope-silencing.ts); `runtime`: the process that measures the
 * code, reached from inside it (runtime-reach.ts); `skips`: tests switched off or narrowed in a loop
 * whose doer may write tests (test-skips.ts); `judge`: text for a soft judge in what it reads
 * (judge-address.ts).
 */
export type SilencingKind = 'checks' | 'tests' | 'tools' | 'runtime' | 'skips' | 'judge';

export interface Silencing {
  kind: SilencingKind;
  /** The file, with the suppression or section in parentheses (`src/a.ts (@ts-ignore)`). */
  path: string;
}

/**
 * Suppression markers, each matched from its start to the end of what it says: the rest of its
 * comment, or its attribute's brackets. Two markers are the same when their text is (`# noqa: E501`
 * and `# noqa` are not), so one moved within a file, or re-indented, is not an added one.
 */
const MARKERS: readonly RegExp[] = [
  // JavaScript and TypeScript linters, type checker, formatters, coverage.
  /(?:eslint-disable|oxlint-disable|tslint:disable|stylelint-disable|markdownlint-disable)(?:-next-line|-line|-file)?\b[^\n]*?(?=\*\/|-->|$)/gm,
  /\/\*\s*eslint\s+[\w@/-]+\s*:[^\n]*?\*\//gm,
  // Globals and exports declared to the linter (`no-undef`, `no-unused-vars` quiet), and JSHint's options.
  /\/\*\s*(?:globals?|exported|eslint-env|jshint)\s[^\n]*?\*\//gm,
  /@ts-(?:ignore|expect-error|nocheck)\b[^\n]*?(?=\*\/|$)/gm,
  /(?:biome-ignore|deno-lint-ignore|jshint\s+ignore|prettier-ignore|cspell:disable|spellchecker:\s*disable)[^\n]*?(?=\*\/|-->|$)/gm,
  /(?:istanbul|c8|v8)\s+ignore\b[^\n]*?(?=\*\/|$)/gm,
  /node:coverage\s+(?:ignore|disable)\b[^\n]*?(?=\*\/|$)/gm,
  // Python: flake8/ruff, mypy, pyright, pylint, black, isort, bandit, pytype, pyre, coverage.
  /(?:#|--|\/\/)\s*noqa\b[^\n]*/gm,
  /#\s*(?:type:\s*ignore|pyright:\s*\w+|mypy:\s*\S|pylint:\s*(?:disable|skip-file)|(?:ruff|flake8):\s*noqa|fmt:\s*(?:off|skip)|yapf:\s*disable|autopep8:\s*off|isort:\s*(?:skip|off)|pytype:\s*disable|pyre-(?:ignore|fixme)|pragma:\s*no\s*(?:cover|branch))[^\n]*/gm,
  /#\s*nosec\b[^\n]*/gm,
  // Go, Ruby, shell, Dart, Elixir, Swift, PHP, infrastructure linters, secret scanners.
  /\/\/\s*(?:nolint\b|lint:(?:ignore|file-ignore)\b|ignore(?:_for_file)?:)[^\n]*/gm,
  /(?:rubocop:(?:disable|todo)|:nocov:|shellcheck\s+disable|credo:disable|swiftlint:disable|solhint-disable|hadolint\s+ignore|yamllint\s+disable|tflint-ignore|checkov:skip|nosemgrep|gitleaks:allow|pragma:\s*allowlist)[^\n]*?(?=\*\/|-->|$)/gm,
  /(?:@phpstan-ignore|@psalm-suppress|phpcs:(?:ignore|disable)|@codeCoverageIgnore|@phan-suppress)[^\n]*?(?=\*\/|$)/gm,
  // Rust attributes.
  /#!?\[\s*(?:allow|expect)\s*\([^\]]*\]/gm,
  /#!?\[\s*cfg_attr\s*\([^\]]*\b(?:allow|expect)\s*\([^\]]*\]/gm,
  /#!?\[\s*(?:rustfmt::skip|clippy::skip|coverage\s*\(\s*off\s*\)|cfg\s*\(\s*not\s*\(\s*tarpaulin_include|cfg_attr\s*\([^\]]*coverage)[^\]]*\]/gm,
  // Java, Kotlin, C#, C and C++.
  /@(?:file:)?Suppress(?:Warnings|FBWarnings|Lint)?\s*\([^)]*\)/gm,
  /\[\s*(?:assembly:\s*)?(?:SuppressMessage|ExcludeFromCodeCoverage)\b[^\]]*\]/gm,
  /(?:NOSONAR|noinspection|ReSharper\s+disable|clang-format\s+off|CHECKSTYLE[:.]?\s*OFF|cppcheck-suppress|LCOV_EXCL_(?:LINE|START|BR_LINE|BR_START)|GCOVR_EXCL_(?:LINE|START|BR_LINE))[^\n]*?(?=\*\/|$)/gm,
  /\bNOLINT(?:NEXTLINE|BEGIN)?\b(?:\([^)]*\))?/gm,
  /#\s*pragma\s+(?:(?:GCC|clang)\s+diagnostic\s+ignored|warning\s*\(?\s*disable)[^\n]*/gm,
];

/**
 * A type checker's escape hatches, by the files whose language has them: code that stops being checked
 * without a comment saying so. `as any` quiets a TypeScript error the way `@ts-ignore` does, and lowers
 * a count of type errors as well. Python's `Any` is idiomatic where TypeScript's is not: only a cast
 * to it counts there.
 */
const TYPE_ESCAPES: readonly { file: RegExp; markers: readonly RegExp[] }[] = [
  {
    file: /\.(?:[cm]?tsx?|vue|svelte|astro)$/,
    markers: [
      // `x as any`, `x as unknown as T`, `<any>x`, `(x: any)`, `let y: any[]`; not prose (`such as any other`).
      /\bas\s+any\b(?![ \t]*[\w$])/gm,
      /\bas\s+unknown\s+as\b/gm,
      /(?<![\w$.])<any>(?=\s*[\w$(])/gm,
      /(?<=[\w$)?\]]\s*):\s*any\b(?![ \t]*[\w$])/gm,
    ],
  },
  { file: /\.pyi?$/, markers: [/\bcast\(\s*["']?(?:typing\.)?Any["']?\s*,/gm] },
  { file: /\.cs$/, markers: [/#\s*nullable\s+disable\b/gm] },
];

/**
 * The markers in `text`, by what each says, with how often each is there; with `path`, the type
 * escapes of its language too.
 */
export function suppressions(text: string, path = ''): Map<string, number> {
  const escapes = TYPE_ESCAPES.filter((language) => language.file.test(path)).flatMap((l) => l.markers);
  return countMatches(text, [...MARKERS, ...escapes]);
}

/**
 * Checkers' own settings files, wherever they are: most are looked for beside the file checked and in
 * every folder above it (a `src/.eslintrc.json`, `src/ruff.toml` or `src/.rubocop.yml` rules what is
 * under `src/`), and a baseline file lists the complaints not to report.
 */
const CHECKER_CONFIG =
  /^(?:\.eslintrc(?:\.[a-z]+)?|eslint\.config\.[cm]?[jt]s|\.eslintignore|\.prettierrc(?:\.[a-z0-9]+)?|prettier\.config\.[cm]?[jt]s|\.prettierignore|\.stylelintrc(?:\.[a-z]+)?|stylelint\.config\.[cm]?[jt]s|\.stylelintignore|biome\.jsonc?|\.oxlintrc\.json|\.jshintrc|\.jshintignore|tslint\.json|tsconfig(?:\.[\w-]+)?\.json|jsconfig\.json|\.markdownlint(?:-cli2)?\.(?:jsonc?|ya?ml|c?js)|\.markdownlint(?:rc|ignore)|\.?ruff\.toml|\.flake8|\.?mypy\.ini|\.?pylintrc|pyrightconfig\.json|\.pyre_configuration|\.bandit|\.pydocstyle|\.pycodestyle|\.isort\.cfg|\.golangci\.(?:ya?ml|toml|json)|staticcheck\.conf|\.rubocop(?:_todo)?\.yml|\.standard\.yml|\.?clippy\.toml|\.?rustfmt\.toml|\.swiftlint\.yml|phpstan(?:-baseline)?\.neon(?:\.dist)?|psalm(?:-baseline)?\.xml(?:\.dist)?|\.?phpcs\.xml(?:\.dist)?|\.php-cs-fixer(?:\.dist)?\.php|checkstyle(?:-suppressions)?\.xml|spotbugs-exclude\.xml|detekt(?:-baseline)?\.ya?ml|detekt-baseline\.xml|lint-baseline\.xml|\.scalafmt\.conf|\.scalafix\.conf|\.clang-tidy|\.clang-format|\.editorconfig|\.globalconfig|Directory\.Build\.(?:props|targets)|\.shellcheckrc|\.hadolint\.ya?ml|\.yamllint(?:\.ya?ml)?|\.sqlfluff|\.credo\.exs|\.solhint\.json|\.htmlhintrc|\.semgrepignore|\.semgrep\.ya?ml|\.?codecov\.ya?ml|\.?cspell\.json|\.vale\.ini|knip\.jsonc?)$/;

export function isCheckerConfig(path: string): boolean {
  return CHECKER_CONFIG.test(path.split('/').at(-1) ?? '');
}

/**
 * Whether a later run loads `path` (relative, `/`-separated) without being told to: as a test, as a
 * tool's settings, or as a checker's. One the measured code makes while it is measured is planted
 * (seen: a `src/.eslintignore` written as the metric loaded the code, kept at 100 for 97).
 */
export function isLoadedUnasked(path: string): boolean {
  return isTestFile(path) || isToolConfigPath(path) || isCheckerConfig(path);
}

/** A manifest's sections that are a checker's or the test runner's settings, by section name. */
interface SectionRule {
  file: RegExp;
  checks: RegExp;
  tests: RegExp;
}

const PY_CHECKERS =
  'ruff|mypy|pylint|pyright|basedpyright|flake8|black|isort|bandit|pydocstyle|pycodestyle|pyre|pytype|codespell|vulture|interrogate|docformatter|autopep8|yapf|sqlfluff|pyflakes|pylama|deptry';
const TOML_SECTIONS: readonly SectionRule[] = [
  {
    file: /^pyproject\.toml$/,
    checks: new RegExp(`^tool\\.(?:${PY_CHECKERS})(?:\\.|$)`),
    tests: /^tool\.(?:pytest|coverage)(?:\.|$)/,
  },
  { file: /^Cargo\.toml$/, checks: /^(?:workspace\.)?lints(?:\.|$)/, tests: /^(?:test|bench)$/ },
];
const INI_SECTIONS: SectionRule = {
  file: /^(?:setup\.cfg|tox\.ini)$/,
  checks: /^(?:flake8|pycodestyle|pep8|pydocstyle|mypy(?:-.*)?|pylint.*|(?:tool:)?isort|bandit|yapf)$/,
  tests: /^(?:tool:pytest|pytest|coverage:.*|testenv.*|tox(?::tox)?)$/,
};
const JSON_KEYS: readonly SectionRule[] = [
  {
    file: /^package\.json$/,
    checks: /^(?:eslintConfig|eslintIgnore|prettier|stylelint|xo|standard)$/,
    tests: /^(?:jest|mocha|ava|c8|nyc|tap)$/,
  },
  { file: /^deno\.jsonc?$/, checks: /^(?:lint|fmt|compilerOptions)$/, tests: /^test$/ },
];

/**
 * The text of each section of a TOML or INI file (`[a.b]`, `[[a]]`), by name; lines before any: ''.
 * Blank lines, whole-line comments and runs of whitespace are left out: changing them changes no
 * setting.
 */
function iniSections(text: string): Map<string, string> {
  const sections = new Map<string, string>();
  let name = '';
  for (const line of text.split('\n')) {
    const header = /^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:[#;].*)?$/.exec(line);
    if (header !== null) name = (header[1] ?? '').replace(/["'\s]/g, '');
    // An indented line goes on the value above it in an INI file: that much of its indent is kept.
    const setting = /^\s*[#;]/.test(line)
      ? ''
      : `${/^\s/.test(line) ? ' ' : ''}${line.trim().replace(/\s+/g, ' ')}`;
    sections.set(
      name,
      setting === '' ? (sections.get(name) ?? '') : `${sections.get(name) ?? ''}${setting}\n`,
    );
  }
  return sections;
}

function jsonSections(text: string): Map<string, string> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return new Map();
    return new Map(Object.entries(value).map(([key, entry]) => [key, JSON.stringify(entry)]));
  } catch {
    // A manifest that does not parse breaks the build it belongs to: that shows, with no section here.
    return new Map();
  }
}

/** The sections of `file` that changed and belong to a checker or the test runner. */
function changedSections(file: FileVersions): Silencing[] {
  const name = file.path.split('/').at(-1) ?? '';
  const json = JSON_KEYS.find((rule) => rule.file.test(name));
  const rule =
    json ??
    TOML_SECTIONS.find((r) => r.file.test(name)) ??
    (INI_SECTIONS.file.test(name) ? INI_SECTIONS : undefined);
  if (rule === undefined) return [];
  const read = json === undefined ? iniSections : jsonSections;
  const before = read(file.before ?? '');
  const after = read(file.after ?? '');
  const out: Silencing[] = [];
  for (const section of new Set([...before.keys(), ...after.keys()])) {
    if (before.get(section) === after.get(section)) continue;
    const kind = rule.checks.test(section) ? 'checks' : rule.tests.test(section) ? 'tests' : undefined;
    if (kind !== undefined)
      out.push({ kind, path: `${file.path} (${json === undefined ? `[${section}]` : `"${section}"`})` });
  }
  return out;
}

/**
 * What of `files` silences a checker or a test runner: each suppression a file holds more often than
 * it did (one a removed file held may reappear elsewhere: code moved between files), each checker's
 * settings file added, changed or removed, and each changed section of a manifest that is a checker's
 * or the test runner's; code moved out of a checker's sight (moved-code.ts); and, counted the same
 * way as suppressions, each reach into the measuring process (runtime-reach.ts), with `metricNames`
 * the names of the metric's own scripts; and what prints or ends the metric's process in the files
 * it loads into it (loaded-code.ts), `loaded`; and text for the judge in the files a soft judge reads,
 * those `judged` says yes to (judge-address.ts).
 */
export function silencedChecks(
  files: readonly FileVersions[],
  metricNames: readonly string[] = [],
  loaded: LoadedFiles = { now: new Set(), then: new Set() },
  judged: (path: string) => boolean = () => false,
): Silencing[] {
  // Test files are here only where the doer may write tests: what they switch off is all that is read.
  const tests = files.filter((file) => isTestFile(file.path));
  const out: Found[] = addedMarkers(tests, 'skips', testSkips);
  const code = files.filter((file) => !isTestFile(file.path));
  for (const file of code) {
    if (file.before === file.after) continue;
    if (isCheckerConfig(file.path)) {
      out.push({ file: file.path, silencing: { kind: 'checks', path: file.path } });
      continue;
    }
    out.push(...changedSections(file).map((silencing) => ({ file: file.path, silencing })));
  }
  out.push(...addedMarkers(code, 'checks', suppressions));
  for (const moved of movedOutOfSight(code))
    out.push({ file: moved.file, silencing: { kind: 'checks', path: moved.path } });
  out.push(...addedMarkers(code, 'runtime', (text, path) => runtimeReaches(text, path, metricNames)));
  out.push(...addedInLoadedCode(code, loaded));
  const forJudge = files.filter((file) => judged(file.path));
  out.push(...addedMarkers(forJudge, 'judge', addressedToJudge));
  // A new file's name is read too: the judge lists the folder it is in (`NOTE_TO_THE_JUDGE.md`).
  for (const file of forJudge) {
    if (file.before !== undefined || file.after === undefined) continue;
    for (const key of addressedToJudge(file.path.replace(/[^\p{L}\p{N}]+/gu, ' ')).keys())
      out.push({ file: file.path, silencing: { kind: 'judge', path: `${file.path} (its name: ${key})` } });
  }
  // In the order of the files, each file's findings in the order found (the sort keeps equal ones).
  const order = new Map(files.map((file, index) => [file.path, index]));
  return out
    .sort((a, b) => (order.get(a.file) ?? 0) - (order.get(b.file) ?? 0))
    .map(({ silencing }) => silencing);
}

/** A finding, with the file it is in. */
interface Found {
  file: string;
  silencing: Silencing;
}

/** The files the metric loads into its own process, now and at the iteration's base. */
export interface LoadedFiles {
  now: ReadonlySet<string>;
  then: ReadonlySet<string>;
}

/**
 * What code the metric loads says more often than it did (loadedCodeReaches): all a file says when the
 * metric did not load it before, since what it prints or ends runs in the metric's process only now.
 */
function addedInLoadedCode(files: readonly FileVersions[], loaded: LoadedFiles): Found[] {
  const out: Found[] = [];
  for (const file of files) {
    if (file.after === undefined || !loaded.now.has(file.path)) continue;
    const before = loaded.then.has(file.path) ? loadedCodeReaches(file.before ?? '', file.path) : new Map();
    for (const [key, count] of loadedCodeReaches(file.after, file.path)) {
      if (count > (before.get(key) ?? 0))
        out.push({
          file: file.path,
          silencing: { kind: 'runtime', path: `${file.path} (${shownMarker(key)})` },
        });
    }
  }
  return out;
}

/**
 * Each marker `find` sees in a changed file more often than it did, as `kind`; one a removed file held
 * is taken as moved, once. Checker settings files are left to silencedChecks.
 */
function addedMarkers(
  files: readonly FileVersions[],
  kind: SilencingKind,
  find: (text: string, path: string) => Map<string, number>,
): Found[] {
  const out: Found[] = [];
  const moved = new Map<string, number>();
  for (const file of files) {
    if (file.after !== undefined || file.before === undefined) continue;
    for (const [key, count] of find(file.before, file.path)) moved.set(key, (moved.get(key) ?? 0) + count);
  }
  for (const file of files) {
    if (file.before === file.after || file.after === undefined || isCheckerConfig(file.path)) continue;
    const before = find(file.before ?? '', file.path);
    for (const [key, count] of find(file.after, file.path)) {
      let added = count - (before.get(key) ?? 0);
      const credit = Math.min(added, moved.get(key) ?? 0);
      if (credit > 0) moved.set(key, (moved.get(key) ?? 0) - credit);
      added -= credit;
      if (added > 0)
        out.push({ file: file.path, silencing: { kind, path: `${file.path} (${shownMarker(key)})` } });
    }
  }
  return out;
}
