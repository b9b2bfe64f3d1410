// What `ralph-loop status <epic>` does once its arguments are known: a pipeline's parent, a loop, or a
// plain epic. No commander here: both the full program (status-command.ts) and the short path the
// executable takes for plain arguments (status-shortcut.ts) run it. Everything heavier (the store, the
// autoresearch readers) loads inside the branch that needs it.
import type { LoopStatus } from '../autoresearch/status.js';
import { isProcessAlive } from '../infra/pid.js';
import { terminalText } from '../infra/terminal-text.js';
import type { CliDeps } from './deps.js';
import { workingDir, type GlobalOptions } from './global-options.js';
import { readStoreSettings, openStoreWith } from './store-settings.js';

export interface StatusFlags {
  beads?: boolean;
  ascii?: boolean;
  workspace?: string;
}

/** What status uses of the CLI's dependencies (the short path builds just these). */
export type StatusDeps = Pick<
  CliDeps,
  'cwd' | 'env' | 'stdout' | 'clock' | 'host' | 'isProcessAlive' | 'loopFiles' | 'storeFactories'
>;

export async function runStatus(
  deps: StatusDeps,
  options: GlobalOptions,
  epicId: string,
  flags: StatusFlags,
): Promise<void> {
  const repo = workingDir(deps, options);
  if (flags.workspace === undefined && (await showPipelineStatus(deps, options, repo, epicId))) return;
  if (flags.workspace === undefined) {
    const { findLoopWorkspace } = await import('../autoresearch/workspace.js');
    if ((await findLoopWorkspace(repo, epicId)) === undefined) {
      await showEpicStatus(deps, options, repo, epicId);
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
    const store = await openStatusStore(deps, options, repo, epicId);
    const counts: Record<string, number> = {};
    for (const bead of await store.children(epicId)) counts[bead.status] = (counts[bead.status] ?? 0) + 1;
    status.beads = counts;
  }
  if (options.json) printJson(deps, status);
  else
    deps.stdout.write(
      terminalText(renderStatusText(status, { unicode: flags.ascii !== true && prefersUnicode(deps.env) })),
    );
}

/** The epic's store, chosen from the config's store settings only (status validates nothing else). */
async function openStatusStore(deps: StatusDeps, options: GlobalOptions, repo: string, epicId: string) {
  const settings = await readStoreSettings(repo);
  return (await openStoreWith(deps, options, repo, settings, epicId)).store;
}

/** A pipeline's parent: every stage with its phase and score line; false when the epic is no pipeline. */
async function showPipelineStatus(
  deps: StatusDeps,
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
  const { epicRunDir } = await import('./epic-dirs.js');
  const status = await pipelineStatus(
    repo,
    record,
    await openStatusStore(deps, options, repo, epicId),
    {
      now: () => deps.clock.now(),
      host: deps.host,
      isProcessAlive: deps.isProcessAlive ?? isProcessAlive,
      files: deps.loopFiles,
    },
    // A pipeline's parent runs as a plain epic: its lock is in its own run folder.
    epicRunDir(repo, epicId, undefined).lockPath,
  );
  if (options.json) printJson(deps, status);
  else deps.stdout.write(terminalText(renderPipelineStatusText(status)));
  return true;
}

/** A plain epic (no autoresearch loop): its beads, the live bead, the last run, what failed. */
async function showEpicStatus(
  deps: StatusDeps,
  options: GlobalOptions,
  repo: string,
  epicId: string,
): Promise<void> {
  const [{ epicStatus }, { renderEpicStatusText }, { epicRunDir }] = await Promise.all([
    import('./epic-status.js'),
    import('./epic-status-text.js'),
    import('./epic-dirs.js'),
  ]);
  const status = await epicStatus(epicId, {
    store: await openStatusStore(deps, options, repo, epicId),
    // runStatus found no loop workspace for the epic, so its runs are in .forge/epics/<epic>.
    runDir: epicRunDir(repo, epicId, undefined),
    now: () => deps.clock.now(),
    // File times are the system's, whatever clock the store is given.
    wallNow: () => Date.now(),
    keepLogDigests: true,
    host: deps.host,
    isProcessAlive: deps.isProcessAlive ?? isProcessAlive,
  });
  if (options.json) printJson(deps, status);
  else deps.stdout.write(terminalText(renderEpicStatusText(status)));
}

/** As output.ts's printJson, which this light module does not import (it loads commander). */
function printJson(deps: Pick<StatusDeps, 'stdout'>, value: unknown): void {
  deps.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

/** Unicode unless the locale is set and says it is not UTF-8 (LANG=C, a Latin-1 locale), or TERM=dumb. */
export function prefersUnicode(env: NodeJS.ProcessEnv): boolean {
  if (env.TERM === 'dumb') return false;
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG;
  return locale === undefined || locale === '' || /utf-?8/i.test(locale);
}
