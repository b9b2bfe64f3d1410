// `ralph-loop status`: where an epic stands, a loop's or a plain epic's.
//
// It is run over and over while a loop works, so at load time this module needs only commander, the
// light common helpers and types; everything heavier (the store, git, execa, zod schemas) is imported
// inside the action that needs it.
import { Command } from 'commander';
import type { LoopStatus } from '../autoresearch/status.js';
import { isProcessAlive } from '../infra/pid.js';
import { STATUS_COMMAND } from './command-specs.js';
import { globals, openStoreFor, workingDir, type GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { printJson } from './output.js';

interface StatusFlags {
  beads?: boolean;
  ascii?: boolean;
  workspace?: string;
}

/** The command on its own, outside a program's lazy registration. */
export function createStatusCommand(deps: CliDeps): Command {
  const command = new Command(STATUS_COMMAND.name).description(STATUS_COMMAND.description);
  defineStatusCommand(command, deps);
  return command;
}

export function defineStatusCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<epic-id>', 'the epic (an autoresearch loop or any other)')
    .option('--beads', "also count the epic's beads by status (asks the bead store)")
    .option('--ascii', 'draw the score trend with ASCII characters')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .action(async (epicId: string, flags: StatusFlags, cmd: Command) => {
      const options = globals(cmd);
      const repo = workingDir(deps, options);
      if (flags.workspace === undefined && (await showPipelineStatus(deps, options, repo, epicId))) return;
      if (flags.workspace === undefined) {
        const { findLoopWorkspace } = await import('../autoresearch/workspace.js');
        if ((await findLoopWorkspace(repo, epicId)) === undefined) {
          await showEpicStatus(deps, options, epicId);
          return;
        }
      }
      const [{ loopStatus }, { renderStatusText }] = await Promise.all([
        import('../autoresearch/status.js'),
        import('./loop-status-text.js'),
      ]);
      const status: LoopStatus = await loopStatus(
        repo,
        epicId,
        { now: () => deps.clock.now(), host: deps.host, isProcessAlive, files: deps.loopFiles },
        { workspace: flags.workspace },
      );
      if (flags.beads === true) {
        const { store } = (await openStoreFor(deps, options, epicId)).opened;
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

A pipeline's parent shows every stage: its bead, its loop or epic, its cycle, its phase (passed,
accepted, stopped, not started, or the loop's own phase) and its score line or beads closed.

For a loop, phase: running (the live bead and how long it has run, from the loop's lock), waiting for a human
(needs-human.md), terminated (terminal-signal.json, with its reason), or idle. Scores read
"baseline → best → last"; the trend shows the recent iterations, a dot where one crashed.`,
  );
}

/** A pipeline's parent: every stage with its phase and score line; false when the epic is no pipeline. */
async function showPipelineStatus(
  deps: CliDeps,
  options: GlobalOptions,
  repo: string,
  epicId: string,
): Promise<boolean> {
  const [{ pathExists }, { pipelinePath }] = await Promise.all([
    import('../infra/atomic-file.js'),
    import('../autoresearch/pipeline-paths.js'),
  ]);
  // Asked on every status: only a pipeline's parent pays for reading (and validating) its record.
  if (!(await pathExists(pipelinePath(repo, epicId)))) return false;
  const { readPipeline } = await import('../autoresearch/pipeline-state.js');
  const record = await readPipeline(repo, epicId);
  if (record === undefined) return false;
  const { pipelineStatus, renderPipelineStatusText } = await import('../autoresearch/pipeline-status.js');
  const status = await pipelineStatus(
    repo,
    record,
    (await openStoreFor(deps, options, epicId)).opened.store,
    {
      now: () => deps.clock.now(),
      host: deps.host,
      isProcessAlive: deps.isProcessAlive ?? isProcessAlive,
      files: deps.loopFiles,
    },
  );
  if (options.json) printJson(deps, status);
  else deps.stdout.write(renderPipelineStatusText(status));
  return true;
}

/** A plain epic (no autoresearch loop): its beads, the live bead, the last run, what failed. */
async function showEpicStatus(deps: CliDeps, options: GlobalOptions, epicId: string): Promise<void> {
  const [{ epicStatus }, { renderEpicStatusText }, { runDirFor }] = await Promise.all([
    import('./epic-status.js'),
    import('./epic-status-text.js'),
    import('./epic-dirs.js'),
  ]);
  const repo = workingDir(deps, options);
  const status = await epicStatus(epicId, {
    store: (await openStoreFor(deps, options, epicId)).opened.store,
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
