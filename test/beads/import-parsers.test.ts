// The import parsers as pure functions: fixtures written from each format's description, and the
// malformed inputs each must refuse with file, line and field.
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { detectFormat } from '../../src/beads/import/detect.js';
import { draftImport } from '../../src/beads/import/draft.js';
import { parseFrontmatter } from '../../src/beads/import/frontmatter.js';
import { parseJsonLocated } from '../../src/beads/import/json-locate.js';
import { markDone } from '../../src/beads/import/mark-done.js';
import { parsePlan } from '../../src/beads/import/plan.js';
import { parsePrd } from '../../src/beads/import/prd.js';
import { parseRequirements, statusDone } from '../../src/beads/import/requirements.js';
import { parseSpecs } from '../../src/beads/import/specs.js';
import { formatProblem, type ParseResult, type ParsedSource } from '../../src/beads/import/types.js';
import { ROOT } from '../support/cli.js';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'import');
const fixture = (name: string) => readFile(join(FIXTURES, name), 'utf8');

function ok(result: ParseResult): ParsedSource {
  if (!result.ok) throw new Error(result.problems.map(formatProblem).join('\n'));
  return result.source;
}

function problems(result: ParseResult): string[] {
  if (result.ok) throw new Error('expected problems, the source parsed');
  return result.problems.map(formatProblem);
}

async function specFiles(dir: string) {
  const names = (await readdir(join(FIXTURES, dir))).sort();
  return Promise.all(
    names.map(async (name) => ({ file: `${dir}/${name}`, text: await fixture(`${dir}/${name}`) })),
  );
}

describe('parsePrd', () => {
  it('orders stories by priority then position, closes those that pass, keeps criteria and notes', async () => {
    const source = ok(parsePrd(await fixture('prd.json'), 'prd.json'));
    expect(source.title).toBe('Bookshop (prd.json)');
    expect(source.items.map((i) => [i.id, i.done, i.line])).toEqual([
      ['US-001', true, 15],
      ['US-002', false, 23],
      ['US-004', false, 31],
      ['US-003', false, 6],
    ]);
    const checkout = source.items[3]!;
    expect(checkout.title).toBe('US-003: Checkout');
    expect(checkout.description).toContain('- A receipt is emailed');
    expect(checkout.description).toContain('Use the sandbox gateway.');
  });

  it.each([
    [
      'bad/prd-field.json',
      'bad/prd-field.json line 9: userStories[1] (US-002): passes: expected true or false, got a string ("yes")',
    ],
    [
      'bad/prd-syntax.json',
      "bad/prd-syntax.json line 4: invalid JSON: expected ',' or ']' after an array element, found '{'",
    ],
  ])('refuses %s naming line, item and field', async (name, message) => {
    expect(problems(parsePrd(await fixture(name), name))).toEqual([message]);
  });

  it.each([
    ['{"userStories": {}}', 'prd.json line 1: userStories: expected an array'],
    ['{"stories": []}', 'prd.json line 1: userStories: is missing'],
    [
      '{"userStories": [{"title": "t", "passes": false}]}',
      'prd.json line 1: userStories[0]: id: is missing (a non-empty string is required)',
    ],
    [
      '{"userStories": [\n{"id": "A", "title": "t", "passes": false},\n{"id": "A", "title": "u", "passes": true}]}',
      'prd.json line 3: userStories[1] (A): id: duplicates the id of userStories[0]',
    ],
    [
      '{"userStories": [{"id": "A", "title": "t", "passes": false, "priority": "high"}]}',
      'prd.json line 1: userStories[0] (A): priority: expected a number, got a string ("high")',
    ],
    ['{"userStories": []}', 'prd.json: userStories: has no stories to import'],
  ])('refuses %j', (text, message) => {
    expect(problems(parsePrd(text, 'prd.json'))[0]).toBe(message);
  });
});

describe('parseRequirements', () => {
  it('keeps file order and maps done statuses to closed', async () => {
    const source = ok(parseRequirements(await fixture('requirements.json'), 'requirements.json'));
    expect(source.items.map((i) => [i.id, i.done])).toEqual([
      ['R1', true],
      ['R2', false],
      ['R3', false],
      ['R4', true],
    ]);
    expect(source.items[1]!.title).toBe('R2: The CLI prints --help with examples');
  });

  it('accepts a bare array and numeric ids', () => {
    const source = ok(parseRequirements('[{"id": 7, "requirement": "x", "status": "Done"}]', 'r.json'));
    expect(source.items.map((i) => [i.id, i.done])).toEqual([['7', true]]);
  });

  it('refuses an unknown status naming line, item and field', async () => {
    const [message] = problems(
      parseRequirements(await fixture('bad/requirements.json'), 'requirements.json'),
    );
    expect(message).toMatch(
      /^requirements\.json line 3: requirements\[1\] \(R2\): status: unknown status "someday": use one of todo, /,
    );
  });

  it.each([
    ['todo', false],
    ['In Progress', false],
    ['in-progress', false],
    ['', false],
    ['done', true],
    ['COMPLETE', true],
    ['completed', true],
    ['someday', undefined],
  ])('status %j → done %s', (status, done) => {
    expect(statusDone(status)).toBe(done);
  });
});

describe('parseSpecs', () => {
  it('orders by priority then file name, reads ids, deps, risk and created', async () => {
    const source = ok(parseSpecs(await specFiles('specs'), 'specs'));
    expect(source.items.map((i) => [i.id, i.priority, i.done, i.dependsOn])).toEqual([
      ['docs', 1, true, []],
      ['auth', 2, false, ['database']],
      ['profile', 3, false, ['auth', 'database']],
      // Waited for, yet last by priority: its bead is made after those that wait for it.
      ['database', 4, false, []],
    ]);
    const auth = source.items[1]!;
    expect(auth.title).toBe('Sign in with email');
    expect(auth.labels).toEqual(['risk:high']);
    expect(auth.description).toContain('[the flow](../docs/auth.md)');
    expect(auth.description).toContain('Created: 2026-01-05');
    expect(source.items[3]!.title).toBe('Database: schema and migrations');
  });

  it.each([
    [
      'bad/specs-missing-dep',
      'bad/specs-missing-dep/two.md line 5: two: depends_on: no spec has the id "three" (ids here: one, two)',
    ],
    [
      'bad/specs-block-scalar',
      "bad/specs-block-scalar/two.md line 3: summary: '|' starts YAML this importer does not read (block scalars, anchors, tags, maps); write a plain or quoted value",
    ],
  ])('refuses %s naming file, line and field', async (dir, message) => {
    expect(problems(parseSpecs(await specFiles(dir), dir))).toEqual([message]);
  });

  it('refuses a dependency cycle before anything is created', () => {
    const spec = (deps: string) => `---\ntitle: t\ndepends_on: [${deps}]\n---\n`;
    const result = parseSpecs(
      [
        { file: 'specs/a.md', text: spec('b') },
        { file: 'specs/b.md', text: spec('a') },
      ],
      'specs',
    );
    expect(problems(result)).toEqual([
      'specs/a.md line 3: a: depends_on: the dependencies form a cycle: a -> b -> a',
    ]);
  });
});

describe('parseFrontmatter', () => {
  it.each([
    ['title: plain text', 'plain text'],
    ['title: "quoted: \\"x\\""', 'quoted: "x"'],
    ["title: 'it''s'", "it's"],
    ['title: 3', 3],
    ['title: true', true],
    ['title: ~', null],
    ['title: [a, "b, c", \'d\']', ['a', 'b, c', 'd']],
    ['title: []', []],
    ['title:\n  - a\n  - b', ['a', 'b']],
    ['title:', null],
    ['title: x # a comment', 'x'],
  ])('reads %j', (line, value) => {
    const parsed = parseFrontmatter(`---\n${line}\n---\nbody`);
    expect(parsed.ok && parsed.fields.get('title')?.value).toEqual(value);
  });

  it.each([
    ['no frontmatter', 'title: x', 1, "the file must start with a '---' line"],
    ['unclosed', '---\ntitle: x\n', 1, "no closing '---'"],
    ['nested map', '---\nmeta:\n  owner: me\n---', 3, 'nested maps are not supported'],
    ['flow map', '---\nmeta: {a: 1}\n---', 2, "'{' starts YAML"],
    ['anchor', '---\na: &x 1\n---', 2, "'&' starts YAML"],
    ['duplicate key', '---\na: 1\na: 2\n---', 3, 'a: appears twice'],
    ['not a key', '---\njust text\n---', 2, "expected 'key: value'"],
    ['unclosed quote', '---\na: "open\n---', 2, 'must close on the same line'],
    ['tab', '---\na:\n\t- x\n---', 3, 'tabs are not allowed'],
  ])('refuses %s with its line', (_name, text, line, message) => {
    const parsed = parseFrontmatter(text);
    expect(parsed.ok).toBe(false);
    if (!parsed.ok) {
      expect(parsed.line).toBe(line);
      expect(parsed.message).toContain(message);
    }
  });
});

describe('parsePlan', () => {
  it('takes checklist items in document order, nested too, each waiting for the one before', async () => {
    const source = ok(parsePlan(await fixture('IMPLEMENTATION_PLAN.md'), 'IMPLEMENTATION_PLAN.md'));
    expect(source.title).toBe('Parser rewrite');
    expect(source.items.map((i) => [i.title, i.done, i.line, i.dependsOn])).toEqual([
      ['Tokenise identifiers and numbers', true, 7, []],
      ['Tokenise strings, see spec', false, 8, ['Tokenise identifiers and numbers']],
      ['Escapes', false, 9, ['Tokenise strings, see [spec](specs/strings.md)']],
      ['Unterminated strings are an error', false, 11, ['Escapes']],
      ['Parse expressions', false, 15, ['Unterminated strings are an error']],
      ['Parse statements', true, 16, ['Parse expressions']],
    ]);
    const strings = source.items[1]!;
    expect(strings.description).toContain('[spec](specs/strings.md)');
    expect(strings.description).toContain('Section: Phase 1: lexer');
    const escapes = source.items[2]!;
    expect(escapes.description).toContain('Part of: Tokenise strings, see spec');
    expect(escapes.description).toContain('Keep \\u escapes as they are.');
  });

  it('gives repeated items distinct ids', () => {
    const source = ok(parsePlan('- [ ] Test\n- [ ] Test\n', 'p.md'));
    expect(source.items.map((i) => i.id)).toEqual(['Test', 'Test (2)']);
  });

  it.each([
    [
      'bad/IMPLEMENTATION_PLAN.md',
      "bad/IMPLEMENTATION_PLAN.md line 4: checkbox '[~]' is neither '[ ]' nor '[x]'",
    ],
  ])('refuses %s naming the line', async (name, message) => {
    expect(problems(parsePlan(await fixture(name), name))).toEqual([message]);
  });

  it.each([
    ['# Plan\n\nNothing yet.\n', "p.md: has no checklist items ('- [ ] item' or '- [x] item')"],
    ['- [ ]\n', 'p.md line 1: checklist item has no text'],
  ])('refuses %j', (text, message) => {
    expect(problems(parsePlan(text, 'p.md'))).toEqual([message]);
  });
});

describe('detectFormat', () => {
  it.each([
    ['prd.json', '{}', 'prd'],
    ['requirements.json', '[]', 'requirements'],
    ['IMPLEMENTATION_PLAN.md', '', 'plan'],
    ['stories.json', '{"userStories": []}', 'prd'],
    ['reqs.json', '[{"id": 1}]', 'requirements'],
    ['todo.md', '# x\n- [ ] a\n', 'plan'],
    ['login.md', '---\ntitle: x\n---\n', 'specs'],
    ['notes.md', '# just notes\n', undefined],
    ['data.json', '{"a": 1}', undefined],
  ])('%s → %s', (name, text, format) => {
    expect(detectFormat(name, text)).toBe(format);
  });
});

describe('markDone: one item, nothing else', () => {
  it('sets one story passes: true in prd.json, keeping every other byte', async () => {
    const text = await fixture('prd.json');
    const result = markDone('prd', text, 'US-002');
    expect(result.ok && result.text).toBe(text.replace(/("id": "US-002"[\s\S]*?"passes": )false/, '$1true'));
    expect(markDone('prd', text, 'US-001')).toEqual({ ok: true });
    expect(markDone('prd', text, 'US-999')).toEqual({ ok: false, reason: 'no user story has the id US-999' });
  });

  it('sets one requirement status "done"', async () => {
    const text = await fixture('requirements.json');
    const result = markDone('requirements', text, 'R3');
    expect(result.ok && result.text).toBe(text.replace('"status": "in_progress"', '"status": "done"'));
  });

  it('checks one box of the plan, CRLF kept', async () => {
    const text = (await fixture('IMPLEMENTATION_PLAN.md')).replaceAll('\n', '\r\n');
    const result = markDone('plan', text, 'Escapes');
    expect(result.ok && result.text).toBe(text.replace('  - [ ] Escapes', '  - [x] Escapes'));
  });

  it.each([
    [
      '---\npasses: false  # not yet\ntitle: t\n---\nbody\n',
      '---\npasses: true  # not yet\ntitle: t\n---\nbody\n',
    ],
    ['---\ntitle: t\n---\nbody\n', '---\ntitle: t\npasses: true\n---\nbody\n'],
    ['---\r\ntitle: t\r\npasses: no\r\n---\r\n', '---\r\ntitle: t\r\npasses: true\r\n---\r\n'],
  ])('sets passes: true in a spec: %j', (text, expected) => {
    expect(markDone('specs', text, 'x')).toEqual({ ok: true, text: expected });
  });
});

describe('draftImport', () => {
  it('gives each item a stable import: label that fits br (≤ 50 chars, no paths) and ranks priorities 1–4', async () => {
    const draft = draftImport(ok(parsePrd(await fixture('prd.json'), 'prd.json')), 'prd.json');
    const again = draftImport(ok(parsePrd(await fixture('prd.json'), 'prd.json')), 'prd.json');
    expect(draft.beads.map((b) => b.keyLabel)).toEqual(again.beads.map((b) => b.keyLabel));
    expect(new Set(draft.beads.map((b) => b.keyLabel)).size).toBe(4);
    for (const bead of draft.beads) {
      for (const label of bead.labels) expect(label).toMatch(/^[A-Za-z0-9_:-]{1,50}$/);
      expect(bead.labels).toContain('src:prd');
    }
    expect(draft.beads.map((b) => [b.key, b.priority])).toEqual([
      ['prd.json#US-001', 1],
      ['prd.json#US-002', 2],
      ['prd.json#US-004', 2],
      ['prd.json#US-003', 3],
    ]);
    expect(draft.beads[0]!.description).toContain('Imported from prd.json (item US-001)');
  });

  it('uses priority 2 for every bead of a format without priorities', async () => {
    const draft = draftImport(ok(parseRequirements(await fixture('requirements.json'), 'r.json')), 'r.json');
    expect(draft.beads.map((b) => b.priority)).toEqual([2, 2, 2, 2]);
  });
});

describe('parseJsonLocated', () => {
  it.each([
    ['{"a": 1,}', 1, 'expected a property name'],
    ['[1, 2', 1, "expected ',' or ']' after an array element, found the end of the file"],
    ['{\n"a": "\u0001"}', 2, 'unterminated or invalid string'],
    ['{"a": 1} x', 1, "unexpected 'x' after the JSON value"],
    ['\n\n  nope', 3, "expected a value, found 'n'"],
  ])('refuses %j at line %i', (text, line, message) => {
    const parsed = parseJsonLocated(text);
    expect(parsed).toEqual({ ok: false, line, message: expect.stringContaining(message) as string });
  });

  it('reads what JSON.parse reads', () => {
    const text = '{"a": [1, -2.5e3, "x\\n\\u00e9", true, false, null], "b": {}}';
    const toValue = (node: ReturnType<typeof parseJsonLocated>): unknown => node;
    expect(toValue(parseJsonLocated(text))).toMatchObject({ ok: true });
    const parsed = parseJsonLocated(text);
    if (!parsed.ok || parsed.root.kind !== 'object') throw new Error('not parsed');
    const a = parsed.root.entries.get('a');
    expect(a?.kind === 'array' && a.items.map((n) => ('value' in n ? n.value : null))).toEqual(
      (JSON.parse(text) as { a: unknown[] }).a,
    );
  });
});
