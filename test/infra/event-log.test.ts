// The run's event log: created with its first event, and a failed write (a full disk) never escapes as
// an unhandled rejection (a stack trace and exit 1): flush() reports it.
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createEventLogWriter, describeRestoredLog, readEventLog } from '../../src/infra/event-log.js';
import { readLogLines } from '../../src/infra/file-tail.js';
import { MAX_LINE_CHARS } from '../../src/infra/line-splitter.js';

describe('event log writer', () => {
  it('creates nothing until the first event, then writes events in order', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-events-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'runs', 'run-1.jsonl');
    const log = createEventLogWriter(path);
    await log.flush();
    expect(existsSync(join(dir, 'runs'))).toBe(false);
    log.write({ type: 'a' });
    log.write({ type: 'b' });
    await log.flush();
    expect((await readEventLog(path)).events).toEqual([{ type: 'a' }, { type: 'b' }]);
  });

  // The run creates its log and never opens one already there, so /dev/full (ENOSPC on every write)
  // now fails at the open: the failure travels the same way, through flush().
  it.runIf(existsSync('/dev/full'))(
    'at a path it cannot write (/dev/full), reports the failure from flush() and leaks no rejection',
    async () => {
      const leaked: unknown[] = [];
      const onLeak = (reason: unknown) => leaked.push(reason);
      process.on('unhandledRejection', onLeak);
      onTestFinished(() => void process.off('unhandledRejection', onLeak));
      const log = createEventLogWriter('/dev/full');
      log.write({ type: 'run_started' });
      log.write({ type: 'bead_started' });
      await new Promise((resolve) => setTimeout(resolve, 50));
      await expect(log.flush()).rejects.toMatchObject({ code: 'EEXIST' });
      expect(leaked).toEqual([]);
    },
  );
});

describe('an event log deleted under the run', () => {
  /** Waits until the log holds `lines` lines: the writes are chained, and flush() would close it. */
  async function landed(path: string, lines: number): Promise<void> {
    for (let i = 0; i < 500; i += 1) {
      const text = await readFile(path, 'utf8').catch(() => '');
      if (text.split('\n').length - 1 >= lines) return;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${path} never held ${lines} lines`);
  }

  it('with its folders (git clean -fdx) is written back whole from the open file, and says by which bead', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-events-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const root = join(dir, '.forge');
    const path = join(root, 'epics', 'bd-a', 'runs', 'run-1.jsonl');
    const restored: [string, object][] = [];
    const log = createEventLogWriter(path, dir, (at, event) => restored.push([at, event]));
    log.write({ type: 'run_started' });
    log.write({ type: 'bead_started', bead: 'bd-a.1' });
    await landed(path, 2);
    await rm(root, { recursive: true });
    log.write({ type: 'attempt_finished', bead: 'bd-a.1' });
    log.write({ type: 'run_finished' });
    await log.flush();
    expect((await readEventLog(path)).events).toEqual([
      { type: 'run_started' },
      { type: 'bead_started', bead: 'bd-a.1' },
      { type: 'attempt_finished', bead: 'bd-a.1' },
      { type: 'run_finished' },
    ]);
    expect(restored).toEqual([[path, { type: 'attempt_finished', bead: 'bd-a.1' }]]);
    expect(describeRestoredLog(path, restored[0]![1])).toBe(
      `this run's event log ${path} was deleted while bd-a.1 ran (an agent's git clean?) and written back from the run's open copy.`,
    );
  });

  it('and another file put at its path: that one is not the run’s, and the log ends with an error', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-events-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'runs', 'run-1.jsonl');
    const log = createEventLogWriter(path, dir, () => expect.unreachable('not written back'));
    log.write({ type: 'run_started' });
    await landed(path, 1);
    await rm(path);
    await writeFile(path, '{"type":"forged"}\n');
    log.write({ type: 'bead_started' });
    await expect(log.flush()).rejects.toMatchObject({ code: 'ELOGREPLACED', path });
    expect(await readFile(path, 'utf8')).toBe('{"type":"forged"}\n');
  });
});

describe('reading an event log an agent may have written', () => {
  it('holds no line past the bound: a huge line is cut, so it is skipped and the events around it read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-events-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'run.jsonl');
    const huge = `{"type":"activity","message":"${'x'.repeat(MAX_LINE_CHARS * 3)}"}`;
    await writeFile(path, `{"type":"run_started"}\n${huge}\n{"type":"run_finished"}\n`);
    const lines = (await readLogLines(path)) ?? [];
    expect(lines).toHaveLength(3);
    expect(Math.max(...lines.map((line) => line.length))).toBeLessThan(MAX_LINE_CHARS + 100);
    expect(lines[1]).toMatch(/\[…line cut: \d+ more characters…\]$/);
    const read = await readEventLog(path);
    expect(read.events.map((event) => event.type)).toEqual(['run_started', 'run_finished']);
    expect(read.skipped).toBe(1);
    // A missing log is none.
    expect(await readLogLines(join(dir, 'none.jsonl'))).toBeUndefined();
  });

  it('keeps a character whose bytes straddle two reads, and a last line without its newline', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-events-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const path = join(dir, 'run.jsonl');
    // The log is read 64 KiB at a time: the byte at that offset must be inside a '€' (3 bytes).
    const line = (n: number) => `{"type":"activity","n":${n},"message":"xy${'€'.repeat(30_000)}"}`;
    const text = `${line(1)}\n${line(2)}\n${line(3)}`;
    await writeFile(path, text);
    const bytes = Buffer.from(text);
    expect(bytes.length).toBeGreaterThan(4 * 64 * 1024);
    expect(bytes[64 * 1024]! & 0xc0).toBe(0x80);
    expect(await readLogLines(path)).toEqual([line(1), line(2), line(3)]);
  });
});
