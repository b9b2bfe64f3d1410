// Signal files: the shapes of DESIGN §3, written atomically, validated on read.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  readArbiterSignal,
  readTerminalSignal,
  SignalFileError,
  writeArbiterSignal,
  writeTerminalSignal,
  type ContinueSignal,
  type TerminalSignal,
} from '../../src/autoresearch/signals.js';

async function workspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-signals-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const proceed: ContinueSignal = {
  type: 'continue',
  iter: 3,
  next_iter: 4,
  current_score: 55,
  best_score: 58,
  decision: 'revert',
  delta: -3,
};
const stop: TerminalSignal = {
  type: 'terminal',
  reason: 'plateau',
  iter: 7,
  final_score: null,
  best_score: 61.5,
  decision: 'crash',
};

describe('signal files', () => {
  it('a continue signal goes to arbiter-signal.json only, in the DESIGN shape', async () => {
    const dir = await workspace();
    await writeArbiterSignal(dir, proceed);
    expect(JSON.parse(await readFile(join(dir, 'arbiter-signal.json'), 'utf8'))).toEqual(proceed);
    expect(await readArbiterSignal(dir)).toEqual(proceed);
    expect(await readTerminalSignal(dir)).toBeUndefined();
    expect((await readdir(dir)).sort()).toEqual(['arbiter-signal.json']);
  });

  it('a terminal signal is written to both files', async () => {
    const dir = await workspace();
    await writeArbiterSignal(dir, stop);
    expect(await readArbiterSignal(dir)).toEqual(stop);
    expect(await readTerminalSignal(dir)).toEqual(stop);
  });

  it('the runner can write a terminal signal without a decision', async () => {
    const dir = await workspace();
    const wallClock: TerminalSignal = { ...stop, reason: 'wall_clock', decision: null };
    await writeTerminalSignal(dir, wallClock);
    expect(await readTerminalSignal(dir)).toEqual(wallClock);
  });

  it('refuses to write a malformed signal', async () => {
    const dir = await workspace();
    await expect(writeArbiterSignal(dir, { ...proceed, current_score: NaN })).rejects.toThrow();
    expect(await readdir(dir)).toEqual([]);
  });

  it('reading a broken file names it and the field, instead of guessing', async () => {
    const dir = await workspace();
    const path = join(dir, 'arbiter-signal.json');
    await writeFile(path, JSON.stringify({ continue: true }));
    await expect(readArbiterSignal(dir)).rejects.toThrow(SignalFileError);
    await expect(readArbiterSignal(dir)).rejects.toThrow(new RegExp(`^${path}: type: `));
    await writeFile(path, '{"type": "terminal", "reason": "bored"');
    await expect(readArbiterSignal(dir)).rejects.toThrow(`${path}: not valid JSON`);
  });
});
