// `ralph-loop resume`: fold the user's answer into a loop waiting for a human, then run it on.
import type { Command } from 'commander';
import { globals, openStoreFor, readUserFile, workingDir, type GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { say } from './output.js';
import type { RunFlags } from './run-flags.js';

interface ResumeFlags extends RunFlags {
  answer?: string;
  answerFile?: string;
  run?: boolean;
  workspace?: string;
}

export function defineResumeCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<epic-id>', "the loop's epic, or a pipeline's parent epic")
    .option('--answer <text>', 'the answer, written under "## Answer" in needs-human.md for you')
    .option('--answer-file <file>', 'read the answer from a file')
    .option('--no-run', 'stamp the resume strategist but do not start the loop')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .configureHelp({ ...command.configureHelp(), showGlobalOptions: true })
    .action(async (epicId: string, _local: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<ResumeFlags & GlobalOptions>();
      const options = globals(cmd);
      const repo = workingDir(deps, options);
      const [{ openLoop }, { resumeLoop }, { UsageError }] = await Promise.all([
        import('../autoresearch/loop-context.js'),
        import('../autoresearch/resume.js'),
        import('../infra/errors.js'),
      ]);
      if (flags.answer !== undefined && flags.answerFile !== undefined) {
        throw new UsageError('Give the answer either with --answer or with --answer-file, not both.');
      }
      const answer =
        flags.answerFile === undefined
          ? flags.answer
          : await readUserFile(deps, options, flags.answerFile, 'the answer file');
      const { readPipeline } = await import('../autoresearch/pipeline-state.js');
      const pipeline = await readPipeline(repo, epicId);
      if (pipeline !== undefined) {
        const { resumePipeline } = await import('../autoresearch/pipeline-resume.js');
        const resumed = await resumePipeline(repo, pipeline, answer);
        if (options.json)
          deps.stdout.write(`${JSON.stringify({ type: 'resumed', epic: epicId, ...resumed })}\n`);
        say(
          deps,
          `Resumed the pipeline ${epicId}: stage "${resumed.stage}" ${resumed.answer === 'again' ? `runs again (cycle ${resumed.cycle})` : resumed.answer === 'accept' ? 'is accepted as it ended' : 'ends the pipeline'}; the question is archived in ${resumed.archived}.`,
        );
        if (flags.run === false || resumed.answer === 'stop') return;
        const { runLoopCommand } = await import('./run-command.js');
        await runLoopCommand(deps, options, epicId, runFlagsOf(flags));
        return;
      }
      const actor = options.actor ?? 'ralph-loop';
      const { store } = (await openStoreFor(deps, { ...options, actor }, epicId)).opened;
      const ctx = await openLoop(repo, epicId, {
        storeKind: store.kind,
        workspace: flags.workspace,
        files: deps.loopFiles,
      });
      const result = await resumeLoop(ctx, store, { answer });
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

A pipeline's parent: the answer is again, accept or stop (see forge-pack pipeline --help):
  ralph-loop resume bd-p1 --answer again

The question and answer are archived as needs-human-resolved-<K>.md and given to a resume strategist,
which stamps the next iteration. The ledger, the scores and the best kept result are left untouched.
Run options (--agent, --timeout, --wall-clock, --worktree, …) apply as for ralph-loop <epic>.`,
  );
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
    'parallel',
  ] as const;
  const out: Record<string, unknown> = {};
  for (const key of keys) if (flags[key] !== undefined) out[key] = flags[key];
  return out;
}
