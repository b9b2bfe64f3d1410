// Files a test runner loads as tests, or as their setup: what a doer must not add, change or remove
// where the metric runs the tests (unless the loop says the doer may: a loop that writes tests).
//
// Changing the tests is the shortest way to a better test score. Seen, each kept or taken as the goal:
// a new `src/padding.test.mjs` of 92 passing tests that `node --test` found on its own (87.5% → 93%),
// a `src/conftest.py` whose collection hook emptied every test's body, the failing tests deleted from
// a scope that held them. The scope's own files are otherwise the doer's, so these need naming.

/**
 * Test files by name: JS/TS (every name `node --test`, bun and deno find on their own: `x.test.js`,
 * `x-test.js`, `x_test.js`, `test-x.js`, `test.js`, `x_spec.ts`; Cypress's `x.cy.ts`), Python, Go,
 * Ruby, Elixir, the JVM's, .NET's, Swift's and PHPUnit's `FooTest.java`, pytest's conftest.py, snapshot files, the setup files
 * jest and vitest run before the tests (create-react-app's `src/setupTests.js` without being named);
 * and the modules every Python process imports as it starts from a folder on its path
 * (`sitecustomize.py`, `usercustomize.py`): one in `src/`, which a metric run with `PYTHONPATH=src`
 * loads into pytest itself, made every test pass (seen: a worse 5 kept as 20 of 20).
 */
const TEST_NAME =
  /(?:(?:[._-](?:test|spec)|^test|\.cy)\.[cm]?[jt]sx?|[a-z0-9]Tests?\.(?:java|kt|scala|cs|swift|php)|_test\.exs|^test-[^/]*\.[cm]?[jt]sx?|^test_[^/]*\.(?:py|rb)|_test\.py|^conftest\.py|^(?:site|user)customize\.py|_test\.go|_(?:spec|test)\.rb|\.snap|^setupTests\.[cm]?[jt]sx?|^(?:jest|vitest)\.setup\.[cm]?[jt]sx?)$/;
/**
 * Folders that hold tests (and their helpers and fixtures), wherever they are, in either case (Swift's
 * and .NET's `Tests/`, a `MyApp.Tests/` project, `integration-tests/`): Go's `testdata/` (the golden
 * files a test compares against), the snapshots jest and vitest compare against, Playwright's and
 * Cypress's `e2e/` and `cypress/`.
 */
const TEST_DIR = /^(?:tests?|spec|__tests__|__mocks__|__snapshots__|testdata|e2e|cypress)$|[._-]tests?$/i;
/**
 * Test runners' own configuration, which says what runs and how, and the coverage tools' (which say
 * what counts: an `exclude` there raises a coverage score as surely as a test does).
 */
const RUNNER_CONFIG =
  /^(?:(?:vitest|jest|playwright|cypress|ava|karma)\.(?:config|conf)\.[cm]?[jt]s|vitest\.workspace\.[cm]?[jt]s|\.mocharc(?:\.[a-z]+)?|pytest\.ini|pytest\.toml|tox\.ini|\.rspec(?:-local)?|jasmine\.json|phpunit\.xml(?:\.dist)?|\.coveragerc|\.nycrc(?:\.[a-z]+)?|\.c8rc(?:\.[a-z]+)?)$/;

/** Whether `path` (relative, `/`-separated) is a test, a test helper or a test runner's configuration. */
export function isTestFile(path: string): boolean {
  const parts = path.split('/');
  const name = parts.at(-1) ?? '';
  return (
    TEST_NAME.test(name) || RUNNER_CONFIG.test(name) || parts.slice(0, -1).some((dir) => TEST_DIR.test(dir))
  );
}
