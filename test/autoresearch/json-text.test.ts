// JSON in text: error positions for config files, documents found in noisy output.
import { describe, expect, it } from 'vitest';
import { findJsonValues, locateJsonError } from '../../src/autoresearch/json-text.js';

describe('locateJsonError', () => {
  it.each([
    ['{"a":}', 1, 6, 'unexpected "}"'],
    ['{"a":1', 1, 7, 'expected "," or "}" after a property value, found end of input'],
    ['{"a": "x\ny"}', 1, 9, 'unescaped control character (e.g. a newline) in a string'],
    ['[1, 2] 3', 1, 8, 'unexpected "3" after the JSON value'],
    ['', 1, 1, 'unexpected end of input'],
    ['{\n  "a": tru\n}', 2, 8, 'unexpected "t"'],
  ])('%j fails at line %i, column %i', (text, line, column, message) => {
    expect(() => {
      JSON.parse(text);
    }).toThrow();
    expect(locateJsonError(text)).toMatchObject({ line, column, message });
  });
});

describe('findJsonValues', () => {
  it('anywhere: finds objects inside prose, skipping unbalanced braces before them', () => {
    const found = findJsonValues('see {this} and { "a": 1 } then [2, {"b": "}"}]', { anywhere: true });
    expect(found.map((c) => c.value)).toEqual([{ a: 1 }, [2, { b: '}' }]]);
  });

  it('at line starts only: ignores JSON that begins mid-line', () => {
    const text = 'log: {"x": 1}\n  {"y": 2}\n[3]\n';
    expect(findJsonValues(text, { anywhere: false }).map((c) => c.value)).toEqual([{ y: 2 }, [3]]);
  });
});
