// `ralph-loop stop`: ask the live runner of an epic to stop after its current bead.
import type { Command } from 'commander';
import { UsageError } from '../infra/errors.js';
import { askHostClaim } from '../infra/host-claim.js';
import { claimedHolder, isLockHolderLive, readLockFile } from '../infra/lock-file.js';
import { namesMark, RUN_MARK_VAR } from '../infra/run-marks.js';
import { globals, openStoreFor, workingDir, type GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { runDirFor } from './epic-dirs.js';
import { printJson, say } from './output.js';

export function defineStopCommand(command: Command, deps: CliDeps): void {
  command.argument('<epic-id>', 'the epic').action(async (epicId: string, _flags: unknown, cmd: Command) => {
    const options = globals(cmd);
    const runDir = await runDirFor(workingDir(deps, options), epicId);
    // A lock file deleted mid-run: the runner still holds its claim on this host, and answers it.
    const holder =
      (await readLockFile(runDir.lockPath)) ?? (await claimedHolder(runDir.lockPath, askHostClaim));
    // A request is for the live runner only: left for no one, it would halt the next run unasked.
    const running = holder !== undefined && (await isLockHolderLive(runDir.lockPath, holder, deps.host));
    if (running && insideRun(deps.env, holder.run_id)) {
      throw new UsageError(
        `ralph-loop stop ${epicId} runs inside the run it would stop (run ${holder.run_id}): an agent, gate or metric of that run cannot stop it.`,
        {
          hint: 'An agent that finds the loop should end says so in its answer (a strategist asks in .autoresearch/needs-human.md); whoever started the run stops it, from outside.',
        },
      );
    }
    // No runner: a mistyped epic would say "nothing to stop" while the real run goes on. One the store
    // does not hold is named with the closest it does (exit 2); a store that cannot be read says nothing.
    if (!running) await refuseUnknownEpic(deps, options, epicId);
    if (running) await runDir.requestStop(`pid ${deps.pid}`, holder.run_id);
    if (options.json)
      printJson(deps, { epic: epicId, stop_requested: running, running, holder: holder ?? null });
    else if (running)
      say(deps, `Asked the loop of ${epicId} (pid ${holder.pid}) to stop after its current bead.`);
    else say(deps, `No runner is live for ${epicId}; nothing to stop.`);
  });
}

async function refuseUnknownEpic(deps: CliDeps, options: GlobalOptions, epicId: string): Promise<void> {
  const { showRunTarget } = await import('./run-target.js');
  try {
    const { opened, cwd } = await openStoreFor(deps, options);
    await showRunTarget(opened.store, epicId, 'epic', { dir: cwd, inGitRepo: true });
  } catch (error) {
    if (error instanceof UsageError) throw error;
  }
}

/**
 * Whether this process is part of run `runId`: every process a run starts under its sweep (agents,
 * gates, metric commands) carries the run's mark in its environment. Skills teach agents the stop
 * command; one that used it on its own run would end the night's loop after its bead. (A process that
 * rewrites its environment, or the stop file, gets past this: it keeps honest agents out, no more.)
 */
function insideRun(env: NodeJS.ProcessEnv, runId: string): boolean {
  return namesMark(env[RUN_MARK_VAR], runId);
}
