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
});
