// A doer that tells a checker to look away (a suppression comment, a checker's settings, a manifest's
// checker section) is found; one that moves code carrying a suppression, or changes other sections, is not.
import { describe, expect, it } from 'vitest';
import { isCheckerConfig, silencedChecks, suppressions } from '../../src/autoresearch/silenced-checks.js';

const changed = (path: string, before: string | undefined, after: string | undefined) => ({
  path,
  before,
  after,
});
const paths = (found: { path: string }[]) => found.map((f) => f.path);

describe('suppressions', () => {
  it.each([
    ['// eslint-disable-next-line no-console', 'eslint-disable-next-line no-console'],
    ['/* eslint-disable */', 'eslint-disable'],
    ['foo(); // eslint-disable-line', 'eslint-disable-line'],
    ['/* eslint no-unused-vars: "off" */', '/* eslint no-unused-vars: "off" */'],
    ['/* global jQuery, $ */', '/* global jQuery, $ */'],
    ['/* exported init */', '/* exported init */'],
    ['// @ts-ignore', '@ts-ignore'],
    ['// @ts-expect-error: the type is wrong', '@ts-expect-error: the type is wrong'],
    ['/* istanbul ignore next */ function f() {}', 'istanbul ignore next'],
    ['/* c8 ignore start */', 'c8 ignore start'],
    ['// biome-ignore lint/style: reason', 'biome-ignore lint/style: reason'],
    ['x = 1  # noqa: E501', '# noqa: E501'],
    ['x = f()  # type: ignore[arg-type]', '# type: ignore[arg-type]'],
    ['# pylint: disable=too-many-branches', '# pylint: disable=too-many-branches'],
    ['# ruff: noqa', '# ruff: noqa'],
    ['# mypy: ignore-errors', '# mypy: ignore-errors'],
    ['if x:  # pragma: no cover', '# pragma: no cover'],
    ['    return 1 # nosec', '# nosec'],
    ['func f() { //nolint:errcheck', '//nolint:errcheck'],
    ['//lint:ignore SA1019 reason', '//lint:ignore SA1019 reason'],
    ['#[allow(dead_code)]', '#[allow(dead_code)]'],
    ['#![allow(clippy::all)]', '#![allow(clippy::all)]'],
    ['#![cfg_attr(feature = "x", allow(dead_code))]', '#![cfg_attr(feature = "x", allow(dead_code))]'],
    ['#[cfg_attr(coverage_nightly, coverage(off))]', '#[cfg_attr(coverage_nightly, coverage(off))]'],
    ['# rubocop:disable Metrics/MethodLength', 'rubocop:disable Metrics/MethodLength'],
    ['# shellcheck disable=SC2086', 'shellcheck disable=SC2086'],
    ['@SuppressWarnings("unchecked") public void f() {', '@SuppressWarnings("unchecked")'],
    ['@file:Suppress("UNUSED")', '@file:Suppress("UNUSED")'],
    ['int x; // NOLINT(readability-magic-numbers)', 'NOLINT(readability-magic-numbers)'],
    ['#pragma GCC diagnostic ignored "-Wunused"', '#pragma GCC diagnostic ignored "-Wunused"'],
    ['#pragma warning disable CS0168', '#pragma warning disable CS0168'],
    ['[ExcludeFromCodeCoverage]', '[ExcludeFromCodeCoverage]'],
    ['/** @codeCoverageIgnore */', '@codeCoverageIgnore'],
    ['// LCOV_EXCL_LINE', 'LCOV_EXCL_LINE'],
    ['// ReSharper disable once UnusedVariable', 'ReSharper disable once UnusedVariable'],
    ['// clang-format off', 'clang-format off'],
    ['# yapf: disable', '# yapf: disable'],
    ['// ignore_for_file: avoid_print', '// ignore_for_file: avoid_print'],
  ])('finds %s', (line, key) => {
    expect([...suppressions(`${line}\n`).keys()]).toEqual([key]);
  });

  it('finds nothing in ordinary code and comments', () => {
    const code = [
      'const ignore = true; // ignore the cache when stale',
      'def cover(x):  # the type is ignored by callers',
      'x = allow(1)',
      'return noqa_count',
      '@Override',
      'const NOLINTING = 1; // a name that holds a marker',
    ].join('\n');
    expect(suppressions(code).size).toBe(0);
  });
});

describe("a type checker's escape hatches, in the languages that have them", () => {
  it.each([
    ['src/a.ts', 'const n = (value as any).count;', 'as any'],
    ['src/a.tsx', 'return props as unknown as Props;', 'as unknown as'],
    ['src/a.mts', 'const n = <any>value;', '<any>'],
    ['src/a.ts', 'function f(x: any) {}', ': any'],
    ['src/a.ts', 'let rows: any[] = [];', ': any'],
    ['src/a.vue', 'const n = x as any;', 'as any'],
    ['app/m.py', 'n = cast(Any, value)', 'cast(Any,'],
    ['app/m.py', 'n = typing.cast("Any", value)', 'cast("Any",'],
    ['src/A.cs', '#nullable disable', '#nullable disable'],
  ])('%s: finds %s', (path, line, key) => {
    expect([...suppressions(`${line}\n`, path).keys()]).toEqual([key]);
  });

  it('finds none in prose, in generics of other types, or in a language without them', () => {
    const ts = [
      '// such as any other value',
      'const list: Array<string> = [];',
      'type T = { many: number };',
      'const company = anyone as Person;',
      'function f(x: unknown): string {}',
    ].join('\n');
    expect(suppressions(ts, 'src/a.ts').size).toBe(0);
    expect(suppressions('const n = value as any;\n', 'src/a.js').size).toBe(0);
    expect(suppressions('def f(x: Any) -> Any: ...\n', 'app/m.py').size).toBe(0);
  });

  it('names an added one as it does a suppression comment', () => {
    const found = silencedChecks([
      changed(
        'src/a.ts',
        'export const n = parse(raw).count;\n',
        'export const n = (parse(raw) as any).count;\n',
      ),
    ]);
    expect(found).toEqual([{ kind: 'checks', path: 'src/a.ts (as any)' }]);
  });
});

describe('silencedChecks', () => {
  it('names each suppression a file holds more often than before', () => {
    const before = 'a()\n// eslint-disable-next-line no-console\nconsole.log(1)\n';
    const after = `${before}// eslint-disable-next-line no-console\nconsole.log(2)\n/* eslint-disable */\n`;
    expect(silencedChecks([changed('src/a.js', before, after)])).toEqual([
      { kind: 'checks', path: 'src/a.js (eslint-disable-next-line no-console)' },
      { kind: 'checks', path: 'src/a.js (eslint-disable)' },
    ]);
    // A new file's count from nothing.
    expect(paths(silencedChecks([changed('src/b.py', undefined, 'x = 1  # noqa\n')]))).toEqual([
      'src/b.py (# noqa)',
    ]);
  });

  it('reads code the metric loads for what prints or ends its process, and other code not', () => {
    const lib = 'export function work() {\n  return 1;\n}\n';
    const cheat = `console.log('{"value":1e9}');\nprocess.exit(0);\n${lib}`;
    const loaded = { now: new Set(['src/lib.mjs']), then: new Set(['src/lib.mjs']) };
    const files = [changed('src/lib.mjs', lib, cheat), changed('src/cli.mjs', lib, cheat)];
    expect(silencedChecks(files, [], loaded)).toEqual([
      { kind: 'runtime', path: 'src/lib.mjs (console.log)' },
      { kind: 'runtime', path: 'src/lib.mjs (process.exit)' },
    ]);
    // What it held before is its own: a loaded file that always printed may go on printing.
    expect(silencedChecks([changed('src/lib.mjs', cheat, `${cheat}// faster\n`)], [], loaded)).toEqual([]);
    // Unless the metric did not load it before: all it says runs in the metric's process only now.
    const cli = { now: new Set(['src/cli.mjs']), then: new Set<string>() };
    expect(silencedChecks([changed('src/cli.mjs', cheat, cheat)], [], cli)).toEqual([
      { kind: 'runtime', path: 'src/cli.mjs (console.log)' },
      { kind: 'runtime', path: 'src/cli.mjs (process.exit)' },
    ]);
  });

  it('closes a reach cut at its open bracket, so the path reads as one: (os._exit(…)), (os.kill(os.getpid…))', () => {
    const after = 'import os\nos._exit(0)\nos.kill(os.getpid(), 9)\nvalue = __import__("json")\n';
    expect(paths(silencedChecks([changed('src/a.py', 'import os\n', after)]))).toEqual([
      'src/a.py (os._exit(\u2026))',
      'src/a.py (os.kill(os.getpid\u2026))',
      'src/a.py (__import__(\u2026))',
    ]);
  });

  it('lets one move within a file, be removed, or narrow nothing it did not hold', () => {
    const before = 'f()  # type: ignore\ng()\n';
    expect(silencedChecks([changed('a.py', before, 'g()\n    f()  # type: ignore\n')])).toEqual([]);
    expect(silencedChecks([changed('a.py', before, 'f()\ng()\n')])).toEqual([]);
    // A broader one in place of a narrow one is another suppression.
    expect(paths(silencedChecks([changed('a.py', 'f()  # noqa: E501\n', 'f()  # noqa\n')]))).toEqual([
      'a.py (# noqa)',
    ]);
  });

  it('takes one a removed file held, moved to another file, as moved; once, not twice', () => {
    const old = '// @ts-ignore\nf()\n';
    expect(
      silencedChecks([changed('src/old.ts', old, undefined), changed('src/new.ts', undefined, old)]),
    ).toEqual([]);
    expect(
      paths(
        silencedChecks([
          changed('src/old.ts', old, undefined),
          changed('src/new.ts', undefined, old),
          changed('src/other.ts', 'g()\n', '// @ts-ignore\ng()\n'),
        ]),
      ),
    ).toEqual(['src/other.ts (@ts-ignore)']);
    // A file that is still there gives no credit: the same suppression added elsewhere is added.
    expect(
      paths(
        silencedChecks([
          changed('src/a.ts', old, 'f()\n'),
          changed('src/b.ts', 'g()\n', '// @ts-ignore\ng()\n'),
        ]),
      ),
    ).toEqual(['src/b.ts (@ts-ignore)']);
  });

  it("names a checker's settings file added, changed or removed at any depth", () => {
    expect(
      paths(
        silencedChecks([
          changed('src/.eslintrc.json', undefined, '{"rules":{}}'),
          changed('src/pkg/ruff.toml', 'x', 'y'),
          changed('lib/.rubocop.yml', 'AllCops: {}', undefined),
          changed('src/tsconfig.json', '{}', '{}'),
        ]),
      ),
    ).toEqual(['src/.eslintrc.json', 'src/pkg/ruff.toml', 'lib/.rubocop.yml']);
    expect(isCheckerConfig('src/app/.golangci.yml')).toBe(true);
    expect(isCheckerConfig('src/tsconfig.build.json')).toBe(true);
    expect(isCheckerConfig('src/config.json')).toBe(false);
  });

  it("names a manifest's changed checker and test-runner sections, and leaves its others", () => {
    const pyproject = [
      '[project]',
      'name = "x"',
      'version = "1.0"',
      '',
      '[tool.ruff.lint]',
      'select = ["E", "F"]',
      '',
      '[tool.pytest.ini_options]',
      'addopts = "-q"',
    ].join('\n');
    const bumped = pyproject.replace('1.0', '1.1');
    expect(silencedChecks([changed('pyproject.toml', pyproject, bumped)])).toEqual([]);
    // Whitespace, blank lines and comments in a checker's section change none of its settings.
    const restyled = pyproject.replace(
      'select = ["E", "F"]',
      '# the rules we hold to\nselect  =  ["E", "F"]   \n\n',
    );
    expect(silencedChecks([changed('pyproject.toml', pyproject, restyled)])).toEqual([]);
    expect(
      paths(silencedChecks([changed('setup.cfg', '[flake8]\nignore =\n  E1\n', '[flake8]\nignore =\nE1\n')])),
    ).toEqual(['setup.cfg ([flake8])']);
    expect(
      silencedChecks([
        changed(
          'pyproject.toml',
          pyproject,
          bumped.replace('["E", "F"]', '["F"]').replace('"-q"', '"-q --deselect tests/test_a.py"'),
        ),
      ]),
    ).toEqual([
      { kind: 'checks', path: 'pyproject.toml ([tool.ruff.lint])' },
      { kind: 'tests', path: 'pyproject.toml ([tool.pytest.ini_options])' },
    ]);
    // A section added counts as much as one changed.
    expect(
      paths(
        silencedChecks([
          changed('setup.cfg', '[metadata]\nname = x\n', '[metadata]\nname = x\n[flake8]\nignore = E\n'),
        ]),
      ),
    ).toEqual(['setup.cfg ([flake8])']);
    expect(
      paths(
        silencedChecks([
          changed(
            'crates/a/Cargo.toml',
            '[package]\nname="a"\n',
            '[package]\nname="a"\n[lints.clippy]\nall="allow"\n',
          ),
        ]),
      ),
    ).toEqual(['crates/a/Cargo.toml ([lints.clippy])']);
    const pkg = { name: 'x', version: '1.0.0', jest: { testPathIgnorePatterns: [] } };
    expect(
      silencedChecks([
        changed(
          'packages/x/package.json',
          JSON.stringify(pkg),
          JSON.stringify({
            ...pkg,
            version: '1.0.1',
            eslintConfig: { rules: {} },
            jest: { testPathIgnorePatterns: ['slow'] },
          }),
        ),
      ]),
    ).toEqual([
      { kind: 'tests', path: 'packages/x/package.json ("jest")' },
      { kind: 'checks', path: 'packages/x/package.json ("eslintConfig")' },
    ]);
  });
});
