// The cases read from a test file's code (src/autoresearch/test-cases.ts): each assertion's input
// beside the answer it expects, in any language; not a test's name, not plain words, not across
// tests.
import { describe, expect, it } from 'vitest';
import { testCases } from '../../src/autoresearch/test-cases.js';

describe("a test file's cases", () => {
  it('reads each assertion as its input beside its answer, and no test name as a value', () => {
    const text = [
      "import { test } from 'node:test';",
      "test('spaces become dashes', () => assert.equal(slug('Hello World'), 'hello-world'));",
      "it('drops punctuation', () => { expect(slug('Rock & Roll!')).toBe('rock-roll'); });",
      "describe('slug', () => {",
      '  test.each([',
      "    ['  Trim me  ', 'trim-me'],",
      "  ])('trims %s', (input, output) => {});",
      '});',
      '',
    ].join('\n');
    expect(testCases(text)).toEqual({
      values: ['Hello World', 'hello-world', 'Rock & Roll!', 'rock-roll', '  Trim me  '.trim(), 'trim-me'],
      cases: [
        ['Hello World', 'hello-world'],
        ['Rock & Roll!', 'rock-roll'],
        ['Trim me', 'trim-me'],
      ],
    });
  });

  it('reads an assertion wrapped over lines, pytest and its parameters, and long numbers', () => {
    const wrapped = ['assert.equal(', "  slug('C++ in 2026'),", "  'c-in-2026',", ');', ''].join('\n');
    expect(testCases(wrapped).cases).toEqual([['C++ in 2026', 'c-in-2026']]);
    const pytest = [
      '@pytest.mark.parametrize("text,slug", [("Hello World", "hello-world")])',
      'def test_slug(text, slug):',
      '    assert make("Forge Loops") == "forge-loops"',
      '',
      'def test_distance():',
      '    assert miles_to_km(1609.34) == 2590.0',
      '',
    ].join('\n');
    expect(testCases(pytest).cases).toEqual([
      ['Hello World', 'hello-world'],
      ['Forge Loops', 'forge-loops'],
      ['1609.34', '2590.0'],
    ]);
  });

  it('reads no case of plain words, of a value inside the other, or across tests and blank lines', () => {
    const text = [
      "test('greets', () => expect(t('greeting', 'fr')).toBe('Bonjour'));",
      "test('types', () => expect(mime('html')).toBe('text/html'));",
      "test('one', () => expect(f('a b c')).toBe('x-1'));",
      "test('two', () => expect(f('d e f')).toBe('y-2'));",
      "expect(g('p q r'))",
      '',
      ".toBe('z-3');",
      'assert f(10) == 20',
      '',
    ].join('\n');
    expect(testCases(text).cases).toEqual([
      ['a b c', 'x-1'],
      ['d e f', 'y-2'],
    ]);
  });
});
