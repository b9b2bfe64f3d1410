// `forge-pack loop`: create an autoresearch loop from the command line's program, metric and caps.
import { Option, type Command } from 'commander';
import type { SetupResult } from '../autoresearch/setup.js';
import type { LoopSetupOptions } from '../autoresearch/setup-options.js';
import { parseRoleAgents } from './agent-options.js';
import {
  globals,
  openStoreFor,
  parseInteger,
  parseNumberArg,
  parseSizeArg,
  readUserFile,
  workingDir,
  type GlobalOptions,
} from './common.js';
import type { CliDeps } from './deps.js';
import {
  addCheckOptions,
  CHECK_FLAG_FOR_FIELD,
  CHECK_HELP,
  checkOptionsFrom,
  type CheckFlags,
} from './loop-check-options.js';
import { printJson, say } from './output.js';

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** `--agents` of a loop: the same pairs as ralph-loop's, keyed as in config.json (`resume_strategist`). */
function parseAgents(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const pairs = Object.entries(parseRoleAgents(value)).map(([role, agent]): [string, string] => [
    role.replace(/-/g, '_'),
    agent,
  ]);
  return { ...previous, ...Object.fromEntries(pairs) };
}

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
  population?: number;
  scope?: string[];
  rebuilt?: string[];
  doerMayChangeTests?: boolean;
  doerMaySilenceChecks?: boolean;
  doerMayPatchRuntime?: boolean;
  doerMayAddressJudge?: boolean;
  maxFileSize?: number;
  maxChangeSize?: number;
  maxChangeFiles?: number;
  agents?: Record<string, string>;
  workspace?: string;
  force?: boolean;
  answerProbe?: boolean;
  spec?: string;
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
  'scope.rebuilt_paths': '--rebuilt',
  'scope.doer_may_change_tests': '--doer-may-change-tests',
  'scope.doer_may_silence_checks': '--doer-may-silence-checks',
  'scope.doer_may_patch_runtime': '--doer-may-patch-runtime',
  'scope.doer_may_address_judge': '--doer-may-address-judge',
  'scope.max_file_bytes': '--max-file-size',
  'scope.max_change_bytes': '--max-change-size',
  'scope.max_change_files': '--max-change-files',
  agents: '--agents',
  confirmation_rounds: '--confirmation-rounds',
  population: '--population',
  spec: '--spec',
  ...CHECK_FLAG_FOR_FIELD,
};

export function defineLoopCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<subject>', 'what the loop improves, in a few words (bead titles carry it)')
    .option('--program <text>', 'the program: the stable directive every doer reads')
    .option('--program-file <file>', 'read the program from a file (Markdown)')
    .option('--metric-command <cmd>', 'hard metric: a command run without a shell, e.g. "npm test -- --json"')
    .option(
      '--score <source>',
      'how the hard metric is read: exit-code (0 → 100), regex:<pattern> (regex-stderr:<pattern> for a score printed on stderr), json:<path>, tap, junit (the % passed); tap, junit and an exit code with a test summary are held to the tests the baseline ran',
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
    .option(
      '--population <k>',
      'candidates per iteration: k doers from the same base, each in its own worktree, judged blind; the best may be kept (default 1)',
      parseNumberArg,
    )
    .option('--scope <path>', 'a path the doer may change (repeatable; default: --artifact)', collect)
    .option(
      '--rebuilt <path>',
      'an ignored path the metric command writes again itself, e.g. dist/ (repeatable): what an agent changes there is removed, not put back, and a run that rewrites it still scores',
      collect,
    )
    .option(
      '--doer-may-change-tests',
      'the doer may add, change and remove test files in its scope (a loop that writes tests); otherwise that is tamper, and a scope holding tests is refused',
    )
    .option(
      '--doer-may-silence-checks',
      "the doer may add checker suppressions (// eslint-disable, # noqa, @ts-ignore, # pragma: no cover), change checkers' settings in its scope, and, where it may write tests, skip them (.skip, .only, xfail); otherwise that is tamper",
    )
    .option(
      '--doer-may-patch-runtime',
      "the doer's code may patch the runtime the metric loads it into (performance.now = …, console.log = …, sys.stdout = …, the module loader), reach what tests it (a test framework, node:assert), name the metric's files, print or end the process from code the metric imports, and end a test's process: for a polyfill or a shim; otherwise that is tamper, or no score",
    )
    .option(
      '--doer-may-address-judge',
      'what a soft judge reads may hold text the doer adds for the judge (an instruction, a note to a model or a grader, a score, a turn of a chat, hidden characters): for an artifact that is a prompt; otherwise that is tamper',
    )
    .option(
      '--max-file-size <size>',
      "the largest file a doer's change may hold, e.g. 100M, 2G; one larger is not committed (removed, or put back as the base had it). 0: no limit (default 100M, GitHub's limit)",
      parseSizeArg,
    )
    .option(
      '--max-change-size <size>',
      "the most a doer's changed files may hold together; past it the largest are not committed. 0: no limit (default 1G)",
      parseSizeArg,
    )
    .option(
      '--max-change-files <n>',
      "how many files a doer's change may add, change or remove; past it none of the change is committed. 0: no limit (default 10000)",
      parseInteger(0),
    )
    .option(
      '--agents <pairs>',
      'agents per role, over .forge/config.json agents: doer=claude-opus,judge=claude-haiku,strategist=my-agent',
      parseAgents,
    )
    .option('--workspace <dir>', 'the loop workspace, for several loops in one repo (default .autoresearch)')
    .option(
      '--spec <slug>',
      'the spec this loop serves (specs/<slug>/): its retrospective records the outcome in the run state',
    )
    .option('--force', 'move an existing loop in the workspace to <workspace>/archive/ and start over')
    .option(
      '--no-answer-probe',
      "skip the hard metric's extra runs at setup, on the scope's code answering nothing (then only its small calls), that say whether the metric checks the answers it times",
    )
    .action(async (subject: string, flags: LoopFlags, cmd: Command) => {
      const options = globals(cmd);
      const repo = workingDir(deps, options);
      const parsedOptions = await loopOptionsFrom(deps, options, subject, flags);
      const [{ setupLoop }, { loopSetupPorts }, { loopAgents }] = await Promise.all([
        import('../autoresearch/setup.js'),
        import('./setup-ports.js'),
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
        // What takes time after the baseline is said as it starts (the answer probe's runs).
        const ports = { ...loopSetupPorts(deps, repo, store), progress: (line: string) => say(deps, line) };
        result = await setupLoop(repo, setupOptions, ports);
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
}

async function loopOptionsFrom(
  deps: CliDeps,
  options: GlobalOptions,
  subject: string,
  flags: LoopFlags,
): Promise<LoopSetupOptions> {
  const { UsageError } = await import('../infra/errors.js');
  if (flags.program !== undefined && flags.programFile !== undefined) {
    throw new UsageError('Give the program either with --program or with --program-file, not both.');
  }
  const program =
    flags.programFile !== undefined
      ? await readUserFile(deps, options, flags.programFile, 'the program file')
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
  const { parseScoreOption } = await import('../autoresearch/setup-options.js');
  const metric: LoopSetupOptions['metric'] = hard
    ? {
        type: 'hard',
        command: flags.metricCommand ?? '',
        score: flags.score === undefined ? undefined : parseScoreOption(flags.score),
        direction: flags.direction,
        artifact: flags.artifact,
        timeoutSeconds: flags.metricTimeout,
        repeat: flags.repeat,
      }
    : {
        type: 'soft',
        rubric: flags.rubric ?? '',
        artifact: flags.artifact ?? '',
        direction: flags.direction,
        repeat: flags.repeat,
      };
  return {
    subject,
    program,
    metric,
    target: flags.target,
    minDelta: flags.minDelta,
    maxIterations: flags.maxIterations,
    wallClockSeconds: flags.wallClock,
    plateau: flags.plateau,
    maxCostUsd: flags.maxCost,
    confirmationRounds: flags.confirmationRounds,
    population: flags.population,
    scope: flags.scope,
    rebuilt: flags.rebuilt,
    doerMayChangeTests: flags.doerMayChangeTests,
    doerMaySilenceChecks: flags.doerMaySilenceChecks,
    doerMayPatchRuntime: flags.doerMayPatchRuntime,
    doerMayAddressJudge: flags.doerMayAddressJudge,
    maxFileBytes: flags.maxFileSize,
    maxChangeFiles: flags.maxChangeFiles,
    maxChangeBytes: flags.maxChangeSize,
    agents: flags.agents,
    workspace: flags.workspace,
    force: flags.force,
    answerProbe: flags.answerProbe,
    spec: flags.spec,
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
      run_outputs: result.run_outputs,
      answer_probe: result.answer_probe ?? null,
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
  if (result.run_outputs.length > 0) {
    const shown = result.run_outputs.slice(0, 5).join(', ');
    const more = result.run_outputs.length > 5 ? ` and ${result.run_outputs.length - 5} more` : '';
    say(
      deps,
      `The baseline's runs wrote ${shown}${more}: later runs may write them too; a run that changes another file git ignores, or one the commands name outside the repository, gives no score.`,
    );
  }
  if (result.beads.length > 0) {
    say(deps, `Cycle 1: ${result.beads.map((b) => `${b.title.split(':')[0]} ${b.id}`).join(', ')}.`);
  }
  say(deps, `Run it: ralph-loop ${result.epic}`);
}
