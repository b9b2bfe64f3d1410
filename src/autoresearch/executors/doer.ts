// The doer: a full-tools agent makes one improvement; the runner then checks where HEAD went, guards
// its scope and commits it.
import { resolve } from 'node:path';
import type { Executor } from '../../loop/types.js';
import { namePaths } from '../../loop/run-context.js';
import { removeRefusedPaths, removeSpecialFiles, removeUncommittable } from '../../infra/uncommittable.js';
import {
  extractHypothesis,
  readIterationState,
  updateIterationState,
  withTamper,
} from '../iteration-state.js';
import {
  guardDoerChanges,
  isPathInScope,
  keepIteration,
  snapshotWorkingTree,
  type WorkingTreeSnapshot,
} from '../keep-revert.js';
import { recordSpend } from '../spend.js';
import { recordedBranch, recordHead } from '../loop-head.js';
import { heldCommandFiles } from '../run-outputs.js';
import { snapshotSubmodules } from '../submodules.js';
import { doerPinRef, pinSaved } from '../kept-refs.js';
import { isTestFile } from '../test-files.js';
import { loadedInProcess } from '../loaded-code.js';
import { disallowedSilencing } from '../scope-silencing.js';
import { linksLeadingOut } from '../../infra/contained-path.js';
import { recordTreeMetadata } from '../../infra/tree-metadata.js';
import { watchGitState } from '../../infra/git-state.js';
import { shadowingModules } from '../module-shadows.js';
import { metricKeyFolders } from '../metric-folders.js';
import { bookkeepingPaths, placeInLoop, type AutoresearchContext } from './context.js';
import { runGuardStep } from './guard-step.js';
import { keepOutOversized } from './doer-size.js';
import { contentTamper, nestedRepositories, shadowedNames, undoGitState } from './doer-content.js';

/** What the iteration's tamper says, for each kind of silencing (scope-silencing.ts). */
const SILENCED = [
  ['checks', "silenced a checker (a suppression comment, or a checker's settings)"],
  ['tests', "changed the test runner's settings"],
  ['tools', 'changed the settings of a tool the metric runs'],
  [
    'runtime',
    "reached into the process measuring it (patched its runtime, reached what tests it, named the metric's own files, or printed or ended the process from code the metric loads)",
  ],
  ['skips', 'switched tests off or narrowed them (.skip, .only, xfail): a skipped test counts neither way'],
  [
    'judge',
    'wrote to the judge in what it judges (an instruction, a note to a model or a grader, a score, a turn of a chat, or hidden characters)',
  ],
] as const;

export function createDoerExecutor(context: AutoresearchContext): Executor {
  return {
    kind: 'doer',
    // The doer's work is committed here, scoped and named by iteration, not by the runner's --auto-commit.
    writesCode: false,
    // Its work is judged by the loop's metric and guards, not by the repo's gates.
    runsGates: false,
    async execute(request) {
      const placed = placeInLoop(request.bead);
      if (!placed.ok) return placed.result;
      const { iter } = placed;
      const { git, workspace } = context;

      // The base, the branch and the user's uncommitted work are recorded once per iteration, before its
      // first attempt, so a retried or resumed doer is judged against the tree it really started from.
      let state = await readIterationState(context.files, workspace, iter);
      // A doer after its iteration's judge (a bead another agent made, or dependencies rewired) would
      // change the tree the arbiter keeps after it was measured (found by the red team).
      if (state.judged_head !== undefined) {
        return {
          outcome: 'error',
          fatal: true,
          agent: 'doer',
          message: `Iteration ${iter} was judged already (at ${state.judged_head.slice(0, 10)}): a doer after its judge is no part of the cycle. Close ${request.bead.id} (it was not stamped by Forge's cycle, or its dependencies were changed) and run again.`,
        };
      }
      if (state.base_sha === undefined || state.user_snapshot === undefined) {
        const taken = await snapshotWorkingTree(git);
        const branch = (await recordedBranch(context.files, workspace, git)) ?? taken.branch ?? null;
        state = await updateIterationState(context.files, workspace, iter, (s) => ({
          ...s,
          base_sha: taken.headSha,
          branch,
          doer_started_at: new Date(context.clock.now()).toISOString(),
          user_snapshot: { head_sha: taken.headSha, files: Object.fromEntries(taken.files) },
        }));
      }
      const baseSha = state.base_sha ?? '';
      const branch = state.branch ?? null;
      const snapshot: WorkingTreeSnapshot = {
        headSha: state.user_snapshot?.head_sha ?? baseSha,
        files: new Map(Object.entries(state.user_snapshot?.files ?? {})),
      };
      // The saved blobs are objects nothing reaches: pinned, so a `git gc` while the doer runs cannot
      // take the user's files with it (fault injection). Again on each attempt: cheap, and it covers a
      // run killed between the snapshot and its pin.
      await pinSaved(git, doerPinRef(workspace), snapshot.files);
      const ignored = bookkeepingPaths(context);
      // Less the runs' outputs (a build's), which the doer may build: the ignored guard puts them back.
      const protectedPaths = await heldCommandFiles({ ...context, tree: context.repo });

      const where = { baseSha, branch, snapshot, ignored, protectedPaths, iter };
      // Every attempt starts from the iteration's base: what an earlier attempt left is undone first.
      await putBack(context, { ...where, everything: true });

      const submodules = await snapshotSubmodules(
        git,
        context.gitAt,
        context.repo,
        baseSha,
        context.config.scope.doer_paths,
      );
      // What git does not keep of the tree (modes, times, links) is put back after the commit (tree-metadata.ts).
      const metadata = await recordTreeMetadata(context.repo, await git.listTree('HEAD', []), ignored);
      const gitState = await watchGitState(git); // and what it leaves in git's own store (git-state.ts)
      // A finding of this iteration's doer, recorded as tamper in its state.
      const tamper = (paths: string[], what: string) =>
        updateIterationState(context.files, workspace, iter, (s) =>
          withTamper(s, { role: 'doer', paths, what }),
        );
      const result = await context.agents.full.execute(request);
      const inSubmodules = await submodules.restore();
      if (inSubmodules.length > 0) {
        await tamper(inSubmodules, 'changed a submodule outside its scope');
        request.onActivity?.(`tamper: the doer changed ${inSubmodules.join('; ')}; put back`);
      }
      const homeTamper = result.tampered ?? [];
      await updateIterationState(context.files, workspace, iter, (s) => {
        const spent = { ...s, costs: { ...s.costs, doer: (s.costs.doer ?? 0) + (result.costUsd ?? 0) } };
        // Files later runs load (instruction files, git and tool config, installed dependencies), which the
        // agent executor put back or, for dependencies, holds the loop on:
        // an iteration that wrote them is tamper, never judged or kept.
        return homeTamper.length === 0
          ? spent
          : withTamper(spent, {
              role: 'doer',
              paths: homeTamper,
              what: 'changed a file later agent or metric runs load',
            });
      });
      await recordSpend(context.files, workspace, 'doer', result);
      if (result.outcome !== 'ok') return result;

      // Where HEAD went: a doer may commit on the loop's branch, nothing else.
      const moved = await putBack(context, { ...where, everything: false });
      // Before any guard or commit reads them whole.
      const oversized = await keepOutOversized(context, { ...where, userFiles: snapshot.files }, request);
      const guard = await guardDoerChanges({
        git,
        baseSha,
        allowedPaths: context.config.scope.doer_paths,
        protectedPaths,
        message: `autoresearch iter ${iter}: guard reverted changes outside the doer's scope`,
        snapshot,
        ignoredPaths: ignored,
      });
      if (guard.unrestored.length > 0) {
        // Pinned under refs/forge/saved (gone only if that ref was deleted and pruned), or too large to copy.
        const what = 'changed files of yours outside its scope that Forge has no copy of to put back';
        await tamper(guard.unrestored, what);
        request.onActivity?.(`tamper: the doer ${what}: ${guard.unrestored.join(', ')}; left as found`);
      }
      const metric = new Set(protectedPaths);
      const guarded = guard.violations.map((v) => v.path);
      const touchedMetric = guarded.filter((path) => metric.has(path));
      const outside = guarded.filter((path) => !metric.has(path));
      if (touchedMetric.length > 0) {
        await tamper(touchedMetric, 'changed a metric file');
      }
      // What the doer changed in its scope (the rest is reverted above); the user's own uncommitted
      // files, dirty before the doer started, are theirs.
      const scopeChanges = (guard.treeChanges ?? (await git.changedSince(baseSha))).filter(
        ({ path }) =>
          isPathInScope(path, context.config.scope.doer_paths) &&
          !isPathInScope(path, ignored) &&
          !snapshot.files.has(path),
      );
      const inScope = scopeChanges.map((change) => change.path);
      // The tests are the metric's, wherever they sit: in the scope too, unless the loop says otherwise.
      const tests = context.config.scope.doer_may_change_tests ? [] : inScope.filter(isTestFile);
      if (tests.length > 0) {
        await tamper(tests, 'added, changed or removed test files');
        request.onActivity?.(`tamper: the doer changed test file(s) ${tests.join(', ')}`);
      }
      // What no check reads: compiled Python with no source, the metric's own files copied in.
      for (const found of await contentTamper(context, baseSha, inScope, protectedPaths)) {
        await tamper(found.paths, found.what);
        request.onActivity?.(`tamper: the doer ${found.what}: ${found.detail}`);
      }
      // A checker told to look away (a suppression comment, its settings) counts less without the code
      // getting better, and a guard that runs one passes the same way (silenced-checks.ts).
      // A doer that may write tests has its test files read for tests it switched off (test-skips.ts).
      const readable = inScope.filter(
        (path) => !isTestFile(path) || context.config.scope.doer_may_change_tests,
      );
      const silenced = await disallowedSilencing(
        git,
        context.repo,
        baseSha,
        readable,
        context.config.scope,
        protectedPaths,
        (then) => loadedInProcess(context.config, context.repo, protectedPaths, then),
        judgedBySoftJudge(context.config),
      );
      for (const [kind, what] of SILENCED) {
        const paths = silenced.filter((found) => found.kind === kind).map((found) => found.path);
        if (paths.length === 0) continue;
        await tamper(paths, what);
        request.onActivity?.(`tamper: the doer ${what}: ${paths.join(', ')}`);
      }
      // What git ignores decides what is committed: a doer that ignored the file holding its work had
      // the judge measure a tree the kept commit did not hold (found by the red team).
      const rules = inScope.filter((path) => /(?:^|\/)\.git(?:ignore|attributes)$/.test(path));
      if (rules.length > 0) {
        await tamper(rules, 'changed what git ignores or how it reads files');
        request.onActivity?.(`tamper: the doer changed ${rules.join(', ')}`);
        // Undone now, with what the rules hid: the first pass takes a rule away, and only then does git
        // show the files it hid, for the second to remove (no revert would ever see them).
        for (let pass = 0; pass < 2; pass += 1) {
          await putBack(context, { ...where, everything: true });
        }
      }
      // A repository of its own in the scope: git keeps a link to its commit, which no clone can fetch,
      // and no check reads its files (seen: a JSON.stringify patch committed inside src/impl/ and
      // imported from src/lib.mjs, kept at 1000 for a worse 5).
      // A module added under the name of one of Python's own is imported in its place.
      const added = scopeChanges.filter((c) => c.change === 'added' || c.change === 'untracked');
      const shadows = await shadowingModules(
        context.repo,
        added.map((c) => c.path),
        () => shadowedNames(context, baseSha, protectedPaths),
      );
      if (shadows.length > 0) {
        await tamper(
          shadows,
          "added a module under the name of one of Python's standard library or of an installed package",
        );
        request.onActivity?.(`tamper: the doer added ${shadows.join(', ')}, named as Python's own modules`);
      }
      const nested = await nestedRepositories(context, baseSha, inScope);
      if (nested.length > 0) {
        await tamper(nested, 'made a git repository inside its scope');
        request.onActivity?.(`tamper: the doer made a git repository at ${nested.join(', ')}; removed`);
        await putBack(context, { ...where, everything: true });
      }
      if (outside.length > 0) {
        const kept = guard.keptUnder === undefined ? '' : `; what was there is kept under ${guard.keptUnder}`;
        request.onActivity?.(
          `guard reverted ${outside.length} change(s) outside scope: ${outside.join(', ')}${kept}`,
        );
      }
      if (touchedMetric.length > 0) {
        request.onActivity?.(`tamper: the doer changed metric file(s) ${touchedMetric.join(', ')}; put back`);
      }
      // What fails the commit attempt after attempt goes: a FIFO for a tracked file, a name like `git~1`.
      const special = await removeSpecialFiles(context.repo, context.config.scope.doer_paths, ignored);
      const refused = await removeRefusedPaths(
        context.repo,
        ((await git.untrackedBytes?.(context.config.scope.doer_paths)) ?? []).filter(
          (entry) => !snapshot.files.has(entry.toString('utf8')),
        ),
      );
      // The doer's own commits become Forge's one (DESIGN: commits are mechanical): their messages and the
      // trees between them are no part of the change, yet the artifact read them back (`git show
      // HEAD~1:src/answers.json`, a flag in a message). What they left goes with the doer's objects.
      if ((await git.headSha()) !== baseSha) await git.resetSoft(baseSha);
      const kept = await keepIteration({
        git,
        scopePaths: context.config.scope.doer_paths,
        message: `autoresearch iter ${iter}: ${request.bead.title}`,
        ignoredPaths: ignored,
      });
      await recordHead(context.files, workspace, git);
      // No commit holds empty folders or non-UTF-8 names: they go, as a clean clone lacks them too.
      const uncommittable = [
        ...refused,
        ...(await removeUncommittable(
          context.repo,
          (await git.untrackedBytes?.(context.config.scope.doer_paths)) ?? [],
        )),
        ...special,
      ];
      const { modes } = await metadata.settle(await git.listTree('HEAD', []));
      if (modes.length > 0)
        request.onActivity?.(`put back the modes the doer changed: ${namePaths(modes, 10)}`);
      const keptNow = guard.keptUnder === undefined ? [] : [guard.keptUnder];
      const inGit = await undoGitState(context, request, iter, gitState, branch, keptNow);
      if (uncommittable.length > 0)
        request.onActivity?.(`removed what git cannot commit: ${uncommittable.join(', ')}`);
      const hypothesis = extractHypothesis(result.finalText) ?? firstLine(result.finalText);
      await updateIterationState(context.files, workspace, iter, (s) => ({
        ...s,
        hypothesis: hypothesis ?? s.hypothesis,
        doer_head: kept.headSha,
        guard_reverted_paths: [...new Set([...s.guard_reverted_paths, ...outside])],
      }));
      // Guards run on the committed tree, before any judge; a doer that tampered is not judged anyway.
      const tamperedNow = (await readIterationState(context.files, workspace, iter)).tamper.some(
        (r) => r.role === 'doer',
      );
      const checked = tamperedNow ? { aborted: false as const } : await runGuardStep(context, request, iter);
      if (checked.aborted) return { outcome: 'aborted', message: 'The guards were stopped.', agent: 'guard' };
      const notes = [
        checked.aborted ? undefined : checked.note,
        kept.commitSha === undefined
          ? 'no new changes to commit'
          : `committed ${kept.commitSha.slice(0, 10)}`,
        outside.length > 0 ? `guard reverted ${outside.join(', ')}` : undefined,
        uncommittable.length > 0 ? `removed what git cannot commit: ${uncommittable.join(', ')}` : undefined,
        oversized,
        touchedMetric.length > 0 ? `metric file(s) put back: ${touchedMetric.join(', ')}` : undefined,
        modes.length > 0 ? `modes put back: ${namePaths(modes, 10)}` : undefined,
        inGit,
        ...moved,
      ].filter((note) => note !== undefined);
      const tampered = [...(result.tampered ?? []), ...touchedMetric];
      return {
        ...result,
        message: `${result.message} (${notes.join('; ')})`,
        closeReason: `doer-${iter} done: ${hypothesis ?? 'no hypothesis given'}`.slice(0, 500),
        ...(tampered.length > 0 ? { tampered } : {}),
      };
    },
  };
}

interface PutBackOptions {
  baseSha: string;
  branch: string | null;
  snapshot: WorkingTreeSnapshot;
  ignored: readonly string[];
  protectedPaths: readonly string[];
  iter: number;
  /** Before an attempt: also drop the doer's own commits and edits in scope (a clean start). */
  everything: boolean;
}

/**
 * Puts HEAD back where a doer may leave it: on the loop's branch, at or after the base. A switched
 * branch, rewritten history (amend, rebase, reset past the base) and links in scope that lead out of
 * the repository are undone and recorded as tamper; returns notes for the bead's message.
 */
async function putBack(context: AutoresearchContext, o: PutBackOptions): Promise<string[]> {
  const { git, workspace } = context;
  const notes: string[] = [];
  const tamper = async (paths: string[], what: string) => {
    notes.push(`${what}: undone`);
    await updateIterationState(context.files, workspace, o.iter, (s) =>
      withTamper(s, { role: 'doer', paths, what }),
    );
  };
  const state = await git.headState();
  const current = state.branch ?? null;
  let head = state.sha;
  if (o.branch !== null && current !== o.branch) {
    // The loop's branch renamed or deleted: made again where HEAD is (history past the base is undone below).
    const gone = (await git.resolveCommit(`refs/heads/${o.branch}`)) === undefined;
    await git.attachHead(o.branch, head);
    const what = gone ? `renamed or deleted ${o.branch}` : `switched away from ${o.branch}`;
    if (!o.everything) await tamper([`HEAD (${current ?? 'detached'})`], what);
    head = await git.headSha(); // the branch's own commit, now that HEAD is on it again
  }
  if (head !== o.baseSha && !(await git.isAncestor(o.baseSha, head))) {
    await git.resetSoft(o.baseSha);
    if (!o.everything) await tamper(['HEAD'], 'rewrote history past the base commit');
  } else if (o.everything && head !== o.baseSha) {
    await git.resetSoft(o.baseSha); // a failed attempt's commits: the next attempt starts from the base
  }
  // Asked once: what happens before the put-back below only reads the tree, or writes the iteration's
  // state in the workspace, which the put-back leaves alone.
  const changed = (await git.changedSince(o.baseSha)).map((c) => c.path);
  const changedInScope = changed.filter((path) => isPathInScope(path, context.config.scope.doer_paths));
  // Into git's own directory or Forge's too: a score resting on `.git/description` (seen: a worse 10
  // kept as 1000) is no commit's, and no check reads what is there. Nor onto the metric's own files:
  // `src/table.json → ../metric/cases.json` read the answer key under a name of the scope (red team).
  const closed = [
    await git.gitDir(),
    await git.commonDir(),
    ...o.ignored.map((path) => resolve(context.repo, path)),
    ...o.protectedPaths.map((path) => resolve(context.repo, path)),
    ...metricKeyFolders(context.config.scope.doer_paths, o.protectedPaths).map((path) =>
      resolve(context.repo, path),
    ),
  ];
  const links = await linksLeadingOut(context.repo, changedInScope, closed);
  if (links.length > 0 && !o.everything)
    await tamper(
      links,
      "made a link that leads out of the repository, into its git or Forge files, or onto the metric's",
    );
  if (o.everything || links.length > 0) {
    // Scope content back to the base (the user's own uncommitted files as they were).
    const inScope = changed.filter(
      (path) =>
        (o.everything || links.includes(path)) &&
        isPathInScope(path, context.config.scope.doer_paths) &&
        !isPathInScope(path, o.ignored) &&
        !o.snapshot.files.has(path),
    );
    const inBase = await git.pathsInCommit(o.baseSha, inScope);
    await git.removePaths(inScope.filter((path) => !inBase.has(path)));
    await git.checkoutPathsFrom(
      o.baseSha,
      inScope.filter((path) => inBase.has(path)),
    );
    const user = new Map(
      [...o.snapshot.files].filter(([path]) => isPathInScope(path, context.config.scope.doer_paths)),
    );
    if (o.everything && user.size > 0) await git.writeSavedFiles(user);
  }
  return notes;
}

function firstLine(text: string | undefined): string | undefined {
  const line = text
    ?.split('\n')
    .map((l) => l.trim())
    .find((l) => l !== '');
  return line === undefined ? undefined : line.slice(0, 200);
}

/** Whether a soft judge reads `path` (the artifact and the judge's paths); none for a hard metric. */
function judgedBySoftJudge(config: AutoresearchContext['config']): (path: string) => boolean {
  const metric = config.metric;
  if (metric.type !== 'soft') return () => false;
  const read = [...config.scope.judge_paths, metric.artifact_path];
  return (path) => isPathInScope(path, read);
}
