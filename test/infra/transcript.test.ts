// The transcript under a flood: the agent's lines are kept in order while the disk keeps up, and past a
// bound on what waits for the disk they are dropped and counted, never held without limit.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { openTranscript } from '../../src/agents/transcript.js';

async function transcriptPath(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-transcript-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return join(dir, 'runs', 'bead.log');
}

describe('openTranscript', () => {
  it('keeps every line and note, in order, when the disk keeps up', async () => {
    const path = await transcriptPath();
    const transcript = await openTranscript(path);
    transcript.note('start', { bead: 'b-1' });
    transcript.raw('one');
    transcript.raw('');
    transcript.note('stderr', { line: 'warn' });
    transcript.raw('two');
    await transcript.close();
    const lines = (await readFile(path, 'utf8')).split('\n');
    expect(
      lines.map((line) => (line.startsWith('{') ? (JSON.parse(line) as { forge: string }).forge : line)),
    ).toEqual(['start', 'one', '', 'stderr', 'two', '']);
  });

  it('drops what floods past its bound with a note saying how much, and keeps its own lines', async () => {
    const path = await transcriptPath();
    const transcript = await openTranscript(path);
    const line = 'x'.repeat(1023);
    // 64 MiB in one go, with no turn of the event loop for the disk: all of it would wait in memory.
    const sent = 64 * 1024;
    for (let i = 0; i < sent; i += 1) transcript.raw(line);
    transcript.note('stderr', { line: 'also dropped' });
    transcript.note('end', { outcome: 'ok' });
    await transcript.close();
    const lines = (await readFile(path, 'utf8')).trimEnd().split('\n');
    const kept = lines.filter((l) => l === line).length;
    expect(kept).toBeGreaterThan(0);
    expect(kept).toBeLessThan(sent / 4);
    const notes = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(notes).toEqual([
      expect.objectContaining({ forge: 'dropped', lines: sent - kept + 1 }),
      expect.objectContaining({ forge: 'end', outcome: 'ok' }),
    ]);
    expect(lines.at(-2)).toContain('"dropped"');
  });

  it('keeps the start and the end of an agent that prints without end, and says how much it left out', async () => {
    const path = await transcriptPath();
    const transcript = await openTranscript(path, undefined, { maxChars: 64 * 1024, tailChars: 8 * 1024 });
    transcript.note('start', { bead: 'b-1' });
    // 1,000 lines of 1 KiB, each named by its number, a turn of the event loop every 50 for the disk.
    const line = (i: number) => `${String(i).padStart(4, '0')} ${'y'.repeat(1018)}`;
    for (let i = 0; i < 1000; i += 1) {
      transcript.raw(line(i));
      if (i % 50 === 49) await new Promise((resolve) => setImmediate(resolve));
    }
    transcript.note('stderr', { line: 'the last thing it said' });
    transcript.note('end', { outcome: 'error' });
    transcript.raw('after the end');
    await transcript.close();
    const text = await readFile(path, 'utf8');
    const lines = text.trimEnd().split('\n');
    const kinds = lines.map((l) =>
      l.startsWith('{') ? (JSON.parse(l) as { forge: string }).forge : l.slice(0, 4),
    );
    // The first 64 KiB whole: lines 0–63; then the note, the last 8 KiB (the stderr note among them)
    // before Forge's own `end`; then what came after it, past the bound too.
    const head = Array.from({ length: 64 }, (_, i) => String(i).padStart(4, '0'));
    const last = Array.from({ length: 7 }, (_, i) => String(993 + i).padStart(4, '0'));
    expect(kinds).toEqual(['start', ...head, 'truncated', ...last, 'stderr', 'end', 'truncated', 'afte']);
    const truncated = lines
      .filter((l) => l.includes('"truncated"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(truncated[0]).toMatchObject({ lines: 1000 - 64 - 7, chars: (1000 - 64 - 7) * 1024 });
    expect(String(truncated[0]!.reason)).toMatch(
      /passed the 64 KiB a transcript keeps; the last 8 line\(s\) follow/,
    );
    expect(truncated[1]).toMatchObject({ lines: 0, chars: 0 });
    expect(text.length).toBeLessThan(64 * 1024 + 2 * 8 * 1024 + 2048);
  });
});
