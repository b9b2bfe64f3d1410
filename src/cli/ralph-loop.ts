// `ralph-loop`: run an epic's ready beads one at a time through agents and built-in executors.
import { Command } from 'commander';
import { addCompletionCommand } from './completion.js';
import { parseRoleAgents } from './agent-options.js';
import {
  DASHBOARD_COMMAND,
  LOGS_COMMAND,
  ONCE_COMMAND,
  REPORT_COMMAND,
  RESUME_COMMAND,
  STATUS_COMMAND,
  STOP_COMMAND,
} from './command-specs.js';
import { configureProgram, globals, parseInteger } from './common.js';
import type { CliDeps } from './deps.js';
import { addLazyCommand } from './lazy-command.js';
import type { RunFlags } from './run-flags.js';
import { AppError, ExitCode, UsageError } from '../infra/errors.js';
import { closestId } from './run-target.js';

function addRunOptions(command: Command): Command {
  return command
    .option(
      '--agent <spec>',
      'agent for every agent bead, over labels and .forge/config.json: claude, claude-opus|sonnet|haiku, codex, scripted, a name from agent_commands, or "my-agent --flag"',
    )
    .option(
      '--agents <pairs>',
      'agent per role, over --agent, labels and the config: doer=claude-opus,judge=codex (repeatable)',
      parseRoleAgents,
    )
    .option(
      '--timeout <seconds>',
      "per-bead timeout; the agent's whole process group is killed (default 1800)",
      parseInteger(1),
    )
    .option(
      '--wall-clock <seconds>',
      'stop the whole run after this long, even mid-bead (default: no cap)',
      parseInteger(0),
    )
    .option(
      '--max-attempts <n>',
      'attempts per bead before it is labelled ralph:failed (default 3)',
      parseInteger(1),
    )
    .option(
      '--backoff <seconds>',
      'base of the exponential backoff between attempts (default 10)',
      parseInteger(0),
    )
    .option(
      '--auto-commit',
      'commit what a code-writing bead changed, naming the bead (default: runner.auto_commit, else off)',
    )
    .option('--no-auto-commit', 'do not commit after plain beads, whatever runner.auto_commit says')
    .option(
      '--gates',
      'run the .forge/config.json gates after each code-writing bead (default: runner.run_gates, else on)',
    )
    .option('--no-gates', 'run no gates this run, whatever runner.run_gates or gates: labels say')
    .option(
      '--report',
      "write report.html beside the epic's run files at the end (default: for autoresearch loops only)",
    )
    .option('--no-report', 'write no report at the end, even for a loop')
    .option(
      '--allow-dirty',
      'with --auto-commit, start on a tree with changes of your own: those paths are never committed',
    )
    .option(
      '--parallel <n>',
      'run up to n plain agent beads at once, each in its own git worktree; their commits land on your branch in the order the beads were picked, gated there (implies --auto-commit; loop roles and built-in beads still run alone; default: runner.parallel, else 1)',
      parseInteger(1, 64),
    )
    .option(
      '--executor <kind>',
      "where attempts run: local (this machine; default) or queue (forge-pack worker processes on any machine, through --redis; implies --parallel's merging)",
    )
    .option(
      '--redis <url>',
      'with --executor queue: the Redis the workers take attempts from (redis://host:6379)',
    )
    .option(
      '--remote <url>',
      "with --executor queue: the git remote workers fetch bases from and push results to (default: origin's URL)",
    )
    .option(
      '--worktree',
      'run in the worktree .forge/worktrees/<epic> on branch ralph-loop/<epic> (reused on rerun)',
    )
    .option(
      '--accept-head',
      "for a loop whose branch or HEAD you moved on purpose: take the current HEAD as the loop's own",
    )
    .option('--dry-run', 'print the order beads would run in; claim, run and change nothing')
    .option(
      '--no-validate',
      "skip the epic's checks before the run (forge-pack validate: cycles, dangling dependencies, unknown roles…)",
    );
}

export function createRalphLoopProgram(deps: CliDeps): Command {
  const program = configureProgram(new Command('ralph-loop'), deps, 'ralph-loop')
    .description(
      "Run an epic's ready beads one at a time, each in a fresh agent process, until none is ready.",
    )
    .argument('[epic-id]', 'the epic whose beads to run')
    .option('--max-beads <n>', 'stop after running this many beads (default: no cap)', parseInteger(0))
    // Checked in the action, which can tell a mistyped command (`ralph-loop statsu bd-1`) from a slip.
    .allowExcessArguments();
  addRunOptions(program);

  program.action(
    async (epicId: string | undefined, flags: RunFlags & { maxBeads?: number }, command: Command) => {
      if (epicId === undefined) {
        throw new AppError('Name the epic to run: ralph-loop <epic-id> (see ralph-loop --help).', {
          exitCode: ExitCode.usage,
        });
      }
      if (command.args.length > 1) refuseExtraArguments(command);
      // br's first calls go out from a small module, then the run's code loads while br answers.
      const options = globals(command);
      const { startRunReads } = await import('./run-start.js');
      const started = startRunReads(deps, options, epicId, flags);
      await started.sent;
      const { runLoopCommand } = await import('./run-command.js');
      await runLoopCommand(deps, options, epicId, flags, undefined, started);
    },
  );

  // Run options are the program's own and are recognised after a subcommand too (see once-command.ts).
  addLazyCommand(program, ONCE_COMMAND, deps);
  addLazyCommand(program, STATUS_COMMAND, deps);
  addLazyCommand(program, RESUME_COMMAND, deps);
  addLazyCommand(program, STOP_COMMAND, deps);
  addLazyCommand(program, LOGS_COMMAND, deps);
  addLazyCommand(program, REPORT_COMMAND, deps);
  addLazyCommand(program, DASHBOARD_COMMAND, deps);

  program.addHelpText(
    'after',
    `
Examples:
  ralph-loop bd-a1b                         # run until nothing is ready
  ralph-loop bd-a1b --dry-run               # the order it would run, changing nothing
  ralph-loop bd-a1b --no-validate           # skip the checks forge-pack validate makes before every run
  ralph-loop bd-a1b --wall-clock 28800 --agent claude-sonnet --auto-commit
  ralph-loop bd-a1b --no-gates              # this run, skip the test/lint/build gates
  ralph-loop status bd-a1b                  # a loop: scores, phase, cost; a plain epic: beads, live bead, failures
  ralph-loop status bd-a1b --json           # the same as one JSON document
  ralph-loop logs bd-a1b --follow           # watch the live run: its events and the live bead's transcript
  ralph-loop report bd-a1b -o night.html    # the morning report: one HTML file with charts, no network
  ralph-loop dashboard                      # a read-only local page of every epic and loop, live
  ralph-loop resume bd-a1b                  # after answering the loop's needs-human.md
  ralph-loop stop bd-a1b                    # end after the current bead
  ralph-loop logs bd-a1b bd-a1b.3           # one bead's transcript

Epics, loops and pipelines are made with forge-pack (forge-pack beads create, forge-pack loop,
forge-pack pipeline <file>): each prints the epic id ralph-loop then runs.

Routing: a bead's role:<role> label picks the executor (role:judge runs read-only).
Which agent runs a bead, first match wins (--dry-run shows each choice and where it came from):
  1. --agents <role>=<spec>   this command line, for beads of that role
  2. --agent <spec>           this command line, for every agent bead
  3. the bead's agent:<name> label (forge-pack loop stamps them from the loop's config.json agents)
  4. .forge/config.json agents.<role>, then agents.default
  5. the built-in default: claude
A label only names an agent (built-in, or one of .forge/config.json "agent_commands"), never a command.
--timeout, --max-attempts, --auto-commit/--no-auto-commit and --gates/--no-gates beat .forge/config.json "runner".
Gates: after a code-writing bead's agent succeeds, the .forge/config.json "gates" (argv, no shell) run in its
tree; one failing fails the attempt, its output goes on the bead and into the next attempt's prompt, and
the bead closes (and commits) only when all pass. A bead's gates:<name> labels pick some; gates:none, none.
Hooks: .forge/config.json "hooks" {on_end, on_needs_human, on_failure: argv} run when a run ends, with
FORGE_EPIC, FORGE_REASON, FORGE_EXIT_CODE and FORGE_MESSAGE set; a failing hook is only a warning.

Before claiming anything, a run checks the epic as forge-pack validate does and refuses its errors
(exit 4: a dependency cycle, a dangling dependency, a bead that can never run, an unknown role, agent
or gate…); warnings are printed and the run goes on. --no-validate skips the checks.
Agents, gates and metric commands run in a PID namespace of their own where Linux allows it
(util-linux unshare), so nothing they start outlives them; FORGE_CONTAINMENT=off runs them without,
=required refuses to start where it is not available (forge-pack doctor says which you have).
Exit codes: 0 done/terminal/cap/stopped, 2 usage, 3 environment, 4 config, 5 a bead failed
(labelled ralph:failed, left open), 6 waiting for a human, 7 stalled (open beads, none ready),
8 another runner holds the epic, 9 agent authentication failed, 130 interrupted.
Files: .forge/epics/<epic>/ (or the loop's workspace): ralph-loop.lock, stop, runs/<run>.jsonl
(events), logs/<bead>.log (transcripts), report.html (written when a run ends).`,
  );
  // Last, so the script it prints knows every command above.
  // No `help` command: with an action of its own, `ralph-loop help` runs an epic named "help", as ever.
  addCompletionCommand(program, (text) => deps.stdout.write(text));
  return program;
}

/** forge-pack's commands (forge-pack.ts), named here so that a mistaken `ralph-loop pipeline f.json` says where it lives. */
export const FORGE_PACK_COMMANDS: ReadonlySet<string> = new Set([
  'init',
  'doctor',
  'loop',
  'pipeline',
  'stamp',
  'validate',
  'beads',
  'skills',
  'spec',
  'worker',
]);

/**
 * `ralph-loop <epic-id>` takes one argument: more is a command the program does not have, most often
 * mistyped, named with the nearest one, or else words the user meant for something else.
 */
function refuseExtraArguments(program: Command): never {
  const [first = '', ...rest] = program.args;
  if (FORGE_PACK_COMMANDS.has(first)) {
    throw new UsageError(`${first} is a forge-pack command, not ralph-loop's.`, {
      hint: `forge-pack ${program.args.join(' ')}${first === 'pipeline' || first === 'loop' ? '  (it prints the epic id; run it with: ralph-loop <epic-id>)' : ''}`,
    });
  }
  const commands = program.commands.map((command) => command.name());
  const near = closestId(first, commands);
  if (near !== undefined && near !== first) {
    throw new UsageError(`ralph-loop has no command ${first}; did you mean ${near}?`, {
      hint: `ralph-loop ${[near, ...rest].join(' ')}  (ralph-loop --help lists the commands)`,
    });
  }
  throw new UsageError(
    `ralph-loop <epic-id> takes one epic; it was given ${program.args.length} arguments: ${program.args.join(' ')}`,
    {
      hint: 'Quote a value that holds spaces (--agent "my-agent --flag"); ralph-loop --help lists the commands.',
    },
  );
}
