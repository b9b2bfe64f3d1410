import { appendFileSync, existsSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { digestOf, readRunDigest, RUN_DIGESTS_FILE, type RunDigest } from '../../src/cli/run-digest.js';

// A run's log read on from where the last status left it: the same digest as a whole read, whatever
// happened to the log between two statuses.

let root: string;
let log: string;
let kept: { path: string; root: string };

beforeEach(async () => {
  root = await mkdtemp(join(tmpdir(), 'run-digest-'));
  await mkdir(join(root, 'epic', 'runs'), { recursive: true });
  log = join(root, 'epic', 'runs', 'run-1.jsonl');
  kept = { path: join(root, 'epic', RUN_DIGESTS_FILE), root };
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

const line = (event: Record<string, unknown>) => `${JSON.stringify(event)}\n`;
const activity = (bead: string, n: number) =>
  Array.from({ length: n }, (_, i) => line({ type: 'activity', bead, message: `step ${i}` })).join('');

/** The digest as plain data, to compare. */
function plain(digest: RunDigest | undefined) {
  return digest && { ...digest, beads: [...digest.beads], gates: [...digest.gates] };
}

/** What a whole read of the log gives (no kept digest). */
async function whole() {
  return plain(await readRunDigest(log));
}

describe('readRunDigest', () => {
  it('folds what status needs: first start, last finish, each bead and gate by its last event', () => {
    const digest = digestOf([
      { type: 'run_started', run_id: 'a' },
      { type: 'bead_started', bead: 'b1', title: 'one' },
      { type: 'gate_finished', gate: 'test', ok: false },
      { type: 'attempt_finished', bead: 'b1', outcome: 'failed', message: 'first' },
      { type: 'gate_finished', gate: 'lint', ok: true },
      { type: 'bead_started', bead: 'b1', title: 'one again' },
      { type: 'gate_finished', gate: 'test', ok: true },
      { type: 'attempt_finished', bead: 'b1', outcome: 'ok' },
      { type: 'bead_closed', bead: 'b1' },
      { type: 'bead_started', bead: 'b2', title: 'two' },
      { type: 'run_started', run_id: 'b' },
      { type: 'run_finished', run_id: 'a', n: 1 },
      { type: 'run_finished', run_id: 'a', n: 2 },
    ]);
    expect(digest.started).toEqual({ type: 'run_started', run_id: 'a' });
    expect(digest.finished).toEqual({ type: 'run_finished', run_id: 'a', n: 2 });
    expect(digest.beads.get('b1')).toEqual({
      started: null,
      ended: true,
      failure: { type: 'attempt_finished', bead: 'b1', outcome: 'failed', message: 'first' },
    });
    expect(digest.beads.get('b2')).toEqual({
      started: { type: 'bead_started', bead: 'b2', title: 'two' },
      ended: false,
      failure: null,
    });
    // In the order the gates first finished, each with its last result.
    expect([...digest.gates]).toEqual([
      ['test', { type: 'gate_finished', gate: 'test', ok: true }],
      ['lint', { type: 'gate_finished', gate: 'lint', ok: true }],
    ]);
  });

  it('reads on from where it left off, and gives what a whole read gives', async () => {
    writeFileSync(
      log,
      line({ type: 'run_started', run_id: 'r' }) + line({ type: 'bead_started', bead: 'b1' }),
    );
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
    expect(existsSync(kept.path)).toBe(true);
    appendFileSync(
      log,
      activity('b1', 50) +
        line({ type: 'bead_failed', bead: 'b1', message: 'no' }) +
        line({ type: 'gate_finished', gate: 'test', ok: true }) +
        line({ type: 'run_finished', run_id: 'r' }),
    );
    const after = plain(await readRunDigest(log, kept));
    expect(after).toEqual(await whole());
    expect(after?.finished).toEqual({ type: 'run_finished', run_id: 'r' });
    // Nothing new: nothing written.
    const { ino } = statSync(kept.path);
    expect(plain(await readRunDigest(log, kept))).toEqual(after);
    expect(statSync(kept.path).ino).toBe(ino);
  });

  it('reads only what was appended: an edit before the kept offset that keeps its last bytes goes unseen', async () => {
    const start = line({ type: 'run_started', run_id: 'AAAA' });
    writeFileSync(log, start + activity('b1', 5));
    await readRunDigest(log, kept);
    // The run id is far from the last 64 bytes: the kept digest still holds.
    writeFileSync(log, start.replace('AAAA', 'ZZZZ') + activity('b1', 5));
    appendFileSync(log, line({ type: 'run_finished', run_id: 'AAAA' }));
    const read = await readRunDigest(log, kept);
    expect(read?.started).toEqual({ type: 'run_started', run_id: 'AAAA' });
    expect((await whole())?.started).toEqual({ type: 'run_started', run_id: 'ZZZZ' });
  });

  it('reads again from the start a log rewritten, replaced or cut short', async () => {
    writeFileSync(
      log,
      line({ type: 'run_started', run_id: 'one' }) + line({ type: 'bead_started', bead: 'b1' }),
    );
    await readRunDigest(log, kept);
    // Rewritten in place, as long or longer, its last bytes before the kept offset changed.
    writeFileSync(
      log,
      line({ type: 'run_started', run_id: 'two' }) + line({ type: 'bead_started', bead: 'b9' }),
    );
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
    expect((await readRunDigest(log, kept))?.beads.has('b1')).toBe(false);
    // Replaced (another inode), same bytes then more.
    const other = `${log}.new`;
    writeFileSync(other, readFileSync(log, 'utf8') + line({ type: 'bead_closed', bead: 'b9' }));
    await rename(other, log);
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
    // Cut short.
    await truncate(log, 10);
    appendFileSync(log, '\n' + line({ type: 'run_started', run_id: 'three' }));
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
    expect((await readRunDigest(log, kept))?.started).toEqual({ type: 'run_started', run_id: 'three' });
  });

  it('counts a last line without its newline for this read only, and reads it whole next time', async () => {
    writeFileSync(log, line({ type: 'run_started', run_id: 'r' }) + '{"type":"run_finished","run_id":"r"}');
    const torn = await readRunDigest(log, kept);
    expect(torn?.finished).toEqual({ type: 'run_finished', run_id: 'r' });
    // Kept as the whole lines left it: up to the first line's end, no run_finished yet.
    const keptNow = JSON.parse(readFileSync(kept.path, 'utf8')) as {
      logs: { offset: number; finished: unknown }[];
    };
    expect(keptNow.logs[0]).toMatchObject({
      offset: line({ type: 'run_started', run_id: 'r' }).length,
      finished: null,
    });
    appendFileSync(log, '\n' + line({ type: 'bead_started', bead: 'b1' }));
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
    // A line torn mid-JSON counts for nothing until it is whole.
    appendFileSync(log, '{"type":"bead_closed","be');
    expect((await readRunDigest(log, kept))?.beads.get('b1')?.ended).toBe(false);
    appendFileSync(log, 'ad":"b1"}\n');
    expect((await readRunDigest(log, kept))?.beads.get('b1')?.ended).toBe(true);
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
  });

  it('ignores a kept file not as written, and writes none through a symlinked folder', async () => {
    writeFileSync(log, line({ type: 'run_started', run_id: 'r' }));
    await readRunDigest(log, kept);
    const json = JSON.parse(readFileSync(kept.path, 'utf8')) as { logs: { started: unknown }[] };
    json.logs[0]!.started = 'not an event';
    writeFileSync(kept.path, JSON.stringify(json));
    appendFileSync(log, line({ type: 'bead_started', bead: 'b1' }));
    expect(plain(await readRunDigest(log, kept))).toEqual(await whole());
    // An epic folder that is a symlink to elsewhere: read, never written through.
    const elsewhere = join(root, 'elsewhere');
    await mkdir(elsewhere);
    symlinkSync(elsewhere, join(root, 'linked'));
    const linked = { path: join(root, 'linked', RUN_DIGESTS_FILE), root };
    expect(plain(await readRunDigest(log, linked))).toEqual(await whole());
    expect(existsSync(join(elsewhere, RUN_DIGESTS_FILE))).toBe(false);
  });

  it('is undefined when there is no log', async () => {
    expect(await readRunDigest(join(root, 'epic', 'runs', 'none.jsonl'), kept)).toBeUndefined();
  });
});
