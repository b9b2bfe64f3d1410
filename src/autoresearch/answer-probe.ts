// The answer probe, run once at setup: does the metric check what the code it times answers? A metric
// that times code without checking its answers scores code that is fast and wrong as well as any, and
// then code that tells the metric from the tests (by its command line, its stack, its inputs' size,
// whatever the reading and the watches do not name) can be fast under the one and right under the
// other. So the metric is run once more, in a throwaway checkout where every JavaScript, TypeScript
// and Python file of the scope answers nothing (answer-stubs.ts), whether the metric imports it or
// runs it as a program of its own (a CLI it times and whose output it never reads). A metric that
// still scores that as well as the baseline does not look at the answers, and setup says so. One that
// crashes, or scores it worse, looks at some: then, for the code it loads into its own process, a
// second run where calls larger than the smallest so far (or than the smallest the first run saw)
// answer nothing at once. A metric that scores
// that as well as the baseline checks small cases only and times large ones it never checks, which
// code that tells the two apart by size wins.
import { join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import type { ProcessResult } from '../infra/process.js';
import {
  answerlessModule,
  callFloors,
  LOADED_MARK,
  realCodePath,
  SIZES_MARK,
  sizeGatedModule,
  SKIPPED_MARK,
} from './answer-stubs.js';
import type { HardMetricConfig, LoopConfig } from './config.js';
import { isPathInScope } from './keep-revert.js';
import { loadedInProcess } from './loaded-code.js';
import { measureHardMetric } from './measure.js';
import { metricFiles } from './metric-files.js';
import { isImprovement } from './score-rules.js';

/** Runs `run` in a checkout of HEAD whose files at the keys of `texts` hold those texts instead. */
export type StubbedCheckout = <T>(
  texts: ReadonlyMap<string, string>,
  run: (cwd: string) => Promise<T>,
) => Promise<T>;

export interface AnswerProbe {
  /** The files that answered nothing when the metric ran them, relative to the repository. */
  files: string[];
  /** How many files of the scope were made to answer nothing (whether the metric ran them or not). */
  stubbed: number;
  /** What the metric scored them, or why it gave no score. */
  score: number | null;
  reason?: string;
  /**
   * Whether the metric ran one of them: a metric that reads the code from elsewhere (an absolute path
   * into the repository, a build of it) ran the code as it was, which tells nothing.
   */
  loaded: boolean;
  /** True when it loaded them and scored that not worse than the baseline: it does not check the answers. */
  unchecked: boolean;
  /**
   * The second round, run when the first found the answers looked at: the code the metric loads
   * answering only calls no larger than the smallest so far. `files`: those that left a call
   * unanswered; `unchecked`: some did, and the metric scored that not worse than the baseline.
   */
  larger_calls?: { files: string[]; score: number | null; reason?: string; unchecked: boolean };
}

/** The files a stub can stand in for; type declarations are not code that runs. */
const CODE_FILE = /^(?!.*\.d\.[cm]?ts$).*\.(?:[cm]?[jt]sx?|pyw?)$/;
/**
 * A probe's run is given this many times the baseline's, at least PROBE_FLOOR_MS, within the metric's
 * own timeout: code that answers nothing can send a metric round a loop for good (`while (!done())`),
 * and setup should not wait the whole timeout (a run out of time tells nothing: a crash).
 */
const PROBE_TIME_FACTOR = 5;
const PROBE_FLOOR_MS = 30_000;
/** Past this many code files in the scope, the probe stubs the first ones (in path order) only. */
const MAX_STUBS = 20_000;

type ProbeArgs = {
  repo: string;
  config: LoopConfig & { metric: HardMetricConfig };
  baseline: number;
  /** How long the baseline's longest metric run took. */
  baselineMs: number;
  runMetric: (argv: readonly string[], run: { cwd: string; timeoutMs: number }) => Promise<ProcessResult>;
  checkout: StubbedCheckout;
  /** The files of the scope in HEAD, relative to the repository (the checkout is of HEAD). */
  scopeFiles: () => Promise<readonly string[]>;
  /** Told as each round starts. */
  progress?: ((line: string) => void) | undefined;
};

export async function probeAnswers(args: ProbeArgs): Promise<AnswerProbe | undefined> {
  const { repo, config } = args;
  // What the metric imports, found in its code (a file of the scope not committed yet among it), and
  // every code file the scope holds in HEAD: what it may run as a program.
  const inProcess = [...(await loadedInProcess(config, repo, await metricFiles(config, repo)))].filter(
    (path) => isPathInScope(path, config.scope.doer_paths) && CODE_FILE.test(path),
  );
  const candidates = new Set([...inProcess, ...(await args.scopeFiles())]);
  const originals = new Map<string, string>();
  for (const path of [...candidates].filter((path) => CODE_FILE.test(path)).sort()) {
    if (originals.size >= MAX_STUBS) break;
    const text = await readFileIfExists(join(repo, path)).catch(() => undefined);
    if (text !== undefined) originals.set(path, text);
  }
  const texts = stubs(originals, answerlessModule);
  if (texts.size === 0) return undefined;
  args.progress?.(
    `Answer probe: the metric once more, with the scope's code answering nothing (${String(texts.size)} file${texts.size === 1 ? '' : 's'}; --no-answer-probe skips this)…`,
  );
  const first = await measureStubbed(args, texts);
  const files = first.marked(LOADED_MARK);
  const found = { files, stubbed: texts.size, loaded: files.length > 0 };
  const probe: AnswerProbe = first.verdict.ok
    ? {
        ...found,
        score: first.verdict.output.score,
        unchecked: found.loaded && notWorse(args, first.verdict.output.score),
      }
    : { ...found, score: null, reason: first.verdict.reason, unchecked: false };
  // A metric that ran none of the stubs tells nothing; one that scored them as well looks at nothing.
  if (!probe.loaded || probe.unchecked) return probe;

  // Some answers are looked at: are the large calls' too?
  const gated = new Map<string, string>();
  const loaded = new Map([...originals].filter(([path]) => inProcess.includes(path)));
  // No call larger than the smallest the first round saw is answered: a metric that times its large
  // case before it checks a small one is found too.
  const floors = callFloors(first.text(SIZES_MARK));
  for (const [path, stub] of stubs(loaded, (path, text) => sizeGatedModule(path, text, floors.get(path)))) {
    gated.set(path, stub);
    gated.set(realCodePath(path), originals.get(path) ?? '');
  }
  if (gated.size === 0) return probe;
  args.progress?.(
    'Answer probe: once more, with the code it loads answering only calls no larger than the smallest so far…',
  );
  const second = await measureStubbed(args, gated);
  const skipped = second.marked(SKIPPED_MARK);
  if (!second.verdict.ok)
    return {
      ...probe,
      larger_calls: { files: skipped, score: null, reason: second.verdict.reason, unchecked: false },
    };
  const larger = second.verdict.output.score;
  return {
    ...probe,
    larger_calls: { files: skipped, score: larger, unchecked: skipped.length > 0 && notWorse(args, larger) },
  };
}

/** The stubs `make` writes for `originals` (a file it has none for is left as it is). */
function stubs(
  originals: ReadonlyMap<string, string>,
  make: (path: string, text: string) => string | undefined,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const [path, text] of originals) {
    const stub = make(path, text);
    if (stub !== undefined) out.set(path, stub);
  }
  return out;
}

/** Whether `score` is as good as the baseline or better. */
function notWorse(args: ProbeArgs, score: number): boolean {
  return !isImprovement(args.baseline, score, 0, args.config.metric.direction);
}

/** The metric's verdict in a checkout holding `texts`, and which stubs' paths each mark file holds. */
async function measureStubbed(args: ProbeArgs, texts: ReadonlyMap<string, string>) {
  const metric = args.config.metric;
  const { verdict, marks } = await args.checkout(texts, async (cwd) => ({
    verdict: await measureHardMetric(metric, 1, () =>
      args.runMetric(metric.argv, {
        cwd,
        timeoutMs: Math.min(
          metric.timeout_seconds * 1000,
          Math.max(PROBE_FLOOR_MS, PROBE_TIME_FACTOR * args.baselineMs),
        ),
      }),
    ),
    marks: new Map(
      await Promise.all(
        [LOADED_MARK, SKIPPED_MARK, SIZES_MARK].map(
          async (mark) =>
            [mark, (await readFileIfExists(join(cwd, mark)).catch(() => undefined)) ?? ''] as const,
        ),
      ),
    ),
  }));
  return {
    verdict,
    text: (mark: string) => marks.get(mark) ?? '',
    // Only the stubs' own paths count: a line the metric's code added there names nothing.
    marked: (mark: string) =>
      [...new Set((marks.get(mark) ?? '').split('\n'))].filter((path) => texts.has(path)).sort(),
  };
}

/**
 * The probe as setup runs it: what it found, and what to warn of (a metric that does not check the
 * answers, or a probe that could not run: it never fails setup, which has measured what it needs).
 */
export async function runAnswerProbe(
  args: Parameters<typeof probeAnswers>[0],
): Promise<{ probe?: AnswerProbe; warnings: string[] }> {
  try {
    const probe = await probeAnswers(args);
    if (probe === undefined) return { warnings: [] };
    const warnings = probe.unchecked ? [uncheckedAnswersWarning(probe, args.baseline)] : [];
    if (probe.larger_calls?.unchecked === true)
      warnings.push(smallCallsOnlyWarning(probe.larger_calls.files, probe.larger_calls.score, args.baseline));
    return { probe, warnings };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      warnings: [
        `the answer probe could not run (${message.split('\n')[0] ?? ''}); the loop is set up without it`,
      ],
    };
  }
}

function named(files: readonly string[]): string {
  return files.length <= 3 ? files.join(', ') : `${files.slice(0, 3).join(', ')}, …`;
}

/** What setup says of a probe whose metric scored code that answers nothing as well as the baseline. */
function uncheckedAnswersWarning(probe: AnswerProbe, baseline: number): string {
  return (
    `the metric scored ${String(probe.score)} with ${named(probe.files)} answering nothing (its baseline: ${String(baseline)}): ` +
    'it does not check what that code answers, so code that tells the metric from the tests can be fast ' +
    'and wrong under the one, right under the other, and kept. Have the metric check the answers it ' +
    'times (README: "Have the metric check the answers it times"); --no-answer-probe skips this run'
  );
}

/** What setup says of a metric that scored code answering only its smallest calls as well as the baseline. */
function smallCallsOnlyWarning(files: readonly string[], score: number | null, baseline: number): string {
  return (
    `the metric scored ${String(score)} with ${named(files)} answering only calls no larger than the smallest ` +
    `before them (its baseline: ${String(baseline)}): it checks the answers of small calls and times large ones ` +
    'it does not check, so code that answers large inputs wrong and fast is kept. Have the metric check ' +
    'the answers of the calls it times (README: "Have the metric check the answers it times"); ' +
    '--no-answer-probe skips these runs'
  );
}
