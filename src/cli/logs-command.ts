// `ralph-loop logs`: the events of an epic's runs, or one bead's transcript; --follow watches a live run.
import type { Command } from 'commander';
import { readdir } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { readEventLog } from '../infra/event-log.js';
import type { GlobalOptions } from './common.js';
import { globals, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { runDirFor } from './epic-dirs.js';
import { say } from './output.js';
import { closestId } from './run-target.js';
import { terminalText } from '../infra/terminal-text.js';

export function defineLogsCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<epic-id>', 'the epic')
    .argument('[bead-id]', "show this bead's transcript")
    .option('--all', 'events of every run, not only the latest')
    .option(
      '-f, --follow [bead-id]',
      "print the live run's events and the live bead's transcript (or this bead's) as they are written, until the run ends",
    )
    .action(
      async (
        epicId: string,
        beadId: string | undefined,
        flags: { all?: boolean; follow?: boolean | string },
        cmd: Command,
      ) => {
        if (flags.follow !== undefined) {
          const bead = typeof flags.follow === 'string' ? flags.follow : beadId;
          const { followLogs } = await import('./logs-follow.js');
          await followLogs(deps, globals(cmd), epicId, { bead });
          return;
        }
        await showLogs(deps, globals(cmd), epicId, beadId, flags.all === true);
      },
    );
}

export async function showLogs(
  deps: CliDeps,
  options: GlobalOptions,
  epicId: string,
  beadId: string | undefined,
  all: boolean,
): Promise<void> {
  const runDir = await runDirFor(workingDir(deps, options), epicId);
  if (beadId !== undefined) {
    const transcript = await readFileIfExists(runDir.transcriptPath(beadId));
    if (transcript === undefined) {
      throw new AppError(`No transcript for ${beadId} in ${runDir.logsDir}.`, {
        exitCode: ExitCode.usage,
        hint: await noTranscriptHint(runDir.logsDir, epicId, beadId),
      });
    }
    // An agent's own words: shown, never obeyed by the terminal (terminal-text.ts).
    deps.stdout.write(terminalText(transcript));
    return;
  }
  const runs = (await readdir(runDir.runsDir).catch(() => [] as string[]))
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  if (runs.length === 0) {
    throw new AppError(`No runs recorded for ${epicId} in ${runDir.runsDir}.`, {
      exitCode: ExitCode.failure,
      hint: await noRunsHint(runDir.root, epicId),
    });
  }
  const chosen = all ? runs : runs.slice(-1);
  const events: Record<string, unknown>[] = [];
  let skipped = 0;
  for (const file of chosen) {
    const read = await readEventLog(join(runDir.runsDir, file));
    events.push(...read.events);
    skipped += read.skipped;
  }
  if (skipped > 0) say(deps, `warning: skipped ${skipped} unreadable line(s) in the event log.`);
  if (options.json) {
    for (const event of events) deps.stdout.write(`${JSON.stringify(event)}\n`);
    return;
  }
  if (!all)
    say(
      deps,
      `Run ${chosen[0]?.replace(/\.jsonl$/, '')} (${runs.length} run(s) recorded; --all for every one)`,
    );
  for (const event of events) deps.stdout.write(`${terminalText(formatEvent(event))}\n`);
}

/** One event as a plain line: its time, type, bead and fields (`ralph-loop logs`). */
export function formatEvent(event: Record<string, unknown>): string {
  const ts = typeof event.ts === 'string' ? event.ts.replace('T', ' ').replace(/\.\d+Z$/, 'Z') : '';
  const type = String(event.type);
  const bead = typeof event.bead === 'string' ? ` ${event.bead}` : '';
  const details: string[] = [];
  for (const key of [
    'role',
    'agent',
    'model',
    'attempt',
    'outcome',
    'gate',
    'ok',
    'exit',
    'duration_ms',
    'cost_usd',
    'message',
    'argv',
  ]) {
    if (event[key] !== undefined)
      details.push(`${key}=${typeof event[key] === 'string' ? event[key] : JSON.stringify(event[key])}`);
  }
  if (type === 'run_finished' && typeof event.summary === 'object' && event.summary !== null) {
    const s = event.summary as Record<string, unknown>;
    details.push(`reason=${String(s.reason)}`, `message=${String(s.message)}`);
  }
  return `${ts} ${type}${bead}${details.length > 0 ? `  ${details.join(' ')}` : ''}`;
}

/** A bead with no transcript: the nearest one that has, or those that have, or that none has run yet. */
async function noTranscriptHint(logsDir: string, epicId: string, beadId: string): Promise<string> {
  const ran = (await readdir(logsDir).catch(() => [] as string[]))
    .filter((name) => name.endsWith('.log'))
    .map((name) => name.slice(0, -'.log'.length))
    .sort();
  if (ran.length === 0) return `No bead of ${epicId} has run yet. See: ralph-loop logs ${epicId}`;
  // One of the epic's own ids (`bd-a1.4`) may be a bead that has not run: no sibling is suggested for it.
  const near = beadId.startsWith(`${epicId}.`) ? undefined : closestId(beadId, ran);
  if (near !== undefined) return `Did you mean ${near}? See: ralph-loop logs ${epicId} ${near}`;
  const listed = ran.slice(0, 10).join(', ');
  return `Beads with transcripts: ${listed}${ran.length > 10 ? ', …' : ''}. A bead that has not run yet has none.`;
}

/**
 * What to tell a user whose epic has no runs: a mistyped id gets the nearest epic that has some, or the
 * epics that do; only an epic with none anywhere is one to start.
 */
async function noRunsHint(epicRoot: string, epicId: string): Promise<string> {
  const epicsDir = dirname(epicRoot);
  // A loop's runs live in its workspace: only a plain epic's folder has others beside it.
  if (!epicsDir.endsWith(join('.forge', 'epics'))) return `Start one with: ralph-loop ${epicId}`;
  const withRuns: string[] = [];
  for (const name of await readdir(epicsDir).catch(() => [] as string[])) {
    if (name === basename(epicRoot)) continue;
    const runs = await readdir(join(epicsDir, name, 'runs')).catch(() => [] as string[]);
    if (runs.some((file) => file.endsWith('.jsonl'))) withRuns.push(name);
  }
  const near = closestId(epicId, withRuns);
  if (near !== undefined) return `Did you mean ${near}? See: ralph-loop logs ${near}`;
  if (withRuns.length > 0) {
    const listed = withRuns.sort().slice(0, 10);
    return `Epics with runs here: ${listed.join(', ')}${withRuns.length > listed.length ? ', …' : ''}. Or start this one: ralph-loop ${epicId}`;
  }
  return `Start one with: ralph-loop ${epicId}`;
}
