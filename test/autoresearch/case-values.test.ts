// The values of a metric's file that a copy of its cases carries whatever its form (case-values.ts).
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { caseValues, hiddenText, holdsValue, metricCases } from '../../src/autoresearch/case-values.js';

describe('caseValues', () => {
  it('takes the strings, keys and longer numbers of a JSON document that it holds once, in order', () => {
    const text = JSON.stringify({
      cases: [
        { input: 'Hello World', expected: 'hello-world', weight: 0.8731 },
        { input: 'Rock & Roll!', expected: 'rock-roll', weight: 1 },
      ],
    });
    // (`input`, `expected` and `weight` are every case's: names, not a case.)
    expect(caseValues(text)).toEqual([
      'cases',
      'Hello World',
      'hello-world',
      '0.8731',
      'Rock & Roll!',
      'rock-roll',
    ]);
  });

  it('leaves out a label every case shares: a classifier names its labels honestly', () => {
    const labels = 'positive\nnegative\npositive\nneutral\nnegative\nneutral\nmixed\nmixed\n';
    expect(caseValues(labels)).toEqual([]);
    const cases = [
      { text: 'I loved it', label: 'positive' },
      { text: 'Never again', label: 'negative' },
      { text: 'Fine I guess', label: 'positive' },
    ];
    expect(caseValues(cases.map((c) => JSON.stringify(c)).join('\n'))).toEqual([
      'I loved it',
      'Never again',
      'negative',
      'Fine I guess',
    ]);
  });

  it('reads a document a line (NDJSON) as JSON too', () => {
    expect(caseValues('{"q":"2 + 2","a":"four"}\n\n{"q":"3 * 3","a":"nine"}\n')).toEqual([
      '2 + 2',
      'four',
      '3 * 3',
      'nine',
    ]);
  });

  it('takes the quoted literals of code, with any quote, leaving out modules, paths, flags and encodings', () => {
    const script = [
      "import { readFileSync } from 'node:fs';",
      'const cases = [["Hello World", "hello-world"], [`Forge Loops`, \'forge-loops\']];',
      "const text = readFileSync('./src/out.txt', 'utf8');",
      "run(['--input-type=module', 'don\\'t stop']);",
    ].join('\n');
    expect(caseValues(script)).toEqual([
      'Hello World',
      'hello-world',
      'Forge Loops',
      'forge-loops',
      "don\\'t stop",
    ]);
  });

  it('takes each field of each line of a file with no quotes: a list of answers, CSV, TSV', () => {
    expect(caseValues('input,expected\nHello World,hello-world\nabc\tdef|ghi;jkl\n')).toEqual([
      'input',
      'expected',
      'Hello World',
      'hello-world',
      'abc',
      'def',
      'ghi',
      'jkl',
    ]);
  });

  it('leaves out values too short or too long to tell a case by, and stops at 2,000', () => {
    expect(caseValues('["ab", "abc", "", 12, 123, 1234, "' + 'x'.repeat(401) + '"]')).toEqual([
      'abc',
      '1234',
    ]);
    const many = JSON.stringify(Array.from({ length: 3000 }, (_, i) => `case ${i}`));
    const values = caseValues(many);
    expect(values).toHaveLength(2000);
    expect(values.at(-1)).toBe('case 1999');
  });
});

describe('metricCases: the values of each case together', () => {
  it('reads a JSON tuple or record of two to four values as a case, and a key with its value', () => {
    const text = JSON.stringify({
      pairs: [
        ['Hello World', 'hello-world'],
        { input: 'Rock & Roll!', expected: 'rock-roll', note: 'ampersand' },
        { input: 'C++ in 2026', expected: 'c-in-2026' },
      ],
      table: { 'Forge Loops': 'forge-loops' },
      column: ['error: one', 'error: two', 'error: three', 'error: four', 'error: five'],
    });
    expect(metricCases(text).cases).toEqual([
      ['Hello World', 'hello-world'],
      // (`note` is that record's alone: a key with its value, as a table's.)
      ['note', 'ampersand'],
      ['Rock & Roll!', 'rock-roll', 'ampersand'],
      ['C++ in 2026', 'c-in-2026'],
      ['Forge Loops', 'forge-loops'],
    ]);
  });

  it('reads a bracketed tuple of literals on a line of code as a case, and a line of fields', () => {
    const script = [
      "const cases = [['Hello World', 'hello-world'], ('Rock & Roll!', 'rock-roll')];",
      "check({ input: 'Forge Loops', expected: 'forge-loops' });",
      "const messages = ['error: one', 'error: two', 'error: three', 'error: four', 'error: five'];",
    ].join('\n');
    expect(metricCases(script).cases).toEqual([
      ['Hello World', 'hello-world'],
      ['Rock & Roll!', 'rock-roll'],
      ['Forge Loops', 'forge-loops'],
    ]);
    expect(
      metricCases(
        'Hello World,hello-world\nRock & Roll!\trock-roll\nerr one,err two,err three,err four,err five\n',
      ).cases,
    ).toEqual([
      ['Hello World', 'hello-world'],
      ['Rock & Roll!', 'rock-roll'],
    ]);
  });

  it('leaves out of a case what is not one of its own values: a shared label, plumbing, a short value', () => {
    const text = JSON.stringify([
      ['Hello World', 'positive'],
      ['Rock & Roll!', 'positive'],
      ['Forge Loops', 'ok'],
    ]);
    expect(metricCases(text)).toEqual({ values: ['Hello World', 'Rock & Roll!', 'Forge Loops'], cases: [] });
  });
});

describe('holdsValue', () => {
  it('finds a value as written or as JSON escapes it inside a string', () => {
    expect(holdsValue('const t = "Hello World";', 'Hello World')).toBe(true);
    expect(holdsValue('{"say":"a \\"quoted\\" word"}', 'a "quoted" word')).toBe(true);
    expect(holdsValue('const t = "Hello";', 'Hello World')).toBe(false);
  });
});

describe('hiddenText', () => {
  const cases = JSON.stringify([['Hello World', 'hello-world']]);
  const forms: [string, string][] = [
    ['base64', `atob('${Buffer.from(cases).toString('base64')}')`],
    ['base64url', `'${Buffer.from(cases).toString('base64url')}'`],
    ['hex', `bytes.fromhex("${Buffer.from(cases).toString('hex')}")`],
    ['gzip in base64', `'${gzipSync(cases).toString('base64')}'`],
    ['zlib in base64', `'${deflateSync(cases).toString('base64')}'`],
    ['raw deflate in hex', `'${deflateRawSync(cases).toString('hex')}'`],
    [
      '\\x escapes',
      `"${[...cases].map((c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('')}"`,
    ],
    [
      '\\u escapes',
      `"${[...cases].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`,
    ],
    ['\\u{} escapes', `"${[...cases].map((c) => `\\u{${c.charCodeAt(0).toString(16)}}`).join('')}"`],
    ['character codes', `String.fromCharCode(${[...cases].map((c) => c.charCodeAt(0)).join(', ')})`],
    ['reversed', `'${[...cases].reverse().join('')}'.split('').reverse().join('')`],
    ['pieces joined by +', `if (t === 'Hel' + 'lo World') return 'hello' + "-" +\n  \`world\`;`],
    ['pieces side by side (Python, C)', `TABLE = {("Hel" "lo World"): ("hello-" "world")}`],
    ['pieces joined by . and ..', `$a = 'Hel' . 'lo World'; local b = "hello-".."world"`],
    ['a list joined with nothing', `['Hel', 'lo World'].join(''); ''.join(('hello', '-world'))`],
    ['one character a piece', `${[...'Hello World hello-world'].map((c) => `"${c}"`).join('+')}`],
  ];
  it.each(forms)('decodes cases kept as %s', (_, text) => {
    expect(holdsValue(text, 'Hello World')).toBe(false);
    const decoded = hiddenText(text);
    expect(holdsValue(decoded, 'Hello World')).toBe(true);
    expect(holdsValue(decoded, 'hello-world')).toBe(true);
  });

  it('joins no literals that are not joined: listed, or apart', () => {
    const text =
      "const list = ['Hel', 'lo World'];\nconst tuple = ('hello', '-world');\nf('Hel', 'lo World');";
    const decoded = hiddenText(text);
    expect(holdsValue(decoded, 'Hello World')).toBe(false);
    expect(holdsValue(decoded, 'hello-world')).toBe(false);
  });

  it('takes what is no encoding for garbage, and a code past Unicode for no text', () => {
    const text =
      'const a_very_long_identifier_name_here = deadbeefdeadbeefdeadbeefdeadbeef; [1,2,3,4,5,6,7,99999999]';
    expect(() => hiddenText(text)).not.toThrow();
    // (Only the text reversed: 5600000 is no character, so the codes are none.)
    const codes = '12, 34, 56, 78, 90, 12, 34, 5600000';
    expect(hiddenText(codes)).toBe([...codes].reverse().join(''));
  });
});
