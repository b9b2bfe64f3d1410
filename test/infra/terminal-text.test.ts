// Text from beads and agents on a terminal (terminal-text.ts): every control character and direction
// override shown as its escape, the rest as it is.
import { describe, expect, it } from 'vitest';
import { terminalText, terminalValue } from '../../src/infra/terminal-text.js';

describe('terminalText', () => {
  it('shows escapes, carriage returns, C1 controls and direction overrides as their escapes', () => {
    expect(terminalText('a\u001b[2Jb')).toBe('a\\u001b[2Jb');
    expect(terminalText('x\ry')).toBe('x\\ry');
    expect(terminalText('\u009b31m\u0007\u0000\u007f')).toBe('\\u009b31m\\u0007\\u0000\\u007f');
    expect(terminalText('abc\u202edef\u2066\u200f')).toBe('abc\\u202edef\\u2066\\u200f');
  });

  it('leaves tabs, line ends (CRLF too) and every other character as they are', () => {
    const text = 'tab\there\nline\r\nÜnïcödé 🙂 — “quotes”';
    expect(terminalText(text)).toBe(text);
  });

  it('keeps a JSON line the same JSON: its escapes are JSON’s', () => {
    const line = JSON.stringify({ text: 'a\u202eb\u0085c' });
    expect(JSON.parse(terminalText(line))).toEqual({ text: 'a\u202eb\u0085c' });
  });

  it('reaches every string of an event, at any depth, and leaves the rest alone', () => {
    const value = { a: 'x\u001by', n: 3, list: ['\r', { deep: '\u202e' }], none: null, flag: true };
    expect(terminalValue(value)).toEqual({
      a: 'x\\u001by',
      n: 3,
      list: ['\\r', { deep: '\\u202e' }],
      none: null,
      flag: true,
    });
  });
});
