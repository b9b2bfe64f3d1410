// Hard-metric scorers: read a score off a metric command's output, or say why there is none (a crash).
import type { ProcessResult } from '../infra/process.js';
import { parseJsonPath, type ScoreSource } from './config.js';
import { findJsonValues } from './json-text.js';

/** A score with the evidence it was read from, or why there is none (the arbiter records a crash). */
export type ScoreResult = { ok: true; score: number; evidence: string } | { ok: false; reason: string };

/** Enough of the output's end for a user to see why no score came out of it. */
const TAIL_CHARS = 500;

export function extractScore(
  source: ScoreSource,
  result: ProcessResult,
  timeoutSeconds?: number,
): ScoreResult {
  if (result.spawnError !== undefined)
    return { ok: false, reason: `the metric command could not start: ${result.spawnError}` };
  if (result.timedOut) {
    return {
      ok: false,
      reason: `the metric command timed out${timeoutSeconds === undefined ? '' : ` after ${timeoutSeconds}s`}`,
    };
  }
  if (result.aborted) return { ok: false, reason: 'the metric command was interrupted' };
  if (result.exitCode === undefined) {
    return { ok: false, reason: `the metric command was killed by ${result.signal ?? 'a signal'}` };
  }
  const exitCode = result.exitCode;
  switch (source.from) {
    case 'exit-code':
      return { ok: true, score: exitCode === 0 ? 100 : 0, evidence: `exit ${exitCode}` };
    case 'regex':
      return scoreFromRegex(source.pattern, result, exitCode);
    case 'json':
      return scoreFromJson(source.path, result, exitCode);
    case 'tap':
      return percentPassed(countTap(result.stdout), 'TAP', result, exitCode);
    case 'junit':
      return percentPassed(countJunit(result.stdout), 'JUnit XML', result, exitCode);
  }
}

function exited(exitCode: number): string {
  return `(the command exited with code ${exitCode})`;
}

/** A failing suite legitimately exits non-zero while its printed number is valid: scored, but on record. */
function exitNote(exitCode: number): string {
  return exitCode === 0 ? '' : ` (exit ${exitCode})`;
}

function outputTail(result: ProcessResult): string {
  const text = `${result.stdout}${result.stderr === '' ? '' : `\n[stderr]\n${result.stderr}`}`.trim();
  if (text === '') return 'it printed nothing';
  const tail = text.length > TAIL_CHARS ? `…${text.slice(text.length - TAIL_CHARS)}` : text;
  return `its output ends with ${JSON.stringify(tail)}`;
}

function scoreFromRegex(pattern: string, result: ProcessResult, exitCode: number): ScoreResult {
  const regex = new RegExp(pattern, 'm');
  const match = regex.exec(result.stdout) ?? regex.exec(result.stderr);
  if (match === null) {
    return {
      ok: false,
      reason: `the pattern /${pattern}/ did not match the output ${exited(exitCode)}; ${outputTail(result)}`,
    };
  }
  const captured = match.slice(1).find((group) => group !== undefined);
  const score = parseNumber(captured);
  if (score === undefined) {
    return {
      ok: false,
      reason: `the pattern /${pattern}/ captured ${JSON.stringify(captured ?? '')}, which is not a number`,
    };
  }
  return { ok: true, score, evidence: `matched ${score} with /${pattern}/${exitNote(exitCode)}` };
}

/** Strict decimal numbers only: `Number()` would also take '', '0x1f' and 'Infinity'. */
export function parseNumber(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const trimmed = text.trim();
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(trimmed)) return undefined;
  const value = Number(trimmed);
  return Number.isFinite(value) ? value : undefined;
}

function scoreFromJson(path: string, result: ProcessResult, exitCode: number): ScoreResult {
  const parts = parseJsonPath(path) ?? [];
  const documents: unknown[] = [];
  try {
    documents.push(JSON.parse(result.stdout));
  } catch {
    documents.push(...findJsonValues(result.stdout, { anywhere: false }).map((c) => c.value));
  }
  if (documents.length === 0) {
    return {
      ok: false,
      reason: `the metric command printed no JSON ${exited(exitCode)}; ${outputTail(result)}`,
    };
  }
  let found: unknown;
  for (const document of documents) {
    const value = valueAt(document, parts);
    if (typeof value === 'number' && Number.isFinite(value))
      return { ok: true, score: value, evidence: `${path} = ${value}${exitNote(exitCode)}` };
    found ??= value;
  }
  if (found === undefined) {
    return {
      ok: false,
      reason: `the JSON output has nothing at "${path}" ${exited(exitCode)}; ${outputTail(result)}`,
    };
  }
  return {
    ok: false,
    reason: `"${path}" in the JSON output is ${JSON.stringify(found)}, not a finite number ${exited(exitCode)}`,
  };
}

function valueAt(document: unknown, parts: readonly (string | number)[]): unknown {
  let current = document;
  for (const part of parts) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[String(part)];
  }
  return current;
}

// ---- test reports: TAP and JUnit XML ----

/** Skipped and TODO tests are neither passes nor failures: the score is passed / (passed + failed). */
interface TestCounts {
  passed: number;
  failed: number;
  skipped: number;
  todo: number;
}

type Counted = { ok: true; counts: TestCounts } | { ok: false; reason: string };

function percentPassed(
  counted: Counted,
  format: string,
  result: ProcessResult,
  exitCode: number,
): ScoreResult {
  const crash = (why: string): ScoreResult => ({
    ok: false,
    reason: `${why} ${exited(exitCode)}; ${outputTail(result)}`,
  });
  if (!counted.ok) return crash(counted.reason);
  const { passed, failed, skipped, todo } = counted.counts;
  const aside = `${skipped > 0 ? `, ${skipped} skipped` : ''}${todo > 0 ? `, ${todo} todo` : ''}`;
  if (passed + failed + skipped + todo === 0) return crash(`the ${format} output reports no tests`);
  if (passed + failed === 0) return crash(`no ${format} test passed or failed${aside}`);
  // A runner exits non-zero for a reason; when its report shows none, the report is missing something.
  if (exitCode !== 0 && failed === 0)
    return crash(`the ${format} output counts no failing test, yet the command failed`);
  return {
    ok: true,
    score: (passed / (passed + failed)) * 100,
    evidence: `${passed}/${passed + failed} passed${aside} (${format}, exit ${exitCode})`,
  };
}

function emptyCounts(): TestCounts {
  return { passed: 0, failed: 0, skipped: 0, todo: 0 };
}

function addCounts(a: TestCounts, b: TestCounts): TestCounts {
  return {
    passed: a.passed + b.passed,
    failed: a.failed + b.failed,
    skipped: a.skipped + b.skipped,
    todo: a.todo + b.todo,
  };
}

type Outcome = keyof TestCounts;

function tally(outcomes: readonly Outcome[]): TestCounts {
  const counts = emptyCounts();
  for (const outcome of outcomes) counts[outcome] += 1;
  return counts;
}

/**
 * A test point or test case that stands for a whole test file which reported none of its own tests:
 * node --test names it by absolute path (the file crashed or exited early), vitest by relative path (it
 * failed to load). Counting it as one result would hide every test in that file.
 */
function looksLikeTestFile(name: string): boolean {
  return /^\S+\.[cm]?[jt]sx?$/.test(name) && /[\\/]|[._-](?:test|spec)\./.test(name);
}

// ---- TAP ----

interface TapPoint {
  ok: boolean;
  number: number | undefined;
  name: string;
  directive: 'skip' | 'todo' | undefined;
  /** The YAML diagnostic block under the point, where node marks suites and crashed files. */
  yaml: string;
  /** Every subtest under a top-level point, at any depth; empty for nested points. */
  children: TapPoint[];
}

interface TapDocument {
  points: TapPoint[];
  plans: number[];
  trailer: Map<string, number>;
  bailOut: string | undefined;
  /** Nested points after the last top-level one: their parent never reported. */
  orphans: TapPoint[];
}

function outcome(point: TapPoint): Outcome {
  if (point.directive === 'skip') return 'skipped';
  // `not ok # TODO` is expected to fail (TAP spec): like a skip, it says nothing about the code yet.
  if (point.directive === 'todo') return 'todo';
  return point.ok ? 'passed' : 'failed';
}

function indentOf(line: string): number {
  return line.length - line.trimStart().length;
}

function parsePoint(status: string, rest: string): TapPoint {
  const [, number, text = ''] = /^\s*(\d+)?\s*(?:-\s*)?(.*)$/.exec(rest) ?? [];
  const hash = text.search(/(?:^|\s)#/);
  const name = (hash === -1 ? text : text.slice(0, hash)).trim();
  const directive = hash === -1 ? undefined : /^\s*#\s*(skip|todo)/i.exec(text.slice(hash))?.[1];
  return {
    ok: status === 'ok',
    number: number === undefined ? undefined : Number(number),
    name,
    directive: directive === undefined ? undefined : directive.toLowerCase() === 'skip' ? 'skip' : 'todo',
    yaml: '',
    children: [],
  };
}

/**
 * Splits TAP into documents (one per `TAP version` line) of top-level points, each owning its nested
 * subtests: the indented block before it (TAP 14, node --test) or after it between `{` and `}` (vitest).
 */
function parseTap(stdout: string): TapDocument[] {
  const lines = stdout.split(/\r?\n/);
  const documents: TapDocument[] = [];
  const fresh = (): TapDocument => ({
    points: [],
    plans: [],
    trailer: new Map(),
    bailOut: undefined,
    orphans: [],
  });
  let doc = fresh();
  let open: TapPoint | undefined;
  for (let i = 0; i < lines.length; i += 1) {
    const line = lines[i] ?? '';
    const indent = indentOf(line);
    const body = line.trim();
    if (indent === 0 && /^TAP version \d+$/i.test(body)) {
      if (doc.points.length > 0 || doc.plans.length > 0) documents.push(doc);
      doc = fresh();
      open = undefined;
      continue;
    }
    if (/^Bail out!/i.test(body)) {
      doc.bailOut ??= body;
      continue;
    }
    const match = /^(not ok|ok)\b(.*)$/.exec(body);
    // Subtests are indented by four; mocha indents a failure's message by two, and that is not a point.
    if (match !== null && (indent === 0 || indent >= 4)) {
      const point = parsePoint(match[1] ?? '', match[2] ?? '');
      const next = lines[i + 1] ?? '';
      if (next.trim() === '---' && indentOf(next) > indent) {
        let end = i + 2;
        while (
          end < lines.length &&
          !((lines[end] ?? '').trim() === '...' && indentOf(lines[end] ?? '') === indentOf(next))
        )
          end += 1;
        point.yaml = lines.slice(i + 2, end).join('\n');
        i = end;
      }
      if (indent > 0) (open?.children ?? doc.orphans).push(point);
      else {
        point.children = doc.orphans;
        doc.orphans = [];
        doc.points.push(point);
        open = /\{\s*$/.test(body) ? point : undefined;
      }
      continue;
    }
    if (indent !== 0) continue;
    if (body === '}') open = undefined;
    const plan = /^1\.\.(\d+)\b/.exec(body);
    if (plan !== null) doc.plans.push(Number(plan[1]));
    const total = /^#\s*(tests|pass|fail|cancelled)\s+(\d+)\s*$/i.exec(body);
    if (total !== null) doc.trailer.set((total[1] ?? '').toLowerCase(), Number(total[2]));
  }
  if (doc.points.length > 0 || doc.plans.length > 0 || doc.bailOut !== undefined) documents.push(doc);
  return documents;
}

/**
 * TAP: top-level test points are the units (the plan counts them). A missing or unmatched plan, a bail
 * out, a file standing in for its tests, a failed subtest under a passing parent or a trailer that
 * disagrees with the points is a crash, never a score.
 */
function countTap(stdout: string): Counted {
  const documents = parseTap(stdout);
  if (documents.length === 0) return { ok: false, reason: 'no TAP test results in the output' };
  let counts = emptyCounts();
  for (const doc of documents) {
    const checked = checkTapDocument(doc);
    if (!checked.ok) return checked;
    counts = addCounts(counts, checked.counts);
  }
  return { ok: true, counts };
}

function checkTapDocument(doc: TapDocument): Counted {
  const crash = (reason: string): Counted => ({ ok: false, reason });
  const { points } = doc;
  if (doc.bailOut !== undefined) return crash(`the TAP run bailed out ("${doc.bailOut}")`);
  const [plan, ...extraPlans] = doc.plans;
  if (plan === undefined)
    return crash(
      `the TAP output has no plan (1..N) after ${points.length} test point(s): the run did not finish`,
    );
  if (extraPlans.length > 0) return crash(`the TAP output has ${doc.plans.length} plans in one document`);
  if (plan !== points.length) {
    return crash(
      `the TAP plan 1..${plan} does not match the ${points.length} test points reported: the run stopped early or printed extra results`,
    );
  }
  for (const [index, point] of points.entries()) {
    if (point.number !== undefined && point.number !== index + 1)
      return crash(`TAP test point ${point.number} is out of order (expected ${index + 1})`);
    const fileExit = /^\s*exitCode:\s*(\d+)/m.exec(point.yaml);
    if (!point.ok && fileExit !== null)
      return crash(
        `the test file "${point.name}" crashed with exit code ${fileExit[1]} before reporting its tests`,
      );
    if (point.children.length === 0 && looksLikeTestFile(point.name)) {
      return crash(
        `the test file "${point.name}" reported none of its tests (it failed to load, exited early or has none)`,
      );
    }
    const hidden = outcome(point) === 'passed' && point.children.find((c) => outcome(c) === 'failed');
    if (hidden)
      return crash(`the nested test "${hidden.name}" failed, yet its parent "${point.name}" reported ok`);
  }
  const orphan = doc.orphans.find((c) => outcome(c) === 'failed');
  if (orphan !== undefined) return crash(`the nested test "${orphan.name}" failed outside any test point`);

  const counts = tally(points.map(outcome));
  if (doc.trailer.size > 0) {
    // Runners count differently: tape and mocha top-level points, node every test at any depth but suites.
    const everyTest = points
      .flatMap((point) => [...point.children, point])
      .filter((point) => !/^\s*type:\s*'suite'/m.test(point.yaml));
    if (!trailerFits(doc.trailer, counts) && !trailerFits(doc.trailer, tally(everyTest.map(outcome)))) {
      const trailer = [...doc.trailer].map(([key, value]) => `# ${key} ${value}`).join(', ');
      return crash(
        `the TAP trailer (${trailer}) disagrees with the test points (${counts.passed} passed, ${counts.failed} failed)`,
      );
    }
  }
  return { ok: true, counts };
}

/**
 * Whether `# tests`, `# pass`, `# fail` can describe these counts. Skips and TODOs are where runners
 * differ: tape counts them as passes, mocha leaves them out of `# tests`, node lists them apart.
 */
function trailerFits(trailer: Map<string, number>, counts: TestCounts): boolean {
  const { passed, failed, skipped, todo } = counts;
  const total = passed + failed + skipped + todo;
  const tests = trailer.get('tests');
  const pass = trailer.get('pass');
  const fail = trailer.get('fail');
  const cancelled = trailer.get('cancelled') ?? 0;
  return (
    (tests === undefined || (tests >= total - skipped - todo && tests <= total)) &&
    (pass === undefined || (pass >= passed && pass <= passed + skipped + todo)) &&
    (fail === undefined || (failed >= fail && failed <= fail + cancelled))
  );
}

// ---- JUnit XML ----

interface JunitCase {
  name: string;
  classname: string;
  outcome: Outcome;
  message: string;
}

interface JunitTotals {
  tests: number | undefined;
  bad: number | undefined;
  skipped: number;
}

const JUNIT_TAG =
  /<(\/?)(testsuites|testsuite|testcase|failure|error|skipped)\b((?:[^>"']|"[^"]*"|'[^']*')*?)(\/?)>/g;

function xmlAttributes(text: string): Map<string, string> {
  const entities: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
  const decode = (value: string) =>
    value.replace(/&(?:#(\d+)|#x([0-9a-f]+)|(\w+));/gi, (whole, dec?: string, hex?: string, name?: string) =>
      dec !== undefined
        ? String.fromCodePoint(Number(dec))
        : hex !== undefined
          ? String.fromCodePoint(parseInt(hex, 16))
          : (entities[name ?? ''] ?? whole),
    );
  const out = new Map<string, string>();
  for (const match of text.matchAll(/([\w:.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/g))
    out.set(match[1] ?? '', decode(match[2] ?? match[3] ?? ''));
  return out;
}

function totalsOf(attributes: Map<string, string>): JunitTotals {
  const count = (key: string) => {
    const value = attributes.get(key);
    return value !== undefined && /^\d+$/.test(value.trim()) ? Number(value) : undefined;
  };
  const failures = count('failures');
  const errors = count('errors');
  return {
    tests: count('tests'),
    bad: failures === undefined && errors === undefined ? undefined : (failures ?? 0) + (errors ?? 0),
    skipped: count('skipped') ?? 0,
  };
}

interface JunitReport {
  cases: JunitCase[];
  roots: JunitTotals[];
  /** The outermost `<testsuite>` elements: nested ones are already in their parent's totals. */
  suites: JunitTotals[];
}

function parseJunit(stdout: string): { ok: true; report: JunitReport } | { ok: false; reason: string } {
  const crash = (reason: string) => ({ ok: false, reason }) as const;
  // Failure bodies are free text (stack traces, captured output) that must not read as tags.
  const xml = stdout.replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  const report: JunitReport = { cases: [], roots: [], suites: [] };
  const stack: string[] = [];
  let current: JunitCase | undefined;
  let tags = 0;
  for (const match of xml.matchAll(JUNIT_TAG)) {
    tags += 1;
    const [, closing, tag = '', attributeText = '', selfClosing] = match;
    if (closing === '/') {
      if (stack.pop() !== tag) return crash(`the JUnit XML is malformed (an unexpected </${tag}>)`);
      if (tag === 'testcase' && current !== undefined) report.cases.push(current);
      continue;
    }
    const attributes = xmlAttributes(attributeText);
    const inCase = stack.includes('testcase');
    if (tag === 'testsuites') report.roots.push(totalsOf(attributes));
    else if (tag === 'testsuite' && !stack.includes('testsuite')) report.suites.push(totalsOf(attributes));
    else if (tag === 'testcase') {
      current = {
        name: attributes.get('name') ?? '',
        classname: attributes.get('classname') ?? '',
        outcome: 'passed',
        message: '',
      };
    } else if ((tag === 'failure' || tag === 'error') && !inCase) {
      return crash(`the JUnit XML has an <${tag}> outside any test case: a test file or suite failed`);
    } else if ((tag === 'failure' || tag === 'error') && current !== undefined) {
      current.outcome = 'failed';
      current.message ||= attributes.get('message') ?? '';
    } else if (tag === 'skipped' && inCase && current?.outcome === 'passed') current.outcome = 'skipped';
    if (selfClosing !== '/') stack.push(tag);
    else if (tag === 'testcase' && current !== undefined) report.cases.push(current);
  }
  if (tags === 0) return crash('no JUnit XML in the output');
  if (stack.length > 0)
    return crash(`the JUnit XML ends inside <${stack.at(-1) ?? ''}>: the report is incomplete`);
  return { ok: true, report };
}

/**
 * JUnit XML: the `<testcase>` elements when there are any (a `<failure>` or `<error>` child fails one, a
 * `<skipped>` one leaves it out), checked against the declared failure totals; else the totals of the
 * `<testsuites>` roots, or of the outermost `<testsuite>` elements. Errors count as failures.
 */
function countJunit(stdout: string): Counted {
  const crash = (reason: string): Counted => ({ ok: false, reason });
  const parsed = parseJunit(stdout);
  if (!parsed.ok) return parsed;
  const { cases, roots, suites } = parsed.report;
  const fileFailure = cases.find(
    (c) =>
      c.outcome === 'failed' &&
      // jest-junit with reportTestSuiteErrors, and pytest's collection error, name the file this way.
      (looksLikeTestFile(c.name) ||
        c.classname === 'Test suite failed to run' ||
        /^collection failure/.test(c.message)),
  );
  if (fileFailure !== undefined) {
    const why = fileFailure.message === '' ? '' : ` (${fileFailure.message.split('\n')[0]})`;
    return crash(`the test file "${fileFailure.name}" failed to load, hiding its tests${why}`);
  }
  const declared = roots.some((r) => r.tests !== undefined || r.bad !== undefined) ? roots : suites;
  const sum = (key: keyof JunitTotals) =>
    declared.some((t) => t[key] !== undefined) ? declared.reduce((n, t) => n + (t[key] ?? 0), 0) : undefined;
  if (cases.length > 0) {
    const counts = tally(cases.map((c) => c.outcome));
    const bad = sum('bad');
    if (bad !== undefined && bad !== counts.failed)
      return crash(
        `the JUnit XML declares ${bad} failures and errors but ${counts.failed} of its test cases failed`,
      );
    return { ok: true, counts };
  }
  const tests = sum('tests') ?? 0;
  const bad = sum('bad') ?? 0;
  const skipped = sum('skipped') ?? 0;
  if (tests - bad - skipped < 0)
    return crash(
      `the JUnit XML declares ${tests} tests, fewer than its ${bad} failures and ${skipped} skipped`,
    );
  return { ok: true, counts: { passed: tests - bad - skipped, failed: bad, skipped, todo: 0 } };
}
