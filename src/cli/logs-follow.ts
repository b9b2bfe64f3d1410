// `ralph-loop logs <epic> --follow`: the live run's events and the live bead's transcript, as they are
// written, until the run finishes. Files are polled by size (fs.watch misses appends on some systems).
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import { createFileTail, parseEventLines, type FileTail } from '../infra/file-tail.js';
import { isLockHolderLive, readLockFile, type LockRecord } from '../infra/lock-file.js';
import { isProcessAlive } from '../infra/pid.js';
import type { RunDir } from '../infra/run-dir.js';
import type { LoopEvent } from '../loop/types.js';
import type { GlobalOptions } from './common.js';
import { workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { runDirFor } from './epic-dirs.js';
import { formatEvent } from './logs-command.js';
import { say } from './output.js';
import { createProgressRenderer } from './progress.js';
import { terminalText } from '../infra/terminal-text.js';

export interface FollowOptions {
  /** Follow this bead's transcript only; by default the live bead's, switching as beads start. */
  bead?: string | undefined;
  /** How often the files are polled. */
  intervalMs?: number | undefined;
  /** After the runner is seen gone, how long to wait for its last events to land. */
  graceMs?: number | undefined;
}

/** Events after which a bead's transcript has no more to say for now: print what it wrote first. */
const TRANSCRIPT_BOUNDARY = new Set([
  'bead_started',
  'attempt_finished',
  'bead_closed',
  'bead_failed',
  'run_finished',
]);

/** Events that end a bead's attempt: its next lines belong to an attempt not announced yet. */
const ATTEMPT_END = new Set(['attempt_finished', 'bead_closed', 'bead_failed']);

export async function followLogs(
  deps: CliDeps,
  options: GlobalOptions,
  epicId: string,
  follow: FollowOptions = {},
): Promise<void> {
  const runDir = await runDirFor(workingDir(deps, options), epicId);
  const isAlive = deps.isProcessAlive ?? isProcessAlive;
  const liveness = async (lock: LockRecord | undefined, runId: string): Promise<boolean> =>
    lock !== undefined &&
    lock.run_id === runId &&
    (await isLockHolderLive(runDir.lockPath, lock, deps.host, isAlive));
  // Sizes first, then the lock: a bead that starts after this point has all its new lines past them.
  const sizes = await transcriptSizes(runDir);
  const lock = await readLockFile(runDir.lockPath);
  const out = createEventPrinter(deps, options.json === true);

  if (lock === undefined || typeof lock.run_id !== 'string' || !(await liveness(lock, lock.run_id))) {
    await showLastRun(deps, runDir, epicId, out, follow.bead);
    return;
  }

  const runId = lock.run_id;
  say(
    deps,
    `Following run ${runId} of ${epicId} (pid ${lock.pid}${lock.host === deps.host ? '' : ` on ${lock.host}`}); it ends with the run, or Ctrl-C.`,
  );
  const events = createFileTail(runDir.eventLogPath(runId));
  const transcripts = new Map<string, FileTail>();
  let current: { bead: string; tail: FileTail } | undefined;
  const liveAtStart = follow.bead ?? lock.bead;
  // The beads whose attempt has been announced (its bead_started printed, its end not yet). The lock can
  // name a bead before this follower has read its bead_started, and the agent's first lines can be on
  // disk by then: they wait for the ▶ line, so a transcript never runs ahead of its own bead. An
  // attempt's lines are all on disk before its attempt_finished is written (the runner closes the
  // transcript first), so the drain before that event still prints every one of them.
  const announced = new Set<string>();

  const drainTranscript = async (final = false): Promise<void> => {
    if (current === undefined) return;
    if (!final && !announced.has(current.bead)) return;
    for (const line of await current.tail.readLines()) out.transcript(current.bead, line);
    if (final && current.tail.rest() !== '') out.transcript(current.bead, current.tail.rest());
  };
  const switchTo = async (bead: string | undefined): Promise<void> => {
    if (bead === undefined || bead === current?.bead) return;
    await drainTranscript();
    let tail = transcripts.get(bead);
    if (tail === undefined) {
      const path = runDir.transcriptPath(bead);
      // The bead live when following began: from the start of its current attempt. Others: what is new.
      const offset = bead === liveAtStart ? await lastAttemptOffset(path) : (sizes.get(path) ?? 0);
      tail = createFileTail(path, offset);
      transcripts.set(bead, tail);
    }
    current = { bead, tail };
  };

  let interrupted = false;
  let wake: (() => void) | undefined;
  const unsubscribe = deps.onInterrupt(() => {
    interrupted = true;
    wake?.();
  });
  const intervalMs = follow.intervalMs ?? 200;
  let goneSince: number | undefined;
  try {
    for (;;) {
      let finished = false;
      for (const event of parseEventLines(await events.readLines()).events) {
        const type = String(event.type);
        if (TRANSCRIPT_BOUNDARY.has(type)) await drainTranscript(type === 'run_finished');
        out.event(event);
        if (typeof event.bead === 'string') {
          if (type === 'bead_started') announced.add(event.bead);
          else if (ATTEMPT_END.has(type)) announced.delete(event.bead);
        }
        if (type === 'bead_started' && follow.bead === undefined && typeof event.bead === 'string')
          await switchTo(event.bead);
        if (type === 'run_finished') finished = true;
      }
      if (finished) return;
      // The events switch transcripts in order; the lock covers a bead whose bead_started is not yet written.
      const now = await readLockFile(runDir.lockPath);
      await switchTo(follow.bead ?? (now?.run_id === runId ? now.bead : undefined));
      await drainTranscript();
      if (interrupted) return;
      if (await liveness(now, runId)) goneSince = undefined;
      else {
        goneSince ??= deps.clock.now();
        if (deps.clock.now() - goneSince >= (follow.graceMs ?? 1000)) {
          await drainTranscript(true);
          say(deps, `The runner of run ${runId} is gone without finishing it (killed or crashed).`);
          return;
        }
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, intervalMs);
      });
    }
  } finally {
    unsubscribe();
  }
}

interface EventPrinter {
  event(event: Record<string, unknown>): void;
  transcript(bead: string, line: string): void;
}

/** Text: the runner's own progress lines and the transcript on stdout. JSON: NDJSON events on stdout, transcript on stderr. */
function createEventPrinter(deps: CliDeps, json: boolean): EventPrinter {
  if (json) {
    return {
      event: (event) => deps.stdout.write(`${JSON.stringify(event)}\n`),
      transcript: (bead, line) => deps.stderr.write(`  ${bead} | ${line}\n`),
    };
  }
  const renderer = createProgressRenderer({
    sink: deps.stdout,
    tty: false,
    color: false,
    now: () => deps.clock.now(),
  });
  return {
    event(event) {
      try {
        renderer.render(event as unknown as LoopEvent);
      } catch {
        // A line from another version of Forge, missing a field the renderer reads.
        deps.stdout.write(`${terminalText(formatEvent(event))}\n`);
      }
    },
    transcript: (bead, line) => deps.stdout.write(`  ${bead} | ${terminalText(line)}\n`),
  };
}

async function showLastRun(
  deps: CliDeps,
  runDir: RunDir,
  epicId: string,
  out: EventPrinter,
  bead: string | undefined,
): Promise<void> {
  const runs = (await readdir(runDir.runsDir).catch(() => [] as string[]))
    .filter((name) => name.endsWith('.jsonl'))
    .sort();
  const last = runs[runs.length - 1];
  if (last !== undefined) {
    const text = (await readFileIfExists(join(runDir.runsDir, last))) ?? '';
    for (const event of parseEventLines(text.split('\n')).events) out.event(event);
  }
  if (bead !== undefined) {
    const transcript = await readFileIfExists(runDir.transcriptPath(bead));
    for (const line of (transcript ?? '').split('\n').filter((l) => l !== '')) out.transcript(bead, line);
  }
  say(
    deps,
    last === undefined
      ? `No run of ${epicId} is live, and none is recorded yet (start one with: ralph-loop ${epicId}).`
      : `No run of ${epicId} is live; above are the events of its last run, ${last.replace(/\.jsonl$/, '')}.`,
  );
}

async function transcriptSizes(runDir: RunDir): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  const names = await readdir(runDir.logsDir).catch(() => [] as string[]);
  await Promise.all(
    names.map(async (name) => {
      const path = join(runDir.logsDir, name);
      const info = await stat(path).catch(() => undefined);
      if (info !== undefined) sizes.set(path, info.size);
    }),
  );
  return sizes;
}

/** Where the last attempt in a transcript begins: its `{"forge":"start",…}` line, else the file's start. */
async function lastAttemptOffset(path: string): Promise<number> {
  const text = await readFileIfExists(path);
  if (text === undefined) return 0;
  const marker = '{"forge":"start"';
  if (text.startsWith(marker) && !text.includes(`\n${marker}`)) return 0;
  const at = text.lastIndexOf(`\n${marker}`);
  return at < 0 ? 0 : Buffer.byteLength(text.slice(0, at + 1), 'utf8');
}
