// TAP (13/14, with nested subtests): counted against its plan; anything that does not add up is a crash.
import { looksLikeTestFile, tally, type Counted, type Outcome, type TestCounts } from './test-counts.js';

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
export function countTap(stdout: string): Counted {
  const documents = parseTap(stdout);
  const [doc] = documents;
  if (doc === undefined) return { ok: false, reason: 'no TAP test results in the output' };
  // A run prints one report. Code under test can write a whole report of its own to the stdout it
  // inherits (a vitest or node:test worker), and a sum would count its passes: no document is
  // believed over another, so two are no score.
  if (documents.length > 1)
    return { ok: false, reason: moreThanOneReport(documents.length, 'TAP documents') };
  return checkTapDocument(doc);
}

/** Why output with several reports (TAP documents, JUnit roots) is no score. */
export function moreThanOneReport(count: number, what: string): string {
  return `the output holds ${count} ${what} where a run prints one: code under test can print a report of its own, so none is scored (run the suites as one command)`;
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
