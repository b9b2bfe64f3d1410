// Autoresearch commands: `forge-pack loop` and `stamp`, `ralph-loop status` and `resume`.
//
// `status` is run over and over while a loop works, so this module imports only commander and types
// at load time; everything heavier (the store, git, execa, zod schemas) is imported inside the action
// that needs it.
import { isProcessAlive } from '../infra/pid.js';
import { findRepoRoot } from '../infra/repo-root.js';
import { resolve } from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { LoopSetupOptions, SetupResult } from '../autoresearch/setup.js';
import type { StampResult } from '../autoresearch/stamp.js';
import type { LoopStatus } from '../autoresearch/status.js';
import type { GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import type { RunFlags } from './run-command.js';
import { parseRoleAgents } from './agent-options.js';
import {
  addCheckOptions,
  CHECK_FLAG_FOR_FIELD,
  CHECK_HELP,
  checkOptionsFrom,
  type CheckFlags,
} from './loop-check-options.js';

// ---- shared ----

/**
 * Commands added with addCommand do not inherit the program's settings: each sets its own, so a usage
 * error is reported through the sinks and an exit code instead of ending the process.
 */
function configureCommand(command: Command, deps: CliDeps): Command {
  return command
    .exitOverride()
    .configureOutput({
      writeOut: (text) => deps.stdout.write(text),
      writeErr: (text) => deps.stderr.write(text),
    })
    .showHelpAfterError('(run with --help for usage)');
}

// The two helpers below repeat common.ts's `globals` and `workingDir`: importing common.ts would load
// the store and config schemas on the status path.
function globalsOf(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

function repoOf(deps: CliDeps, options: GlobalOptions): string {
  return options.cwd === undefined ? findRepoRoot(deps.cwd) : resolve(deps.cwd, options.cwd);
}

/** Files named on the command line are relative to where the user is (or to -C <dir>). */
function userDir(deps: CliDeps, options: GlobalOptions): string {
  return resolve(deps.cwd, options.cwd ?? '.');
}

function printJson(deps: CliDeps, value: unknown): void {
  deps.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

function say(deps: CliDeps, message: string): void {
  deps.stderr.write(`${message}\n`);
}

function parseNumberArg(value: string): number {
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(value.trim())) {
    throw new InvalidArgumentError(`expected a number, got '${value}'.`);
  }
  return Number(value);
}

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--agents` of a loop: the same pairs as ralph-loop's, keyed as in config.json (`resume_strategist`). */
function parseAgents(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const pairs = Object.entries(parseRoleAgents(value)).map(([role, agent]) => [
    role.replace(/-/g, '_'),
    agent,
  ]);
  return { ...previous, ...Object.fromEntries(pairs) };
}

async function readTextFile(dir: string, file: string, what: string): Promise<string> {
  const [{ readFile }, { resolve }, { AppError, ExitCode }] = await Promise.all([
    import('node:fs/promises'),
    import('node:path'),
    import('../infra/errors.js'),
  ]);
  try {
    return await readFile(resolve(dir, file), 'utf8');
  } catch {
    throw new AppError(`Cannot read ${what} ${file}.`, { exitCode: ExitCode.usage });
  }
}

/** The store for an epic: its loop's own when it has one (see openStoreFor). */
async function openStore(deps: CliDeps, options: GlobalOptions, epicId?: string) {
  const { openStoreFor } = await import('./common.js');
  return (await openStoreFor(deps, options, epicId)).opened.store;
}

// ---- forge-pack loop ----

interface LoopFlags extends CheckFlags {
  program?: string;
  programFile?: string;
  metricCommand?: string;
  score?: string;
  direction?: 'maximize' | 'minimize';
  metricTimeout?: number;
  repeat?: number;
  rubric?: string;
  artifact?: string;
  target?: number;
  minDelta?: number;
  maxIterations?: number;
  plateau?: number;
  wallClock?: number;
  maxCost?: number;
  confirmationRounds?: number;
  scope?: string[];
  agents?: Record<string, string>;
  workspace?: string;
  force?: boolean;
}

/** The flag that sets each config field, so a config error names what the user typed. */
const FLAG_FOR_FIELD: Record<string, string> = {
  subject: '<subject>',
  'metric.command': '--metric-command',
  'metric.score': '--score',
  'metric.score.pattern': '--score regex:…',
  'metric.score.path': '--score json:…',
  'metric.direction': '--direction',
  'metric.timeout_seconds': '--metric-timeout',
  'metric.repeat': '--repeat',
  'metric.rubric_path': '--rubric',
  'metric.artifact_path': '--artifact',
  target: '--target',
  min_delta: '--min-delta',
  'caps.max_iterations': '--max-iterations',
  'caps.wall_clock_seconds': '--wall-clock',
  'caps.plateau_threshold': '--plateau',
  'caps.max_cost_usd': '--max-cost',
  'scope.doer_paths': '--scope',
  'scope.judge_paths': '--artifact',
  agents: '--agents',
  confirmation_rounds: '--confirmation-rounds',
  ...CHECK_FLAG_FOR_FIELD,
};

export function createLoopCommand(deps: CliDeps): Command {
  const command = configureCommand(new Command('loop'), deps)
    .description(
      'create an autoresearch loop: workspace, epic, baseline and the first cycle of beads; prints the epic id',
    )
    .argument('<subject>', 'what the loop improves, in a few words (bead titles carry it)')
    .option('--program <text>', 'the program: the stable directive every doer reads')
    .option('--program-file <file>', 'read the program from a file (Markdown)')
    .option('--metric-command <cmd>', 'hard metric: a command run without a shell, e.g. "npm test -- --json"')
    .option(
      '--score <source>',
      'how the hard metric is read: exit-code (0 → 100), regex:<pattern>, json:<path>, tap, junit',
    )
    .addOption(
      new Option('--direction <direction>', 'whether higher or lower scores are better').choices([
        'maximize',
        'minimize',
      ]),
    )
    .option(
      '--metric-timeout <seconds>',
      'kill the metric command after this long (default 600)',
      parseNumberArg,
    )
    .option(
      '--repeat <n>',
      'hard metric: measure every score n times and score the median; a gain within the noise is measured again, then reverted (default 1)',
      parseNumberArg,
    )
    .option('--rubric <file>', 'soft metric: a rubric a judge agent scores the artifact against')
    .option('--artifact <path>', 'what is judged (a file or directory); the default scope')
    .option('--target <score>', 'stop when the score reaches this (default: no target)', parseNumberArg)
    .option(
      '--min-delta <n>',
      'a score counts as an improvement only when it beats the best by more than this (default 0)',
      parseNumberArg,
    )
    .option(
      '--max-iterations <n>',
      'stop after this many iterations (default 20; 0 = no cap)',
      parseNumberArg,
    )
    .option(
      '--plateau <n>',
      'stop after this many non-improvements in a row (default 3; 0 = never)',
      parseNumberArg,
    )
    .option('--wall-clock <seconds>', 'stop the loop after this long (default: no cap)', parseNumberArg)
    .option('--max-cost <usd>', 'stop when agents have cost this much (default: no cap)', parseNumberArg)
    .option(
      '--confirmation-rounds <n>',
      'iterations in a row that must meet the target (default 1)',
      parseNumberArg,
    )
    .option('--scope <path>', 'a path the doer may change (repeatable; default: --artifact)', collect)
    .option(
      '--agents <pairs>',
      'agents per role, over .forge/config.json agents: doer=claude-opus,judge=claude-haiku,strategist=my-agent',
      parseAgents,
    )
    .option('--workspace <dir>', 'the loop workspace, for several loops in one repo (default .autoresearch)')
    .option('--force', 'move an existing loop in the workspace to <workspace>/archive/ and start over')
    .action(async (subject: string, flags: LoopFlags, cmd: Command) => {
      const options = globalsOf(cmd);
      const repo = repoOf(deps, options);
      const parsedOptions = await loopOptionsFrom(userDir(deps, options), subject, flags);
      const [{ setupLoop }, { createGit }, { runProcess }, { openStoreFor }, { loopAgents }] =
        await Promise.all([
          import('../autoresearch/setup.js'),
          import('../infra/git.js'),
          import('../infra/process.js'),
          import('./common.js'),
          import('./agent-options.js'),
        ]);
      const { config, opened } = await openStoreFor(deps, options);
      // --agents, then .forge/config.json agents: what the loop's beads are stamped with.
      const agents = loopAgents(flags.agents, config);
      const setupOptions = { ...parsedOptions, ...(Object.keys(agents).length === 0 ? {} : { agents }) };
      const store = opened.store;
      await store.init();
      let result: SetupResult;
      try {
        result = await setupLoop(repo, setupOptions, {
          store,
          git: createGit({ cwd: repo, env: deps.env }),
          runMetric: (argv, run) =>
            runProcess(
              { file: argv[0] ?? '', args: argv.slice(1) },
              { cwd: run.cwd, env: deps.env, timeoutMs: run.timeoutMs },
            ),
          now: () => deps.clock.now(),
          isProcessAlive,
        });
      } catch (error) {
        throw await withFlagNames(error);
      }
      reportSetup(deps, options, result);
    });
  addCheckOptions(command);
  command.addHelpText(
    'after',
    `
Examples:
  # hard metric: the runner runs the command itself and reads the score
  forge-pack loop "faster parser" --program-file program.md --scope src/parser/ \\
    --metric-command "node bench/parse.js --json" --score json:ops_per_sec --target 50000
  forge-pack loop "test pass rate" --program "Make the failing tests pass without weakening them." \\
    --metric-command "npm test -- --reporter=tap" --score tap --target 100 --scope src/
  # a noisy benchmark: 5 runs per score, the median scored, a gain within the noise not kept
  forge-pack loop "faster build" --program-file program.md --scope src/ --direction minimize \\
    --metric-command "node bench/build.js" --score "regex:took ([0-9.]+) ms" --repeat 5
  # soft metric: a read-only judge agent scores the artifact against a rubric
  forge-pack loop "rate limiter spec" --program-file program.md \\
    --rubric .autoresearch-rubrics/spec.md --artifact docs/rate-limiter.md --max-iterations 10${CHECK_HELP}

Then run it: ralph-loop <epic>, and see where it stands: ralph-loop status <epic>.

The doer never sees the metric command, the rubric or the target; the judge never sees the program
or the history. The hard baseline is measured at once (nothing is created if it cannot be read); a
soft one is judged by the first beads (judge-0, arbiter-0). An existing loop in the workspace is never
overwritten: use --workspace for a second loop, or --force to archive the old one.`,
  );
  return command;
}

async function loopOptionsFrom(
  userDir: string,
  subject: string,
  flags: LoopFlags,
): Promise<LoopSetupOptions> {
  const { UsageError } = await import('../infra/errors.js');
  if (flags.program !== undefined && flags.programFile !== undefined) {
    throw new UsageError('Give the program either with --program or with --program-file, not both.');
  }
  const program =
    flags.programFile !== undefined
      ? await readTextFile(userDir, flags.programFile, 'the program file')
      : flags.program;
  if (program === undefined) {
    throw new UsageError('The loop needs a program: --program "<text>" or --program-file <file>.', {
      hint: 'The program is the stable directive every doer reads: what to improve, and the rules to keep.',
    });
  }
  const hard = flags.metricCommand !== undefined;
  const soft = flags.rubric !== undefined;
  if (hard === soft) {
    throw new UsageError(
      hard
        ? 'Give either a hard metric (--metric-command) or a soft one (--rubric), not both.'
        : 'The loop needs a metric: --metric-command "<cmd>" (hard) or --rubric <file> --artifact <path> (soft).',
      { hint: 'See the examples in: forge-pack loop --help' },
    );
  }
  if (soft && flags.artifact === undefined) {
    throw new UsageError('A soft metric needs the artifact the judge reads: --artifact <path>.');
  }
  if (!hard && (flags.score !== undefined || flags.metricTimeout !== undefined)) {
    throw new UsageError('--score and --metric-timeout belong to a hard metric (--metric-command).');
  }
  const { parseScoreOption } = await import('../autoresearch/setup.js');
  const metric: LoopSetupOptions['metric'] = hard
    ? {
        type: 'hard',
        command: flags.metricCommand ?? '',
        ...(flags.score === undefined ? {} : { score: parseScoreOption(flags.score) }),
        ...(flags.direction === undefined ? {} : { direction: flags.direction }),
        ...(flags.artifact === undefined ? {} : { artifact: flags.artifact }),
        ...(flags.metricTimeout === undefined ? {} : { timeoutSeconds: flags.metricTimeout }),
        ...(flags.repeat === undefined ? {} : { repeat: flags.repeat }),
      }
    : {
        type: 'soft',
        rubric: flags.rubric ?? '',
        artifact: flags.artifact ?? '',
        ...(flags.direction === undefined ? {} : { direction: flags.direction }),
        ...(flags.repeat === undefined ? {} : { repeat: flags.repeat }),
      };
  const optional = <K extends string, V>(key: K, value: V | undefined) =>
    (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;
  return {
    subject,
    program,
    metric,
    ...optional('target', flags.target),
    ...optional('minDelta', flags.minDelta),
    ...optional('maxIterations', flags.maxIterations),
    ...optional('wallClockSeconds', flags.wallClock),
    ...optional('plateau', flags.plateau),
    ...optional('maxCostUsd', flags.maxCost),
    ...optional('confirmationRounds', flags.confirmationRounds),
    ...optional('scope', flags.scope),
    ...optional('agents', flags.agents),
    ...optional('workspace', flags.workspace),
    ...optional('force', flags.force),
    ...checkOptionsFrom(flags, parseScoreOption),
  };
}

/** Appends the flag that set a field to each line of a config error: `… (from --max-iterations)`. */
async function withFlagNames(error: unknown): Promise<unknown> {
  const { ConfigError } = await import('../infra/errors.js');
  const { describeProblem } = await import('../infra/zod-issues.js');
  if (!(error instanceof ConfigError) || error.problems === undefined) return error;
  const lines = error.problems.map((problem) => {
    const field = problem.field.replace(/\[\d+\]/g, '');
    const flag = FLAG_FOR_FIELD[field] ?? FLAG_FOR_FIELD[field.split('.')[0] ?? ''];
    const line = describeProblem(problem);
    return flag === undefined ? line : `${line} (from ${flag})`;
  });
  // The file does not exist yet: the fix is in the command line.
  return new ConfigError(lines.join('\n'), {
    hint: 'Fix the option named above and run again; nothing was created.',
  });
}

function reportSetup(deps: CliDeps, options: GlobalOptions, result: SetupResult): void {
  if (options.json) {
    printJson(deps, {
      epic: result.epic,
      subject: result.subject,
      workspace: result.workspace_relative,
      baseline:
        result.baseline.kind === 'measured'
          ? { kind: 'measured', score: result.baseline.score, signal: result.baseline.signal }
          : { kind: 'pending', beads: result.baseline.beads },
      beads: result.beads,
      archived: result.archived ?? null,
      warnings: result.warnings,
      run: `ralph-loop ${result.epic}`,
    });
  } else {
    deps.stdout.write(`${result.epic}\n`);
  }
  for (const warning of result.warnings) say(deps, `warning: ${warning}`);
  if (result.archived !== undefined) say(deps, `The previous loop was moved to ${result.archived}.`);
  say(
    deps,
    `Created the loop "${result.subject}": epic ${result.epic}, workspace ${result.workspace_relative}/.`,
  );
  say(
    deps,
    result.baseline.kind === 'measured'
      ? `Baseline: ${result.baseline.score} (measured now; ${result.baseline.judge_output}).`
      : `Baseline: judged when the loop starts (${result.baseline.beads.map((b) => `${b.title.split(':')[0]} ${b.id}`).join(', ')}).`,
  );
  if (result.beads.length > 0) {
    say(deps, `Cycle 1: ${result.beads.map((b) => `${b.title.split(':')[0]} ${b.id}`).join(', ')}.`);
  }
  say(deps, `Run it: ralph-loop ${result.epic}`);
}

// ---- forge-pack stamp ----

interface StampFlags {
  epic: string;
  iter?: number;
  directiveFile?: string;
  retrospective?: boolean;
  needsHuman?: string;
  workspace?: string;
}

export function createStampCommand(deps: CliDeps): Command {
  const command = configureCommand(new Command('stamp'), deps)
    .description("stamp a loop's next beads: an iteration, the retrospective, or a question for the user")
    .requiredOption('--epic <id>', "the loop's epic")
    .option('--iter <n>', 'stamp iteration <n> (doer, judge, arbiter, strategist)', parseNumberArg)
    .option('--directive-file <file>', "the strategist's focus directive for that iteration's doer")
    .option('--retrospective', 'stamp the retrospective (after a terminal signal)')
    .option('--needs-human <file>', 'ask the user: copy the question to needs-human.md; stamps nothing')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .action(async (flags: StampFlags, cmd: Command) => {
      const options = globalsOf(cmd);
      const repo = repoOf(deps, options);
      const { UsageError } = await import('../infra/errors.js');
      const modes = [flags.iter !== undefined, flags.retrospective === true, flags.needsHuman !== undefined];
      if (modes.filter(Boolean).length !== 1) {
        throw new UsageError('Give exactly one of --iter <n>, --retrospective or --needs-human <file>.', {
          hint: 'See: forge-pack stamp --help',
        });
      }
      if (flags.directiveFile !== undefined && flags.iter === undefined) {
        throw new UsageError('--directive-file goes with --iter <n>.');
      }
      if (flags.needsHuman !== undefined) {
        await askFromFile(deps, options, repo, flags);
        return;
      }
      const [{ openLoop, stampIteration, stampRetrospective }, { resolve }] = await Promise.all([
        import('../autoresearch/stamp.js'),
        import('node:path'),
      ]);
      const store = await openStore(deps, options, flags.epic);
      const ctx = await openLoop(repo, flags.epic, {
        storeKind: store.kind,
        ...(flags.workspace === undefined ? {} : { workspace: flags.workspace }),
      });
      let result: StampResult;
      if (flags.iter !== undefined) {
        const directive =
          flags.directiveFile === undefined
            ? undefined
            : {
                text: await readTextFile(userDir(deps, options), flags.directiveFile, 'the directive file'),
                source: resolve(userDir(deps, options), flags.directiveFile),
              };
        result = await stampIteration(ctx, store, {
          iter: flags.iter,
          ...(directive === undefined ? {} : { directive }),
        });
      } else {
        result = await stampRetrospective(ctx, store);
      }
      reportStamp(
        deps,
        options,
        result,
        flags.iter === undefined ? 'the retrospective' : `iteration ${flags.iter}`,
      );
    });
  command.addHelpText(
    'after',
    `
Examples (a strategist's last act):
  forge-pack stamp --epic bd-a1b --iter 4 --directive-file .autoresearch/directives/directive-4.md
  forge-pack stamp --epic bd-a1b --retrospective
  forge-pack stamp --epic bd-a1b --needs-human /tmp/question.md

Stamping is idempotent: an iteration (or retrospective) that already exists is reported and nothing is
created (--json: {"created": [], "existing": [...]}). --iter must be the next iteration; nothing but the
retrospective is stamped once the loop has a terminal signal, nor while a question waits for the user.
Mentions of the metric or rubric in a directive are removed before the doer sees it.`,
  );
  return command;
}

async function askFromFile(
  deps: CliDeps,
  options: GlobalOptions,
  repo: string,
  flags: StampFlags,
): Promise<void> {
  const [{ askHuman }, { requireLoopWorkspace, resolveWorkspaceDir, workspacePaths }] = await Promise.all([
    import('../autoresearch/resume.js'),
    import('../autoresearch/workspace.js'),
  ]);
  const paths =
    flags.workspace === undefined
      ? await requireLoopWorkspace(repo, flags.epic)
      : workspacePaths(resolveWorkspaceDir(repo, flags.workspace).root);
  const question = await readTextFile(userDir(deps, options), flags.needsHuman ?? '', 'the question file');
  await askHuman(paths, flags.epic, question, new Date(deps.clock.now()).toISOString());
  if (options.json)
    printJson(deps, { epic: flags.epic, needs_human: paths.needsHuman, created: [], existing: [] });
  say(
    deps,
    `Asked the user in ${paths.needsHuman}; nothing was stamped. The loop waits for: ralph-loop resume ${flags.epic}`,
  );
}

function reportStamp(deps: CliDeps, options: GlobalOptions, result: StampResult, what: string): void {
  if (options.json) {
    printJson(deps, {
      epic: result.epic,
      created: result.created.map((b) => b.id),
      existing: result.existing.map((b) => b.id),
      beads: [
        ...result.created.map((b) => ({ ...b, status: 'created' })),
        ...result.existing.map((b) => ({ ...b, status: 'existing' })),
      ],
      redactions: result.redactions,
    });
  } else {
    for (const bead of result.created) deps.stdout.write(`${bead.id}\n`);
  }
  const names = (beads: StampResult['created']) =>
    beads.map((b) => `${b.title.split(':')[0]} ${b.id}`).join(', ');
  if (result.created.length === 0) {
    say(
      deps,
      `${capitalize(what)} of ${result.epic} is already stamped (${names(result.existing)}): nothing created.`,
    );
  } else {
    say(deps, `Stamped ${what} of ${result.epic}: ${names(result.created)}.`);
    if (result.existing.length > 0) say(deps, `Already there: ${names(result.existing)}.`);
  }
  if (result.redactions > 0) {
    say(
      deps,
      `warning: removed ${result.redactions} mention(s) of the metric or rubric from the doer's description (the doer is blind to them).`,
    );
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

// ---- ralph-loop status ----

interface StatusFlags {
  beads?: boolean;
  ascii?: boolean;
  workspace?: string;
}

export function createStatusCommand(deps: CliDeps): Command {
  const command = configureCommand(new Command('status'), deps)
    .description(
      "where an epic stands (works while it runs): a loop's scores, phase, cost and last iterations; a plain epic's beads, live bead, last run and failures",
    )
    .argument('<epic-id>', 'the epic (an autoresearch loop or any other)')
    .option('--beads', "also count the epic's beads by status (asks the bead store)")
    .option('--ascii', 'draw the score trend with ASCII characters')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .action(async (epicId: string, flags: StatusFlags, cmd: Command) => {
      const options = globalsOf(cmd);
      const repo = repoOf(deps, options);
      if (flags.workspace === undefined) {
        const { findLoopWorkspace } = await import('../autoresearch/workspace.js');
        if ((await findLoopWorkspace(repo, epicId)) === undefined) {
          await showEpicStatus(deps, options, epicId);
          return;
        }
      }
      const { loopStatus, renderStatusText } = await import('../autoresearch/status.js');
      const status: LoopStatus = await loopStatus(
        repo,
        epicId,
        { now: () => deps.clock.now(), host: deps.host, isProcessAlive },
        flags.workspace === undefined ? {} : { workspace: flags.workspace },
      );
      if (flags.beads === true) {
        const store = await openStore(deps, options, epicId);
        const counts: Record<string, number> = {};
        for (const bead of await store.children(epicId)) counts[bead.status] = (counts[bead.status] ?? 0) + 1;
        status.beads = counts;
      }
      if (options.json) printJson(deps, status);
      else
        deps.stdout.write(
          renderStatusText(status, { unicode: flags.ascii !== true && prefersUnicode(deps.env) }),
        );
    });
  command.addHelpText(
    'after',
    `
Examples:
  ralph-loop status bd-a1b
  ralph-loop status bd-a1b --json | jq .scores
  watch -n 5 ralph-loop status bd-a1b
  ralph-loop status bd-c2d --json | jq .failures     # a plain epic: what failed, with its last message

A plain epic (not a loop) shows its beads done/open/in progress/blocked/failed (blocked: open with
unmet dependencies; failed: labelled ralph:failed), the live bead with its agent and how long it has
run, the last run (id, start, end, why it stopped) and each failed bead's last attempt message.

For a loop, phase: running (the live bead and how long it has run, from the loop's lock), waiting for a human
(needs-human.md), terminated (terminal-signal.json, with its reason), or idle. Scores read
"baseline → best → last"; the trend shows the recent iterations, a dot where one crashed.`,
  );
  return command;
}

/** A plain epic (no autoresearch loop): its beads, the live bead, the last run, what failed. */
async function showEpicStatus(deps: CliDeps, options: GlobalOptions, epicId: string): Promise<void> {
  const [{ epicStatus }, { renderEpicStatusText }, { runDirFor }] = await Promise.all([
    import('./epic-status.js'),
    import('./epic-status-text.js'),
    import('./epic-dirs.js'),
  ]);
  const repo = repoOf(deps, options);
  const status = await epicStatus(epicId, {
    store: await openStore(deps, options, epicId),
    runDir: await runDirFor(repo, epicId),
    now: () => deps.clock.now(),
    host: deps.host,
    isProcessAlive: deps.isProcessAlive ?? isProcessAlive,
  });
  if (options.json) printJson(deps, status);
  else deps.stdout.write(renderEpicStatusText(status));
}

/** Unicode unless the locale is set and says it is not UTF-8 (LANG=C, a Latin-1 locale), or TERM=dumb. */
export function prefersUnicode(env: NodeJS.ProcessEnv): boolean {
  if (env.TERM === 'dumb') return false;
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG;
  return locale === undefined || locale === '' || /utf-?8/i.test(locale);
}

// ---- ralph-loop resume ----

interface ResumeFlags extends RunFlags {
  answer?: string;
  answerFile?: string;
  run?: boolean;
  workspace?: string;
}

export function createResumeCommand(deps: CliDeps): Command {
  const command = configureCommand(new Command('resume'), deps)
    .description("fold the user's answer into a waiting loop, then run it on")
    .argument('<epic-id>', "the loop's epic")
    .option('--answer <text>', 'the answer, written under "## Answer" in needs-human.md for you')
    .option('--answer-file <file>', 'read the answer from a file')
    .option('--no-run', 'stamp the resume strategist but do not start the loop')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .action(async (epicId: string, _local: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<ResumeFlags & GlobalOptions>();
      const options = globalsOf(cmd);
      const repo = repoOf(deps, options);
      const [{ openLoop }, { resumeLoop }, { UsageError }] = await Promise.all([
        import('../autoresearch/stamp.js'),
        import('../autoresearch/resume.js'),
        import('../infra/errors.js'),
      ]);
      if (flags.answer !== undefined && flags.answerFile !== undefined) {
        throw new UsageError('Give the answer either with --answer or with --answer-file, not both.');
      }
      const answer =
        flags.answerFile === undefined
          ? flags.answer
          : await readTextFile(userDir(deps, options), flags.answerFile, 'the answer file');
      const store = await openStore(deps, { ...options, actor: options.actor ?? 'ralph-loop' }, epicId);
      const ctx = await openLoop(repo, epicId, {
        storeKind: store.kind,
        ...(flags.workspace === undefined ? {} : { workspace: flags.workspace }),
      });
      const result = await resumeLoop(ctx, store, answer === undefined ? {} : { answer });
      const stamped = [...result.created, ...result.existing][0];
      if (options.json) {
        // One line: when the loop runs on, its events follow as NDJSON.
        deps.stdout.write(
          `${JSON.stringify({
            type: 'resumed',
            epic: epicId,
            k: result.k,
            bead: stamped?.id ?? null,
            created: result.created.map((b) => b.id),
            existing: result.existing.map((b) => b.id),
            archived: result.archived,
            reopened: result.reopened,
          })}\n`,
        );
      }
      say(
        deps,
        `Resumed ${epicId}: the answer is archived in ${result.archived}; ${stamped === undefined ? 'no bead' : `${stamped.title.split(':')[0]} ${stamped.id}`} carries it to the strategist.`,
      );
      if (flags.run === false) {
        say(deps, `Run the loop when ready: ralph-loop ${epicId}`);
        return;
      }
      const { runLoopCommand } = await import('./run-command.js');
      await runLoopCommand(deps, options, epicId, runFlagsOf(flags));
    });
  command.addHelpText(
    'after',
    `
Examples:
  $EDITOR .autoresearch/needs-human.md     # write the answer under the line "## Answer"
  ralph-loop resume bd-a1b
  ralph-loop resume bd-a1b --answer "Keep the public API; internal names may change."
  ralph-loop resume bd-a1b --no-run        # stamp only; run later with ralph-loop bd-a1b

The question and answer are archived as needs-human-resolved-<K>.md and given to a resume strategist,
which stamps the next iteration. The ledger, the scores and the best kept result are left untouched.
Run options (--agent, --timeout, --wall-clock, --worktree, …) apply as for ralph-loop <epic>.`,
  );
  return command;
}

function runFlagsOf(flags: ResumeFlags): RunFlags {
  const keys = [
    'agent',
    'agents',
    'timeout',
    'wallClock',
    'maxBeads',
    'maxAttempts',
    'backoff',
    'autoCommit',
    'dryRun',
    'worktree',
  ] as const;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (flags[key] !== undefined) out[key] = flags[key];
  return out as RunFlags;
}
