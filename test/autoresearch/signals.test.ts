// Signal files: the shapes of DESIGN §3, written atomically, validated on read. The loop's files are
// kept in memory (LoopFiles); test/infra/loop-files.test.ts holds the disk to the same contract.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  readArbiterSignal,
  readTerminalSignal,
  SignalFileError,
  writeArbiterSignal,
  writeTerminalSignal,
  type ContinueSignal,
  type TerminalSignal,
} from '../../src/autoresearch/signals.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';

const dir = '/repo/.autoresearch';

function workspace() {
  return createMemoryLoopFiles();
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
    const files = workspace();
    await writeArbiterSignal(files, dir, proceed);
    expect(JSON.parse((await files.readIfExists(join(dir, 'arbiter-signal.json'))) ?? '')).toEqual(proceed);
    expect(await readArbiterSignal(files, dir)).toEqual(proceed);
    expect(await readTerminalSignal(files, dir)).toBeUndefined();
    expect(files.paths()).toEqual([join(dir, 'arbiter-signal.json')]);
  });

  it('a terminal signal is written to both files', async () => {
    const files = workspace();
    await writeArbiterSignal(files, dir, stop);
    expect(await readArbiterSignal(files, dir)).toEqual(stop);
    expect(await readTerminalSignal(files, dir)).toEqual(stop);
  });

  it('the runner can write a terminal signal without a decision', async () => {
    const files = workspace();
    const wallClock: TerminalSignal = { ...stop, reason: 'wall_clock', decision: null };
    await writeTerminalSignal(files, dir, wallClock);
    expect(await readTerminalSignal(files, dir)).toEqual(wallClock);
  });

  it('refuses to write a malformed signal', async () => {
    const files = workspace();
    await expect(writeArbiterSignal(files, dir, { ...proceed, current_score: NaN })).rejects.toThrow();
    expect(files.paths()).toEqual([]);
  });

  it('reading a broken file names it and the field, instead of guessing', async () => {
    const files = workspace();
    const path = join(dir, 'arbiter-signal.json');
    await files.writeText(path, JSON.stringify({ continue: true }));
    await expect(readArbiterSignal(files, dir)).rejects.toThrow(SignalFileError);
    await expect(readArbiterSignal(files, dir)).rejects.toThrow(new RegExp(`^${path}: type: `));
    await files.writeText(path, '{"type": "terminal", "reason": "bored"');
    await expect(readArbiterSignal(files, dir)).rejects.toThrow(`${path}: not valid JSON`);
  });
});
