// `ralph-loop logs --follow` in process, on run files written by the test between its polls: the order
// of what it prints when the runner's lock is ahead of the event log it reads.
import { appendFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect, it, onTestFinished } from 'vitest';
import { createDeps } from '../../src/cli/deps.js';
import { runDirFor } from '../../src/cli/epic-dirs.js';
import { followLogs } from '../../src/cli/logs-follow.js';
import { createFakeClock } from '../support/fake-clock.js';

const EPIC = 'bd-f';
const RUN = 'run-1';

const line = (value: Record<string, unknown>) => `${JSON.stringify(value)}\n`;

it('prints a bead’s transcript after its ▶, though the lock named the bead and the agent wrote before the event log had it', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'forge-follow-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  await mkdir(join(dir, '.forge'));
  const runDir = await runDirFor(dir, EPIC);
  const events = runDir.eventLogPath(RUN);
  const transcript = runDir.transcriptPath(`${EPIC}.2`);
  for (const path of [events, transcript, runDir.lockPath]) await mkdir(dirname(path), { recursive: true });
  const ts = '2026-11-22T10:00:00.000Z';
  const event = (type: string, bead?: string) => line({ type, ts, epic: EPIC, bead, run_id: RUN });
  // The first bead is done; the runner has moved on to the second: the lock names it and its agent has
  // written, but its bead_started is not in the event log yet.
  await writeFile(
    events,
    [
      event('run_started'),
      event('bead_started', `${EPIC}.1`),
      event('attempt_finished', `${EPIC}.1`),
      event('bead_closed', `${EPIC}.1`),
    ].join(''),
  );
  await writeFile(transcript, line({ forge: 'start', bead: `${EPIC}.2` }) + 'quick work\n');
  await writeFile(
    runDir.lockPath,
    JSON.stringify({
      pid: process.pid,
      host: hostname(),
      started_at: ts,
      epic: EPIC,
      run_id: RUN,
      bead: `${EPIC}.2`,
    }),
  );
  let printed = '';
  const sink = { write: (text: string) => ((printed += text), true) };
  let checks = 0;
  const deps = createDeps({
    cwd: dir,
    stdout: sink,
    stderr: sink,
    clock: createFakeClock(),
    host: hostname(),
    onInterrupt: () => () => undefined,
    // Each poll asks whether the runner lives: after the first, the event log catches up and the run ends.
    isProcessAlive: () => {
      checks += 1;
      if (checks === 2) {
        appendFileSync(
          events,
          [
            event('bead_started', `${EPIC}.2`),
            event('attempt_finished', `${EPIC}.2`),
            event('bead_closed', `${EPIC}.2`),
            event('run_finished'),
          ].join(''),
        );
      }
      return true;
    },
  });

  await followLogs(deps, { json: true }, EPIC, { intervalMs: 20 });

  const started = printed.indexOf(`"type":"bead_started","ts":"${ts}","epic":"${EPIC}","bead":"${EPIC}.2"`);
  const work = printed.indexOf(`${EPIC}.2 | quick work`);
  expect(started, printed).toBeGreaterThan(-1);
  expect(work, printed).toBeGreaterThan(started);
  expect(printed.indexOf('"type":"attempt_finished","ts"', started), printed).toBeGreaterThan(work);
  expect(printed).toContain('"type":"run_finished"');
});
