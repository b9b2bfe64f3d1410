// `ralph-loop logs`: the events of an epic's runs, or one bead's transcript; --follow watches a live run.
import type { Command } from 'commander';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { readEventLog } from '../infra/event-log.js';
import type { GlobalOptions } from './common.js';
import { globals, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { runDirFor } from './epic-dirs.js';
import { say } from './output.js';

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
        exitCode: ExitCode.failure,
        hint: `Has it run yet? See: ralph-loop logs ${epicId}`,
      });
    }
    deps.stdout.write(transcript);
    return;
  }
  const runs = (await readdir(runDir.runsDir).catch(() => [] as string[]))
    .filter((f) => f.endsWith('.jsonl'))
    .sort();
  if (runs.length === 0) {
    throw new AppError(`No runs recorded for ${epicId} in ${runDir.runsDir}.`, {
      exitCode: ExitCode.failure,
      hint: `Start one with: ralph-loop ${epicId}`,
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
  for (const event of events) deps.stdout.write(`${formatEvent(event)}\n`);
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
