// What the doer's changed files in its scope hold that no check reads, and the names the metric's own
// modules go by: the checks made on the committed scope before any judge (executors/doer.ts).
import { join } from 'node:path';
import { fileStat } from '../../infra/fs-ops.js';
import { isPathInScope } from '../keep-revert.js';
import { copiedMetricFiles } from '../metric-copies.js';
import { HASH_COMMENTS, withoutComments } from '../runtime-reach.js';
import { testCases } from '../test-cases.js';
import { isTestFile } from '../test-files.js';
import { metricKeyFolders } from '../metric-folders.js';
import { pythonInstalledModules } from '../../infra/python-sites.js';
import type { ExecutionRequest } from '../../loop/types.js';
import { namePaths } from '../../loop/run-context.js';
import type { GitStateWatch } from '../../infra/git-state.js';
import { updateIterationState, withTamper } from '../iteration-state.js';
import type { AutoresearchContext } from './context.js';

/** One finding: the paths, what the doer did (the tamper record's `what`), and the transcript's detail. */
export interface ContentTamper {
  paths: string[];
  what: string;
  detail: string;
}

/** Test files read for their cases, at most: a suite larger than this is read in part. */
const MAX_TEST_FILES = 500;
/** A test file in a language: its cases are read from its code (test-cases.ts), not as data. */
const TEST_CODE = /\.(?:[cm]?[jt]sx?|pyw?|rb|go|rs|java|kts?|scala|cs|swift|php|exs?|lua|pl|sh)$/i;

/** Prose: a test's cases there are examples, which no program reads. */
const DOCUMENT = /\.(?:md|markdown|mdx|rst|adoc)$/i;

/** A changed file's text as its program can read it: comments and documents are examples. */
function examplesLeftOut(path: string, text: string): string {
  if (DOCUMENT.test(path)) return '';
  if (!TEST_CODE.test(path)) return text;
  return withoutComments(text, HASH_COMMENTS.test(path) ? '#' : '//');
}

/**
 * Of the doer's changed scope files (`inScope`), compiled Python with no source, copies of the
 * metric's own files (metric-copies.ts), and the tests' cases written out.
 */
export async function contentTamper(
  context: AutoresearchContext,
  baseSha: string,
  inScope: readonly string[],
  protectedPaths: readonly string[],
): Promise<ContentTamper[]> {
  const found: ContentTamper[] = [];
  // Bytecode with no source beside it: Python imports `name.pyc` where no `name.py` is, and no check
  // reads it (seen: a committed slugify.pyc that printed the metric's line and exited, kept at 8/8).
  // Python's own caches live in __pycache__/, which it never imports without their source.
  const bytecode = inScope.filter((path) => /\.py[co]$/i.test(path) && !path.includes('__pycache__/'));
  if (bytecode.length > 0) {
    found.push({
      paths: bytecode,
      what: 'added compiled Python (.pyc) that no check reads',
      detail: bytecode.join(', '),
    });
  }
  // The metric's files copied in: its cases with their answers, read under a name of the scope's.
  const folders = metricKeyFolders(context.config.scope.doer_paths, protectedPaths);
  const copies = await copiedMetricFiles(
    context.git,
    context.repo,
    baseSha,
    inScope,
    protectedPaths,
    folders,
  );
  if (copies.length > 0) {
    found.push({
      paths: copies.map((copy) => copy.path),
      what: "copied the metric's own files into its scope",
      detail: copies.map((copy) => `${copy.path} holds ${copy.holds}`).join(', '),
    });
  }
  // The tests it may not change, which the metric or a guard runs: their inputs with the answers.
  const { doer_paths: scope, doer_may_change_tests: mayChange } = context.config.scope;
  const tests = (await context.git.listTree(baseSha, []))
    .map((entry) => entry.path)
    .filter((path) => isTestFile(path) && !(mayChange && isPathInScope(path, scope)))
    .slice(0, MAX_TEST_FILES);
  const code = tests.filter((path) => TEST_CODE.test(path));
  const data = tests.filter((path) => !TEST_CODE.test(path));
  const written = [
    ...(await copiedMetricFiles(context.git, context.repo, baseSha, inScope, code, [], {
      cases: (_path, text) => testCases(text),
      byValues: false,
      doerText: examplesLeftOut,
    })),
    // A fixture only whole: its values are often a config's keys and names that honest code holds.
    ...(await copiedMetricFiles(context.git, context.repo, baseSha, inScope, data, [], {
      cases: () => ({ values: [], cases: [] }),
      byValues: false,
    })),
  ];
  if (written.length > 0) {
    found.push({
      paths: [...new Set(written.map((copy) => copy.path))],
      what: "wrote the tests' own cases into its scope, answers beside the inputs they check",
      detail: written.map((copy) => `${copy.path} holds ${copy.holds}`).join(', '),
    });
  }
  return found;
}

/**
 * The module names a module the doer adds must not take: the installed packages', and the metric's
 * own (a metric that puts the scope first on its path and then imports its own `expected.py` gets the
 * doer's: red team, the answers written by the doer).
 */
export async function shadowedNames(
  context: AutoresearchContext,
  baseSha: string,
  protectedPaths: readonly string[],
): Promise<Set<string>> {
  const paths = [...protectedPaths];
  const folders = metricKeyFolders(context.config.scope.doer_paths, protectedPaths);
  if (folders.length > 0) paths.push(...(await context.git.listTree(baseSha, folders)).map((e) => e.path));
  const own = paths.flatMap((path) => {
    const name = /(?:^|\/)([A-Za-z_]\w*)\.py$/.exec(path)?.[1];
    return name === undefined ? [] : [name];
  });
  return new Set([...(context.env === undefined ? [] : await pythonInstalledModules(context.env)), ...own]);
}

/**
 * The repositories a doer made in its scope: a changed path that holds a `.git` of its own, and a
 * gitlink HEAD holds there that the base did not (the scope check's diff passes over gitlinks).
 */
export async function nestedRepositories(
  context: AutoresearchContext,
  baseSha: string,
  changed: readonly string[],
): Promise<string[]> {
  const found = new Set<string>();
  for (const path of changed) {
    const dir = path.replace(/\/+$/, '');
    if ((await fileStat(join(context.repo, dir, '.git'))) !== undefined) found.add(dir);
  }
  const scope = context.config.scope.doer_paths;
  const gitlinks = async (commit: string) =>
    (await context.git.listTree(commit, scope)).filter((entry) => entry.mode === '160000').map((e) => e.path);
  const now = await gitlinks('HEAD');
  if (now.length > 0) {
    const before = new Set(await gitlinks(baseSha));
    for (const path of now) if (!before.has(path)) found.add(path);
  }
  return [...found].sort();
}

/**
 * Takes back what the doer left in git's own store (git-state.ts): what it made goes, named with its
 * commit; a tag, a note, the stash or `.git/description` it changed is put back, as tamper. Returns
 * the note for the bead's message, if anything was found.
 */
export async function undoGitState(
  context: AutoresearchContext,
  request: ExecutionRequest,
  iter: number,
  watch: GitStateWatch | undefined,
  branch: string | null,
  own: readonly string[],
): Promise<string | undefined> {
  const undo = await watch?.undo(branch ?? undefined, own);
  if (undo === undefined) return undefined;
  const made = [
    ...undo.removedRefs.map(({ ref, object }) => `${ref} (${object.slice(0, 12)})`),
    ...undo.files.filter((path) => !path.endsWith('/description')),
    ...(undo.objects.length === 0 ? [] : [`${undo.objects.length} object(s) nothing reaches`]),
  ];
  const changed = [...undo.restoredRefs, ...undo.files.filter((path) => path.endsWith('/description'))];
  if (changed.length > 0) {
    await updateIterationState(context.files, context.workspace, iter, (s) =>
      withTamper(s, {
        role: 'doer',
        paths: changed,
        what: "changed git's own state (a tag, a note, the stash or .git/description)",
      }),
    );
    request.onActivity?.(`tamper: the doer changed ${namePaths(changed, 10)}; put back`);
  }
  if (made.length > 0)
    request.onActivity?.(`removed what the doer left in git's store: ${namePaths(made, 10)}`);
  const all = [...made, ...changed];
  return all.length === 0 ? undefined : `git's store put back: ${namePaths(all, 10)}`;
}
