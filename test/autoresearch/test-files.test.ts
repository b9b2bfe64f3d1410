// What counts as a test file: what a test runner would load as a test, a test helper or its setup.
import { describe, expect, it } from 'vitest';
import { isTestFile } from '../../src/autoresearch/test-files.js';

describe('isTestFile', () => {
  it.each([
    'src/padding.test.mjs',
    'src/parser.spec.ts',
    'src/Button.test.tsx',
    'lib/x.test.cjs',
    'src/conftest.py',
    'conftest.py',
    'pkg/test_parse.py',
    'pkg/parse_test.py',
    'cmd/main_test.go',
    'lib/widget_spec.rb',
    'test/helpers.mjs',
    'tests/fixtures/cases.json',
    'src/__tests__/a.js',
    'src/__mocks__/fs.js',
    'spec/support.rb',
    'vitest.config.ts',
    'jest.config.cjs',
    '.mocharc.yml',
    'pytest.ini',
    'src/sitecustomize.py',
    'usercustomize.py',
    'src/setupTests.ts',
    'jest.setup.js',
    'vitest.setup.mts',
    'src/__snapshots__/App.test.tsx.snap',
    'src/render.snap',
    'pkg/parse/testdata/expected.golden',
  ])('%s is one', (path) => expect(isTestFile(path)).toBe(true));

  it.each([
    'src/slugify.mjs',
    'src/testing.ts',
    'src/contest.py',
    'src/latest/x.js',
    'src/test.md.bak',
    'docs/testing.md',
    'src/tests.ts',
    'src/spec.ts',
    'package.json',
    'src/mysitecustomize.py',
    'src/sitecustomize.pyc.txt',
    'src/setup.ts',
    'src/snapshot.ts',
    'src/data/cases.json',
  ])('%s is not', (path) => expect(isTestFile(path)).toBe(false));
});
