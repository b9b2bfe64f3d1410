// A test switched off or narrowed is found in each language's own words; a test that only mentions
// skipping, or a test runner's ordinary calls, is not.
import { describe, expect, it } from 'vitest';
import { silencedChecks } from '../../src/autoresearch/silenced-checks.js';
import { testSkips } from '../../src/autoresearch/test-skips.js';

const found = (text: string) => [...testSkips(`${text}\n`).keys()];

describe('testSkips', () => {
  it.each([
    ["it.skip('formats', () => {});", 'it.skip'],
    ["test.only('adds', () => {});", 'test.only'],
    ["describe.skipIf(isCI)('slow', () => {});", 'describe.skipIf'],
    ["xit('formats', () => {});", 'xit('],
    ["fdescribe('suite', () => {});", 'fdescribe('],
    ["test('formats', { skip: true }, () => {});", '{ skip: true'],
    ["test('formats', (t) => { t.skip('later'); });", 't.skip('],
    ['@pytest.mark.xfail(reason="flaky")', '@pytest.mark.xfail'],
    ["pytest.skip('not yet')", 'pytest.skip('],
    ['@unittest.skip("later")', '@unittest.skip'],
    ["self.skipTest('later')", 'self.skipTest('],
    ['t.Skip("flaky")', 't.Skip('],
    ['#[ignore]', '#[ignore]'],
    ['@Disabled("later")', '@Disabled'],
    ["  xit 'formats' do", 'xit'],
    ["$this->markTestSkipped('later');", '$this->markTestSkipped('],
  ])('finds %s', (line, key) => {
    expect(found(line)).toEqual([key]);
  });

  it('finds none in tests that run, nor in a mention of skipping', () => {
    const text = [
      "import { test } from 'node:test';",
      "test('skips blank lines', () => assert.equal(skip(' a'), 'a'));",
      "it('only counts once', () => expect(onlyOnce()).toBe(1));",
      'const options = { skipBlank: true };',
      'def test_skip_list(): assert skip_list([]) == []',
      'expect(mock.skip).not.toHaveBeenCalled();',
    ].join('\n');
    expect(found(text)).toEqual([]);
  });
});

describe('silencedChecks on test files', () => {
  it('reads a test file only for the tests it switched off: a mock in a test is no reach', () => {
    const before = "test('formats', () => assert.equal(f(), '01'));\n";
    const after =
      "vi.spyOn(Date, 'now');\nDate.now = () => 0;\ntest.skip('formats', () => assert.equal(f(), '01'));\n";
    expect(silencedChecks([{ path: 'test/f.test.mjs', before, after }])).toEqual([
      { kind: 'skips', path: 'test/f.test.mjs (test.skip)' },
    ]);
    // One it held before is the suite's.
    expect(silencedChecks([{ path: 'test/f.test.mjs', before: after, after: `${after}\n` }])).toEqual([]);
  });
});
