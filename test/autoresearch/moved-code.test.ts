// Code moved where a checker does not look (another extension, a vendored or generated folder) is
// found; code moved between files a checker reads alike, or into a stricter language, is not.
import { describe, expect, it } from 'vitest';
import { isConventionallyUnchecked, movedOutOfSight } from '../../src/autoresearch/moved-code.js';

const APP = [
  'function total(rows) {',
  '  var sum = 0;',
  '  for (var i = 0; i < rows.length; i++) sum += rows[i].amount;',
  '  return sum;',
  '}',
  'module.exports = { total };',
].join('\n');
const file = (path: string, before: string | undefined, after: string | undefined) => ({
  path,
  before,
  after,
});
const paths = (found: { path: string }[]) => found.map((f) => f.path);

describe('movedOutOfSight', () => {
  it.each([
    ['src/app.js', 'src/app.cjs'],
    ['src/app.ts', 'src/app.js'],
    ['src/app.py', 'src/app.txt'],
    ['src/app.js', 'src/vendor/app.js'],
    ['src/app.ts', 'src/generated/app.ts'],
    ['src/app.js', 'src/app.min.js'],
  ])('a file renamed from %s to %s', (from, to) => {
    expect(paths(movedOutOfSight([file(from, APP, undefined), file(to, undefined, APP)]))).toEqual([
      `${to} (moved from ${from})`,
    ]);
  });

  it('most of a file moved into a vendored one, the rest left behind', () => {
    const left = 'const { total } = require("./vendor/lib.js");\nmodule.exports = { total };\n';
    expect(
      paths(
        movedOutOfSight([
          file('src/app.js', APP, left),
          file('src/vendor/lib.js', 'exports.other = 1;\n', `exports.other = 1;\n${APP}`),
        ]),
      ),
    ).toEqual(['src/vendor/lib.js (moved from src/app.js)']);
  });

  it('leaves a move between files checked alike, into a stricter language, or code written anew', () => {
    expect(
      movedOutOfSight([file('src/app.js', APP, undefined), file('src/lib/app.js', undefined, APP)]),
    ).toEqual([]);
    expect(movedOutOfSight([file('src/app.js', APP, undefined), file('src/app.ts', undefined, APP)])).toEqual(
      [],
    );
    expect(
      movedOutOfSight([file('src/app.jsx', APP, undefined), file('src/app.tsx', undefined, APP)]),
    ).toEqual([]);
    expect(
      movedOutOfSight([file('src/app.ts', APP, undefined), file('src/app.tsx', undefined, APP)]),
    ).toEqual([]);
    expect(movedOutOfSight([file('src/fast.cc', APP, '\n'), file('src/fast.h', '\n', APP)])).toEqual([]);
    // Two lines in common: not enough to call it moved while the file stays.
    const two = APP.split('\n').slice(1, 3).join('\n');
    expect(
      movedOutOfSight([
        file('src/app.js', APP, APP.replace(two, '')),
        file('src/vendor/x.js', undefined, two),
      ]),
    ).toEqual([]);
    // Code new in a vendored file, none of it taken from elsewhere.
    expect(movedOutOfSight([file('src/vendor/x.js', undefined, APP.replaceAll('sum', 'acc'))])).toEqual([]);
    // Vendored code moved within the vendored tree.
    expect(
      movedOutOfSight([file('vendor/a.js', APP, undefined), file('vendor/b/a.js', undefined, APP)]),
    ).toEqual([]);
  });
});

describe('isConventionallyUnchecked', () => {
  it('knows the folders and names checkers leave out, by a whole folder name', () => {
    expect(isConventionallyUnchecked('src/third_party/x.c')).toBe(true);
    expect(isConventionallyUnchecked('src/__generated__/schema.ts')).toBe(true);
    expect(isConventionallyUnchecked('api/foo_pb2.py')).toBe(true);
    expect(isConventionallyUnchecked('src/builder/x.ts')).toBe(false);
    expect(isConventionallyUnchecked('src/dist.ts')).toBe(false);
  });
});
