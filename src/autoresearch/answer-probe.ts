// The answer probe, run once at setup: does the metric check what the code it times answers? A metric
// that times code without checking its answers scores code that is fast and wrong as well as any, and
// then code that tells the metric from the tests (by its command line, its stack, its inputs' size,
// whatever the reading and the watches do not name) can be fast under the one and right under the
// other. So the metric is run once more, in a throwaway checkout where each file of the scope it
// loads into its own process answers nothing (every function it exports returns undefined or None). A
// metric that still scores that as well as the baseline does not look at the answers, and setup says
// so. One that crashes, or scores it worse, does. Every JavaScript, TypeScript and Python file of the
// scope answers nothing there, whether the metric imports it or runs it as a program of its own (a
// CLI it times and whose output it never reads); each stub notes when it runs, so the probe knows
// which of them the metric ran.
import { join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import type { ProcessResult } from '../infra/process.js';
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
}

/** The file at the checkout's root where each stub adds its path when it is loaded, so the probe knows it ran. */
const LOADED_MARK = '.forge-answer-probe-loaded';
/** The files a stub can stand in for; type declarations are not code that runs. */
const CODE_FILE = /^(?!.*\.d\.[cm]?ts$).*\.(?:[cm]?[jt]sx?|pyw?)$/;
/** Past this many code files in the scope, the probe stubs the first ones (in path order) only. */
const MAX_STUBS = 20_000;

export async function probeAnswers(args: {
  repo: string;
  config: LoopConfig & { metric: HardMetricConfig };
  baseline: number;
  runMetric: (argv: readonly string[], run: { cwd: string; timeoutMs: number }) => Promise<ProcessResult>;
  checkout: StubbedCheckout;
  /** The files of the scope in HEAD, relative to the repository (the checkout is of HEAD). */
  scopeFiles: () => Promise<readonly string[]>;
}): Promise<AnswerProbe | undefined> {
  const { repo, config } = args;
  // What the metric imports, found in its code (a file of the scope not committed yet among it), and
  // every code file the scope holds in HEAD: what it may run as a program.
  const loaded = await loadedInProcess(config, repo, await metricFiles(config, repo));
  const candidates = new Set([...loaded].filter((path) => isPathInScope(path, config.scope.doer_paths)));
  for (const path of await args.scopeFiles()) candidates.add(path);
  const texts = new Map<string, string>();
  for (const path of [...candidates].filter((path) => CODE_FILE.test(path)).sort()) {
    if (texts.size >= MAX_STUBS) break;
    const text = await readFileIfExists(join(repo, path)).catch(() => undefined);
    const stub = text === undefined ? undefined : answerlessModule(path, text);
    if (stub !== undefined) texts.set(path, stub);
  }
  if (texts.size === 0) return undefined;
  const metric = config.metric;
  const { verdict, ran } = await args.checkout(texts, async (cwd) => ({
    verdict: await measureHardMetric(metric, 1, () =>
      args.runMetric(metric.argv, { cwd, timeoutMs: metric.timeout_seconds * 1000 }),
    ),
    ran: (await readFileIfExists(join(cwd, LOADED_MARK)).catch(() => undefined)) ?? '',
  }));
  // Only the stubs' own paths count: a line the metric's code added there names nothing.
  const files = [...new Set(ran.split('\n'))].filter((path) => texts.has(path)).sort();
  const found = { files, stubbed: texts.size, loaded: files.length > 0 };
  if (!verdict.ok) return { ...found, score: null, reason: verdict.reason, unchecked: false };
  const score = verdict.output.score;
  return {
    ...found,
    score,
    unchecked: found.loaded && !isImprovement(args.baseline, score, 0, metric.direction),
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
    return { probe, warnings: probe.unchecked ? [uncheckedAnswersWarning(probe, args.baseline)] : [] };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return {
      warnings: [
        `the answer probe could not run (${message.split('\n')[0] ?? ''}); the loop is set up without it`,
      ],
    };
  }
}

/** What setup says of a probe whose metric scored code that answers nothing as well as the baseline. */
function uncheckedAnswersWarning(probe: AnswerProbe, baseline: number): string {
  const files = probe.files.length <= 3 ? probe.files.join(', ') : `${probe.files.slice(0, 3).join(', ')}, …`;
  return (
    `the metric scored ${String(probe.score)} with ${files} answering nothing (its baseline: ${String(baseline)}): ` +
    'it does not check what that code answers, so code that tells the metric from the tests can be fast ' +
    'and wrong under the one, right under the other, and kept. Have the metric check the answers it ' +
    'times (README: "Have the metric check the answers it times"); --no-answer-probe skips this run'
  );
}

function pythonStub(up: string, path: string): string {
  return `# Forge's answer probe: this module answers nothing.
import os as _os
with open(_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), ${JSON.stringify(up + LOADED_MARK)}), 'a') as _mark:
    _mark.write(${JSON.stringify(path + '\n')})


def _answerless(*args, **kwargs):
    return None


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    return _answerless
`;
}

/**
 * The text of a module that answers nothing in place of the file at `path` whose text is `text`: the
 * same names exported, each a function that returns undefined (None in Python). Undefined for a file
 * of another language.
 */
export function answerlessModule(path: string, text: string): string | undefined {
  // From the file's folder up to the checkout's root, where it marks that it was loaded.
  const up = '../'.repeat(path.split('/').length - 1);
  // A program run by its path keeps the line that says what runs it.
  const shebang = /^#!.*\n/.exec(text)?.[0] ?? '';
  if (/\.pyw?$/.test(path)) return shebang + pythonStub(up, path);
  if (!/\.(?:[cm]?[jt]sx?)$/.test(path)) return undefined;
  const esm = /\.m[jt]s$/.test(path) || (!/\.c[jt]s$/.test(path) && /^[ \t]*(?:export|import)\b/m.test(text));
  return shebang + (esm ? esmStub(text, up, path) : commonJsStub(text, up, path));
}

function esmStub(text: string, up: string, path: string): string {
  const names = new Set<string>();
  let withDefault = /^[ \t]*export\s+default\b/m.test(text);
  for (const m of text.matchAll(
    /^[ \t]*export\s+(?:declare\s+)?(?:async\s+)?(?:function\s*\*?|const|let|var|class|abstract\s+class|enum)\s+([A-Za-z_$][\w$]*)/gm,
  ))
    names.add(m[1] ?? '');
  for (const m of text.matchAll(/^[ \t]*export\s*\{([^}]*)\}/gm)) {
    for (const part of (m[1] ?? '').split(',')) {
      const name =
        part
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .at(-1)
          ?.trim() ?? '';
      if (name === 'default') withDefault = true;
      else if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
    }
  }
  const lines = [
    "// Forge's answer probe: this module answers nothing.",
    "import { appendFileSync as forgeMark } from 'node:fs';",
    `forgeMark(new URL(${JSON.stringify(up + LOADED_MARK)}, import.meta.url), ${JSON.stringify(path + '\n')});`,
    'function answerless() {}',
  ];
  for (const m of text.matchAll(/^[ \t]*export\s*\*\s*(?:as\s+[\w$]+\s+)?from\s*(['"][^'"\n]+['"])/gm))
    lines.push(`export * from ${m[1] ?? "''"};`);
  for (const name of names) lines.push(`export const ${name} = answerless;`);
  if (withDefault) lines.push('export default answerless;');
  return `${lines.join('\n')}\n`;
}

function commonJsStub(text: string, up: string, path: string): string {
  // Node finds the names an ES module may import from CommonJS in the text (`exports.x =`), so they
  // are written out before the object that answers every name.
  const names = new Set<string>();
  for (const m of text.matchAll(/\b(?:module\s*\.\s*)?exports\s*\.\s*([A-Za-z_$][\w$]*)\s*=/g))
    names.add(m[1] ?? '');
  const object = /\bmodule\s*\.\s*exports\s*=\s*\{([^}]*)\}/.exec(text)?.[1] ?? '';
  for (const part of object.split(',')) {
    const name = part.split(':')[0]?.trim() ?? '';
    if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
  }
  return [
    "// Forge's answer probe: this module answers nothing.",
    "'use strict';",
    `require('node:fs').appendFileSync(require('node:path').join(__dirname, ${JSON.stringify(up + LOADED_MARK)}), ${JSON.stringify(path + '\n')});`,
    'const answerless = new Proxy(function () {}, {',
    "  get: (target, key) => (key === 'prototype' ? target.prototype : typeof key === 'symbol' || key === 'then' || key === '__esModule' ? undefined : answerless),",
    '  apply: () => undefined,',
    '  construct: () => ({}),',
    '});',
    ...[...names].map((name) => `exports.${name} = undefined;`),
    'module.exports = answerless;',
    '',
  ].join('\n');
}
