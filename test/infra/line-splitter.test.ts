// Splitting a child's output into lines: whole lines whatever the chunking, each character searched once,
// and one line never held past its bound however long the agent writes without a newline.
import { describe, expect, it, vi } from 'vitest';
import { MAX_LINE_CHARS, createLineSplitter, cutLineMark } from '../../src/infra/line-splitter.js';

function split(chunks: readonly string[], maxChars?: number): string[] {
  const lines: string[] = [];
  const splitter = createLineSplitter((line) => lines.push(line), maxChars);
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return lines;
}

/** How many characters `indexOf('\n')` looked at while `run` ran (it must not await). */
function charactersSearched(run: () => void): number {
  const spy = vi.spyOn(String.prototype, 'indexOf');
  let searched = 0;
  try {
    run();
    spy.mock.calls.forEach(([needle, from], call) => {
      if (needle !== '\n') return;
      const text = String(spy.mock.contexts[call]);
      const found = spy.mock.results[call]?.value as number;
      searched += (found === -1 ? text.length : found + 1) - (from ?? 0);
    });
  } finally {
    // Restoring also forgets the calls, so they are counted first.
    spy.mockRestore();
  }
  return searched;
}

describe('createLineSplitter', () => {
  it('passes on whole lines however the stream is cut into chunks, CRLF too', () => {
    const text = 'one\r\ntwo\n\nthree\nlast';
    const whole = split([text]);
    expect(whole).toEqual(['one', 'two', '', 'three', 'last']);
    expect(split(text.split(''))).toEqual(whole);
    expect(split(['on', 'e\r', '\ntwo\n', '\nthr', 'ee\nla', 'st'])).toEqual(whole);
    expect(split(['no newline at all'])).toEqual(['no newline at all']);
    expect(split(['ends\n'])).toEqual(['ends']);
  });

  it('searches each character once, not the held part of a long line again with every chunk', () => {
    const chunk = 'a'.repeat(64 * 1024);
    const chunks = 64;
    const lines: string[] = [];
    const searched = charactersSearched(() => {
      const splitter = createLineSplitter((line) => lines.push(line));
      for (let i = 0; i < chunks; i += 1) splitter.push(chunk);
      splitter.push('\n');
    });
    expect(lines).toHaveLength(1);
    // Searching the held part again with every chunk would look at some 136 million characters, not 4.
    expect(searched).toBeGreaterThanOrEqual(chunks * chunk.length);
    expect(searched).toBeLessThanOrEqual(chunks * chunk.length + 1);
  });

  it('cuts a line past the bound, keeping its start and saying how much was dropped', () => {
    const lines = split(['x'.repeat(6), 'y'.repeat(5), '\nnext\n', 'z'.repeat(12)], 8);
    expect(lines).toEqual([`xxxxxxyy${cutLineMark(3)}`, 'next', `zzzzzzzz${cutLineMark(4)}`]);
  });

  it('holds at most the bound of a line with no newline, by default 1 MiB', () => {
    const chunk = 'a'.repeat(64 * 1024);
    const lines = split(Array.from({ length: 40 }, () => chunk));
    expect(lines).toEqual([
      `${'a'.repeat(MAX_LINE_CHARS)}${cutLineMark(40 * chunk.length - MAX_LINE_CHARS)}`,
    ]);
  });
});
