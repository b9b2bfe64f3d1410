// `ralph-loop report <epic>`: the morning report, one self-contained HTML file for a loop or a plain
// epic; and the same report written by the runner when a run ends.
import type { Command } from 'commander';
import type { BeadStore } from '../beads/types.js';
import { writeFileAtomic } from '../infra/atomic-file.js';
import { isProcessAlive } from '../infra/pid.js';
import type { RunDir } from '../infra/run-dir.js';
import { globals, openStoreFor, userPath, workingDir, type GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { findLoopWorkspace, runDirFor } from './epic-dirs.js';
import { printJson, say } from './output.js';
import type { ReportPage } from './report-html.js';
import { createLiveFollower, type LiveFollower } from './report-live.js';

/** Where the runner leaves the report: beside the epic's run files (the loop's workspace, or .forge/epics/<epic>). */
export const REPORT_FILE = 'report.html';

export interface ReportSources {
  repo: string;
  epicId: string;
  runDir: RunDir;
  /** Opens the bead store, for a plain epic; a loop's report needs none. */
  store: () => Promise<Pick<BeadStore, 'graph' | 'ready'>>;
  /** Reused by the dashboard so each read follows the events file from where the last one stopped. */
  live?: LiveFollower;
}

/** The data of a report page: the loop's or the epic's report, and the live bead. */
export async function readReportPage(deps: CliDeps, sources: ReportSources): Promise<ReportPage> {
  const ports = {
    now: () => deps.clock.now(),
    host: deps.host,
    isProcessAlive: deps.isProcessAlive ?? isProcessAlive,
    files: deps.loopFiles,
  };
  const live = (sources.live ?? createLiveFollower(sources.runDir, ports)).read();
  if ((await findLoopWorkspace(sources.repo, sources.epicId)) !== undefined) {
    const { readLoopReport } = await import('../autoresearch/report-read.js');
    return { report: await readLoopReport(sources.repo, sources.epicId, ports), live: await live };
  }
  const { readEpicReport } = await import('./report-epic.js');
  const store = await sources.store();
  return {
    report: await readEpicReport(sources.epicId, { ...ports, store, runDir: sources.runDir }),
    live: await live,
  };
}

/** Writes the report atomically and returns its path. */
export async function writeReport(deps: CliDeps, sources: ReportSources, path: string): Promise<string> {
  const { renderReportHtml } = await import('./report-html.js');
  const page = await readReportPage(deps, sources);
  await writeFileAtomic(path, await renderReportHtml(page));
  return path;
}

/** After a run: the report beside the epic's files, its path said; a failure is a warning, never the run's. */
export async function writeRunReport(
  deps: CliDeps,
  repo: string,
  epicId: string,
  store: Pick<BeadStore, 'graph' | 'ready'>,
): Promise<void> {
  try {
    const runDir = await runDirFor(repo, epicId);
    const path = await writeReport(
      deps,
      { repo, epicId, runDir, store: () => Promise.resolve(store) },
      `${runDir.root}/${REPORT_FILE}`,
    );
    say(deps, `Report: ${path}`);
  } catch (error) {
    say(
      deps,
      `warning: could not write the run's report: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

interface ReportFlags {
  output?: string;
}

export function defineReportCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<epic-id>', 'the epic (an autoresearch loop or any other)')
    .option(
      '-o, --output <file>',
      `where to write the page (default: ${REPORT_FILE} beside the epic's run files)`,
    )
    .action(async (epicId: string, flags: ReportFlags, cmd: Command) => {
      const options = globals(cmd);
      const sources = await sourcesFor(deps, options, epicId);
      if (options.json && flags.output === undefined) {
        printJson(deps, await readReportPage(deps, sources));
        return;
      }
      const path =
        flags.output === undefined
          ? `${sources.runDir.root}/${REPORT_FILE}`
          : userPath(deps, options, flags.output);
      await writeReport(deps, sources, path);
      if (options.json) printJson(deps, { epic: epicId, path });
      else say(deps, `Wrote ${path}; open it in a browser (no network needed).`);
    });
  command.addHelpText(
    'after',
    `
Examples:
  ralph-loop report bd-a1b                      # .autoresearch/report.html (or .forge/epics/bd-a1b/report.html)
  ralph-loop report bd-a1b -o ~/overnight.html  # anywhere; the file stands alone: mail it, open it on a phone
  ralph-loop report bd-a1b --json | jq .report.totals

For a loop the page shows the score of every iteration, each marked by its decision (kept, reverted,
crash, guard failed, tamper), the best-kept line and the target; time and cost per iteration by
role; the keep rate and the cost per kept improvement; every hypothesis with its findings, commit and
reason; why the loop ended, and the retrospective. For a plain epic: every bead with its state, what
it waits for, attempts, time, cost, agent, gate results and commit.

The page is one file with its styles, data and chart library (uPlot) inside: no server, no network.
Every run writes it too, beside the epic's run files, and prints its path. To watch a loop live,
use ralph-loop dashboard.`,
  );
}

async function sourcesFor(deps: CliDeps, options: GlobalOptions, epicId: string): Promise<ReportSources> {
  const repo = workingDir(deps, options);
  return {
    repo,
    epicId,
    runDir: await runDirFor(repo, epicId),
    store: async () => (await openStoreFor(deps, options, epicId)).opened.store,
  };
}
