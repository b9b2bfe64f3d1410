// The `.autoresearch/config.json` schema (zod): every leaf names what it expects, so a problem reads
// `caps.max_iterations: expected …, got "x"`. The types of the config file and the validated config.
import { z } from 'zod';
import { splitCommandLine } from '../infra/command-line.js';
import {
  DEFAULT_MAX_CHANGE_BYTES,
  DEFAULT_MAX_CHANGE_FILES,
  DEFAULT_MAX_FILE_BYTES,
} from '../infra/size-limits.js';
import {
  defaultCheckName,
  normalizeRelativePath,
  parseJsonPath,
  regexProblem,
  relativePathProblem,
  WORKSPACE_DIR,
  type Threshold,
} from './config-values.js';
import { SLUG_PATTERN, SLUG_RULE } from './spec-state/slug.js';

// Every leaf carries its own sentence, so a message reads `caps.max_iterations: expected …, got "x"`.
function expected(what: string) {
  return (issue: { input?: unknown }): string =>
    issue.input === undefined
      ? `missing: expected ${what}`
      : `expected ${what}, got ${describeValue(issue.input)}`;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  if (typeof value === 'object') return 'an object';
  switch (typeof value) {
    case 'number':
    case 'boolean':
    case 'bigint':
      return String(value);
    case 'symbol':
      return value.toString();
    case 'undefined':
      return 'undefined';
    default:
      // JSON holds no functions; one passed in by code is named, not printed as its source.
      return 'a function';
  }
}

const text = (what = 'a non-empty string') =>
  z.string({ error: expected(what) }).min(1, { error: expected(what), abort: true });

const nonNegativeInt = (what: string) =>
  z
    .number({ error: expected(what) })
    .int({ error: expected(what) })
    .min(0, { error: expected(what) });

const direction = z.enum(['maximize', 'minimize'], { error: expected('"maximize" or "minimize"') });

const relativePath = (what: string) =>
  text(what).superRefine((value, ctx) => {
    const problem = relativePathProblem(value);
    if (problem !== undefined)
      ctx.addIssue({ code: 'custom', message: `${problem}, got ${describeValue(value)}` });
  });

const doerPath = relativePath('a path relative to the repository root').superRefine((value, ctx) => {
  const normal = normalizeRelativePath(value);
  if (normal === '' || normal === WORKSPACE_DIR || normal.startsWith(`${WORKSPACE_DIR}/`)) {
    ctx.addIssue({
      code: 'custom',
      message: `expected a directory or file the doer may change; the whole repository and ${WORKSPACE_DIR}/ (the loop's own files) are not allowed, got ${describeValue(value)}`,
    });
  }
});

const regexScore = z.strictObject({
  from: z.literal('regex'),
  pattern: text('a regular expression with one capture group').superRefine((pattern, ctx) => {
    const problem = regexProblem(pattern);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', message: problem });
  }),
  /**
   * Where the score line is. Unset: stdout, or stderr when stdout has none and the command exited 0 (a
   * failed command's stderr may be the measured code's own words). "stderr": a tool that prints its
   * summary there and exits non-zero when tests fail (jest).
   */
  stream: z.enum(['stdout', 'stderr'], { error: expected('"stdout" or "stderr"') }).optional(),
});

const jsonScore = z.strictObject({
  from: z.literal('json'),
  path: text('a dotted path such as "numPassedTests" or "results.0.score"').superRefine((path, ctx) => {
    if (parseJsonPath(path) === undefined) {
      ctx.addIssue({
        code: 'custom',
        message: `expected a dotted path such as "numPassedTests" or "results.0.score", got ${describeValue(path)}`,
      });
    }
  }),
});

const scoreSource = z.discriminatedUnion(
  'from',
  [
    z.strictObject({ from: z.literal('exit-code') }),
    regexScore,
    jsonScore,
    z.strictObject({ from: z.literal('tap') }),
    z.strictObject({ from: z.literal('junit') }),
  ],
  { error: expected('an object with "from": "exit-code", "regex", "json", "tap" or "junit"') },
);

const hardMetric = z
  .strictObject({
    type: z.literal('hard'),
    command: text('the metric command, e.g. "npm test -- --reporter=json"').superRefine((command, ctx) => {
      const split = splitCommandLine(command, 'the metric command');
      if (!split.ok) ctx.addIssue({ code: 'custom', message: split.reason });
    }),
    score: scoreSource.prefault({ from: 'exit-code' }),
    direction: direction.default('maximize'),
    artifact_path: relativePath('a path relative to the repository root').optional(),
    timeout_seconds: z
      .number({ error: expected('a positive number of seconds') })
      .positive({ error: expected('a positive number of seconds') })
      .default(600),
    repeat: z
      .number({ error: expected('an integer ≥ 1 (how many times each score is measured)') })
      .int({ error: expected('an integer ≥ 1 (how many times each score is measured)') })
      .min(1, { error: expected('an integer ≥ 1 (how many times each score is measured)') })
      // Absent means 1; left out of the parsed config so a loop without it reads exactly as before.
      .optional(),
  })
  // The command runs without a shell; the argv is derived once here so every caller runs the same thing.
  .transform((metric) => ({ ...metric, argv: splitOrThrow(metric.command) }));

const softMetric = z
  .strictObject({
    type: z.literal('soft'),
    rubric_path: relativePath('the path of the rubric file'),
    artifact_path: relativePath('the path of the artifact the judge reads'),
    direction: direction.default('maximize'),
    // A judge agent's score is read once per iteration; only a command can be run again.
    repeat: z
      .never({
        error: 'only a hard metric (a command) is measured repeatedly; remove "repeat" from a soft metric',
      })
      .optional(),
  })
  .transform(({ repeat: _refused, ...metric }) => metric);

const metric = z.discriminatedUnion('type', [hardMetric, softMetric], {
  error: expected('an object with "type": "hard" or "soft"'),
});

// ---- guards and tracks: commands the runner runs after every doer, before the judge ----

const checkName = (what: string) =>
  z.string({ error: expected(what) }).regex(/^[A-Za-z0-9][\w.-]{0,63}$/, { error: expected(what) });

const guardCommand = (what: string) =>
  text(`the ${what} command, e.g. "npm test"`).superRefine((command, ctx) => {
    const split = splitCommandLine(command, `the ${what} command`);
    if (!split.ok) ctx.addIssue({ code: 'custom', message: split.reason });
  });

const seconds = z
  .number({ error: expected('a positive number of seconds') })
  .positive({ error: expected('a positive number of seconds') })
  .default(600);

const THRESHOLD = 'a number (absolute) or a percentage of the baseline value such as "+5%" or "-10%"';
/** `120000` (absolute) or `"+5%"` (relative to the track's baseline value). */
const threshold = z
  .union(
    [
      z.number({ error: expected(THRESHOLD) }),
      z
        .string({ error: expected(THRESHOLD) })
        .regex(/^[+-]?(?:\d+\.?\d*|\.\d+)%$/, { error: expected(THRESHOLD) }),
    ],
    { error: expected(THRESHOLD) },
  )
  .transform((value): Threshold =>
    typeof value === 'number'
      ? { absolute: value }
      : { relative_percent: Number(value.slice(0, -1)), text: value },
  );

const guard = z
  .strictObject(
    {
      name: checkName('a name of letters, digits, ".", "_" or "-"').optional(),
      command: guardCommand('guard'),
      timeout_seconds: seconds,
    },
    { error: expected('an object with "command" (and optionally "name", "timeout_seconds")') },
  )
  .transform((g) => {
    const argv = splitOrThrow(g.command);
    return { ...g, name: g.name ?? defaultCheckName(argv), argv };
  });

const track = z
  .strictObject(
    {
      name: checkName('a name of letters, digits, ".", "_" or "-"'),
      command: guardCommand('track'),
      score: scoreSource.prefault({ from: 'exit-code' }),
      timeout_seconds: seconds,
      max: threshold.optional(),
      min: threshold.optional(),
    },
    { error: expected('an object with "name", "command" (and optionally "score", "max", "min")') },
  )
  .transform((t) => ({ ...t, argv: splitOrThrow(t.command) }));

/** Candidates per iteration: K doers from one base, each judged blind; the best may be kept. */
const population = z
  .number({ error: expected('an integer from 1 to 8') })
  .int({ error: expected('an integer from 1 to 8') })
  .min(1, { error: expected('an integer from 1 to 8') })
  .max(8, { error: expected('an integer from 1 to 8') });

const caps = z.strictObject(
  {
    max_iterations: nonNegativeInt('a non-negative integer (0 = no cap)').default(20),
    wall_clock_seconds: nonNegativeInt('a non-negative integer number of seconds (0 = no cap)').default(0),
    plateau_threshold: nonNegativeInt('a non-negative integer (0 = never stop on a plateau)').default(3),
    max_cost_usd: z
      .number({ error: expected('a non-negative amount in USD (0 = no cap)') })
      .min(0, { error: expected('a non-negative amount in USD (0 = no cap)') })
      .default(0),
  },
  { error: expected('an object') },
);

const scope = z.strictObject(
  {
    doer_paths: z
      .array(doerPath, { error: expected('a list of paths the doer may change') })
      .min(1, { error: expected('at least one path the doer may change') }),
    judge_paths: z
      .array(relativePath('a path relative to the repository root'), {
        error: expected('a list of paths the judge may read'),
      })
      .default([]),
    /**
     * Ignored paths the metric command writes again itself (build outputs, generated data): what an
     * agent changes there is removed, never put back from a copy nor a reason to stop the loop.
     */
    rebuilt_paths: z
      .array(relativePath('a path relative to the repository root'), {
        error: expected('a list of ignored paths the metric command writes again'),
      })
      .default([]),
    /**
     * The doer may add, change and remove test files in its scope (a loop that writes tests). Off, such a
     * change is tamper: changing the tests is the shortest way to a better test score (test-files.ts).
     */
    doer_may_change_tests: z.boolean({ error: expected('true or false') }).default(false),
    /**
     * The doer may add checker suppressions (`// eslint-disable`, `# noqa`, `@ts-ignore`) and change
     * checkers' settings in its scope, and, where it may write tests, switch them off (`.skip`,
     * `.only`, `xfail`). Off, that is tamper: a count of lint warnings, type errors or uncovered lines
     * falls by silencing the checker (silenced-checks.ts), a pass rate by skipping what fails.
     */
    doer_may_silence_checks: z.boolean({ error: expected('true or false') }).default(false),
    /**
     * The doer's code may patch the runtime the metric runs it in (`performance.now = …`,
     * `console.log = …`, `sys.stdout = …`, the module loader), name the metric's own files, and print
     * or end the process from code the metric imports. Off, that is tamper: the metric loads the code
     * into its own process, where it can rewrite the score (runtime-reach.ts, loaded-code.ts). On for
     * a loop whose artifact is a polyfill or a runtime shim.
     */
    doer_may_patch_runtime: z.boolean({ error: expected('true or false') }).default(false),
    /**
     * What a soft judge reads may hold text the doer adds for the judge: an instruction, a note to a
     * model or a grader, a score, a turn of a conversation with a model, hidden characters. Off, that
     * is tamper (judge-address.ts). On for an artifact that speaks to models (a prompt) or to graders.
     */
    doer_may_address_judge: z.boolean({ error: expected('true or false') }).default(false),
    /**
     * The largest file a doer's change may hold, in bytes (0 = no limit). A larger one is not committed:
     * removed, or put back as the base had it (size-limits.ts). GitHub refuses files over 100 MiB.
     */
    max_file_bytes: nonNegativeInt('a non-negative integer number of bytes (0 = no limit)').default(
      DEFAULT_MAX_FILE_BYTES,
    ),
    /** All the files a doer's change holds together, in bytes (0 = no limit): past it, the largest go. */
    max_change_bytes: nonNegativeInt('a non-negative integer number of bytes (0 = no limit)').default(
      DEFAULT_MAX_CHANGE_BYTES,
    ),
    /**
     * How many files a doer's change may add, change or remove (0 = no limit): past it, none of the
     * change is committed; it is put back as the base had it.
     */
    max_change_files: nonNegativeInt('a non-negative integer number of files (0 = no limit)').default(
      DEFAULT_MAX_CHANGE_FILES,
    ),
  },
  {
    error: expected(
      'an object with "doer_paths" (and optionally "judge_paths", "rebuilt_paths", "doer_may_change_tests", "doer_may_silence_checks", "doer_may_patch_runtime", "doer_may_address_judge", "max_file_bytes", "max_change_bytes", "max_change_files")',
    ),
  },
);

const agentSpec = z
  .string({ error: expected('an agent name such as "claude-opus" or "codex"') })
  .regex(/^[A-Za-z0-9][\w.:/@-]*$/, { error: expected('an agent name such as "claude-opus" or "codex"') });

const agents = z
  .strictObject(
    {
      doer: agentSpec.default('claude-opus'),
      judge: agentSpec.default('claude-haiku'),
      strategist: agentSpec.default('claude-sonnet'),
      retrospective: agentSpec.optional(),
      resume_strategist: agentSpec.optional(),
    },
    { error: expected('an object mapping roles to agents') },
  )
  .transform((a) => ({
    ...a,
    retrospective: a.retrospective ?? a.strategist,
    resume_strategist: a.resume_strategist ?? a.strategist,
  }));

export const loopConfigSchema = z
  .strictObject(
    {
      subject: text('a non-empty subject'),
      epic_id: text('the epic id').optional(),
      metric,
      target: z
        .number({ error: expected('a number or null (no target)') })
        .nullable()
        .default(null),
      min_delta: z
        .number({ error: expected('a non-negative number') })
        .min(0, { error: expected('a non-negative number') })
        .default(0),
      caps: caps.prefault({}),
      scope,
      agents: agents.prefault({}),
      confirmation_rounds: z
        .number({ error: expected('an integer ≥ 1') })
        .int({ error: expected('an integer ≥ 1') })
        .min(1, { error: expected('an integer ≥ 1') })
        .default(1),
      population: population.default(1),
      guards: z.array(guard, { error: expected('a list of guards') }).default([]),
      spec: text(SLUG_RULE)
        .regex(SLUG_PATTERN, { error: expected(SLUG_RULE) })
        .optional(),
      tracks: z.array(track, { error: expected('a list of tracks') }).default([]),
    },
    { error: expected('a JSON object') },
  )
  .superRefine((config, ctx) => {
    // A failed check is named in the ledger and to the strategist: two with one name would be ambiguous.
    const seen = new Set<string>();
    for (const [key, list] of [
      ['guards', config.guards],
      ['tracks', config.tracks],
    ] as const) {
      list.forEach((check, index) => {
        if (seen.has(check.name)) {
          ctx.addIssue({
            code: 'custom',
            path: [key, index, 'name'],
            message: `the name ${JSON.stringify(check.name)} is already taken by another guard or track: give each its own name`,
          });
        }
        seen.add(check.name);
      });
    }
  });

/** The config as written on disk (defaults may be omitted). Write files from this type. */
export type LoopConfigFile = z.input<typeof loopConfigSchema>;
/** The validated config, defaults filled, hard metric with its `argv`. Never write it back as is. */
export type LoopConfig = z.output<typeof loopConfigSchema>;
export type MetricConfig = LoopConfig['metric'];
export type HardMetricConfig = Extract<MetricConfig, { type: 'hard' }>;
export type SoftMetricConfig = Extract<MetricConfig, { type: 'soft' }>;
export type ScoreSource = HardMetricConfig['score'];
export type CapsConfig = LoopConfig['caps'];
export type GuardConfig = LoopConfig['guards'][number];
export type TrackConfig = LoopConfig['tracks'][number];

function splitOrThrow(command: string): string[] {
  const split = splitCommandLine(command, 'the metric command');
  // The refinement on `command` has already rejected anything that does not split.
  return split.ok ? split.argv : [];
}

/** Pieces a pipeline's loop stage shares with config.json, so both read and fail the same way. */
export const loopSchemaParts = {
  text,
  expected,
  relativePath,
  doerPath,
  metric,
  caps,
  agentSpec,
  population,
} as const;
