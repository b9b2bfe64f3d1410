// JUnit XML: counted from its test cases, checked against the totals it declares.
import { moreThanOneReport } from './tap.js';
import { looksLikeTestFile, tally, type Counted, type Outcome } from './test-counts.js';

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
  /** Elements at the top (a `<testsuites>`, or a lone `<testsuite>`): one per report. */
  reports: number;
}

function parseJunit(stdout: string): { ok: true; report: JunitReport } | { ok: false; reason: string } {
  const crash = (reason: string) => ({ ok: false, reason }) as const;
  // Failure bodies are free text (stack traces, captured output) that must not read as tags.
  const xml = stdout.replace(/<!\[CDATA\[[\s\S]*?\]\]>/g, '').replace(/<!--[\s\S]*?-->/g, '');
  const report: JunitReport = { cases: [], roots: [], suites: [], reports: 0 };
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
    if (stack.length === 0) report.reports += 1;
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
export function countJunit(stdout: string): Counted {
  const crash = (reason: string): Counted => ({ ok: false, reason });
  const parsed = parseJunit(stdout);
  if (!parsed.ok) return parsed;
  const { cases, roots, suites, reports } = parsed.report;
  // As for TAP: code under test can print a report of its own, and a sum would count its passes.
  if (reports > 1) return crash(moreThanOneReport(reports, 'JUnit reports'));
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
