// What an agent run leaves in the files git does not see, for the guard around every agent run of a
// loop (state-guard.ts): the ignored files of the loop's tree, and of the agent's own when that is one
// of the loop's worktrees (a population candidate's), sorted, put back, removed or recorded
// (dependency-guard.ts, ignored-guard.ts); and the index flags and forged index entries that hide a
// tracked file's change from git.
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ContentHashes } from '../infra/content-hashes.js';
import { FileCopies, MAX_COPIED_FILE } from '../infra/file-copies.js';
import type { VaultLayout } from '../infra/file-vault.js';
import type { IndexFlags } from '../infra/git.js';
import { changedFiles, type IgnoredFiles } from '../infra/ignored-files.js';
import { removePath } from '../infra/fs-ops.js';
import { sizeOf } from '../infra/verified-read.js';
import {
  changedDependencies,
  changedStoreFiles,
  forbiddenChanges,
  nameSome,
  noteChangedFiles,
  removeWrittenCaches,
  snapshotIgnored,
  type ChangedKind,
} from './dependency-guard.js';
import { undoIgnoredChanges } from './ignored-guard.js';
import { changedSinceMarker, isRunWritten, writeMarker } from './measured-data.js';
import { fingerprintOutside, namedOutsidePaths } from './outside-data.js';
import { isOutput, readRunOutputs } from './run-outputs.js';
import type { StateGuardContext } from './state-guard.js';

/** What the guard found once an agent ended. */
export interface IgnoredOutcome {
  /** Tracked files whose index flags the agent changed, named as findings (the flags are set back). */
  hidden: string[];
  /** The dependencies and ignored files it changed that cannot be put back, and their record. */
  lost: { findings: string[]; record: () => Promise<void> } | undefined;
}

/** One agent run: begun before it starts, ended once it is over. */
export interface IgnoredRound {
  end(role: string, vault: VaultLayout, say: (line: string) => void): Promise<IgnoredOutcome>;
  /**
   * The index entries the agent forged, exposed and named as findings. Hashing a file runs the clean
   * filter git's config names for it: call this once the agent's git config is put back.
   */
  forged(): Promise<string[]>;
}

/** The guard of a loop's ignored files, keeping its hashes and copies for the life of the runner. */
export function createIgnoredGuard(ctx: StateGuardContext): {
  begin(agentCwd: string): Promise<IgnoredRound>;
} {
  // The trees whose ignored files are guarded around an agent run: the loop's, and the one the agent
  // works in when that is another (a population candidate's worktree, where its metric runs too). For
  // each, what its installed dependencies hold, hashed once per file and identity for this process (the
  // first agent run reads them all, a later one what changed since), and copies of its other ignored
  // files, to put back what an agent changes there.
  const kept = new Map<string, IgnoredTree>();
  const treeAt = (cwd: string, main: boolean): IgnoredTree => {
    let tree = kept.get(cwd);
    if (tree === undefined) {
      const guard = main ? ctx : { ...ctx, cwd, git: ctx.gitAt!(cwd), outside: false };
      tree = {
        guard,
        main,
        contents: new ContentHashes(cwd),
        copies: new FileCopies(cwd),
        hashes: new ContentHashes(cwd, MAX_HASHED_OTHERS),
      };
      kept.set(cwd, tree);
    }
    return tree;
  };
  // The agent's tree is guarded apart only when it is one of the loop's own worktrees, which live in
  // git's common directory (a candidate's): a soft judge's checkout in the temp directory has no git,
  // and one inside some other repository (a home kept in git) is not the loop's to touch.
  let commonDir: Promise<string | undefined> | undefined;
  const ignoredTrees = async (agentCwd: string): Promise<IgnoredTree[]> => {
    const own = resolve(agentCwd);
    const common = await (commonDir ??= ctx.git.commonDir().catch(() => undefined));
    const within = (dir: string) => !relative(dir, own).startsWith('..') && !isAbsolute(relative(dir, own));
    const apart =
      ctx.gitAt !== undefined && common !== undefined && within(resolve(ctx.cwd, common)) && own !== ctx.cwd;
    const trees = [treeAt(ctx.cwd, true), ...(apart ? [treeAt(own, false)] : [])];
    // A candidate's worktree is gone once its iteration is decided: what was kept for it goes too.
    for (const cwd of kept.keys()) if (!trees.some((tree) => tree.guard.cwd === cwd)) kept.delete(cwd);
    return trees;
  };
  return {
    async begin(agentCwd) {
      const trees = await ignoredTrees(agentCwd);
      // What a runner killed during an agent run left changed of the loop's tree's data (its copies died
      // with it: seen, a doer that wrote the answer key and killed the runner was kept at 100 on the rerun).
      const marker = agentRunMarker(ctx);
      const interrupted = await changedSinceMarker(ctx.cwd, marker);
      const ignored = await Promise.all(trees.map((tree) => primeIgnored(tree)));
      const flags = await Promise.all(trees.map((tree) => readIndexFlags(tree)));
      // What the loop's runs write (run-outputs.ts; a doer runs the metric by hand) is no data of its.
      // A loop made before the record holds no data, so leaves no marker.
      const outputs = await readRunOutputs(ctx.files, ctx.workspace);
      const data = outputs === undefined ? undefined : ignored[0]?.others;
      if (data !== undefined && outputs !== undefined)
        await writeMarker(
          marker,
          new Map(
            [...data].filter(
              ([path]) => !isRunWritten(path, ctx.config.scope.rebuilt_paths) && !isOutput(outputs, path),
            ),
          ),
        );
      return {
        async end(role, vault, say) {
          // Index flags an agent set (or cleared) are set back first: what they hid, git sees again.
          const hidden: string[] = [];
          for (const [index, tree] of trees.entries())
            hidden.push(...(await restoreIndexFlags(tree, flags[index])));
          const lost = { dependencies: new Set<string>(), others: new Set<string>(interrupted) };
          if (interrupted.length > 0)
            say(
              `found ${nameSome(interrupted)} changed by an agent run whose runner was killed: the copies died with it`,
            );
          for (const [index, tree] of trees.entries()) {
            const found = await checkIgnored(tree, role, ignored[index], vault, say);
            found?.dependencies.forEach((path) => lost.dependencies.add(path));
            found?.others.forEach((path) => lost.others.add(path));
          }
          await removePath(marker);
          return { hidden, lost: lostFindings(ctx, role, [...lost.dependencies], [...lost.others]) };
        },
        async forged() {
          const found: string[] = [];
          for (const tree of trees) found.push(...(await exposeForgedEntries(tree)));
          return found;
        },
      };
    },
  };
}

/**
 * Where the loop's tree's data identities wait while an agent runs (the runner's own, written and
 * removed around the run: no agent's change).
 */
export function agentRunMarker(ctx: Pick<StateGuardContext, 'vaultDir'>): string {
  return join(ctx.vaultDir, 'agent-run-data.json');
}

/** A tree whose ignored files are guarded, and what the runner keeps of them. */
interface IgnoredTree {
  guard: StateGuardContext;
  /** The loop's own tree: its findings are named relative to it, another tree's absolute. */
  main: boolean;
  contents: ContentHashes;
  copies: FileCopies;
  /** Hashes of the other ignored files too large to copy: rewritten with the same bytes, no change. */
  hashes: ContentHashes;
}

/** How much of the ignored files too large to copy is hashed ahead, per tree and runner process. */
const MAX_HASHED_OTHERS = 1 << 30;

/** A tree's ignored files before an agent runs, with their hashes and copies brought up to date. */
async function primeIgnored(tree: IgnoredTree): Promise<IgnoredFiles | undefined> {
  const ignored = await snapshotWithData(tree);
  if (ignored !== undefined) {
    await tree.contents.prime(ignored.dependencies);
    await tree.copies.prime(ignored.others);
    await tree.hashes.prime(new Map([...ignored.others].filter(([, id]) => sizeOf(id) > MAX_COPIED_FILE)));
  }
  return ignored;
}

/**
 * The tree's ignored files, and for the loop's own tree the data outside the repository that the
 * loop's commands name (outside-data.ts), as absolute paths among the others: an agent that edits the
 * dataset the metric reads (seen: a doer that wrote its answer into the answer key outside the
 * repository, kept at 100 from 0, the user's dataset left holding it) has it put back as it would a
 * file git ignores.
 */
async function snapshotWithData(tree: IgnoredTree): Promise<IgnoredFiles | undefined> {
  const files = await snapshotIgnored(tree.guard);
  if (files === undefined || !tree.main) return files;
  const ctx = tree.guard;
  const named = await namedOutsidePaths(ctx.config, ctx.cwd, [ctx.cwd, ctx.repo], ctx.env);
  for (const [path, id] of fingerprintOutside(named)) files.others.set(path, id);
  return files;
}

/** A tree's index flags; undefined when its git cannot say. */
async function readIndexFlags(tree: IgnoredTree): Promise<Map<string, IndexFlags> | undefined> {
  return tree.guard.git.indexFlags === undefined
    ? undefined
    : tree.guard.git.indexFlags().catch(() => undefined);
}

/**
 * Sets back the index flags an agent changed in a tree (`update-index --skip-worktree` or
 * `--assume-unchanged` on a tracked file makes status and diff pass over whatever it holds, so no
 * scope check would see the change). Returns the paths, each named as a finding: "<path> (hidden
 * from git)".
 */
async function restoreIndexFlags(
  tree: IgnoredTree,
  before: Map<string, IndexFlags> | undefined,
): Promise<string[]> {
  const git = tree.guard.git;
  if (before === undefined || git.setIndexFlags === undefined) return [];
  const after = (await readIndexFlags(tree)) ?? new Map<string, IndexFlags>();
  const none: IndexFlags = { skipWorktree: false, assumeUnchanged: false };
  const changed = new Map<string, IndexFlags>();
  for (const path of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(path) ?? none;
    const now = after.get(path) ?? none;
    if (was.skipWorktree !== now.skipWorktree || was.assumeUnchanged !== now.assumeUnchanged)
      changed.set(path, was);
  }
  if (changed.size === 0) return [];
  await git.setIndexFlags(changed);
  return [...changed.keys()]
    .sort()
    .map((path) => `${tree.main ? path : join(tree.guard.cwd, path)} (hidden from git)`);
}

/**
 * Index entries an agent forged in a tree (stat data of its new file beside the old blob, so status and
 * diff take the file for unchanged; seen: a doer's edit of the metric's helper module kept at ten
 * times its score) lose their stat data, and git sees the change again. Named like a flag's finding.
 */
async function exposeForgedEntries(tree: IgnoredTree): Promise<string[]> {
  const git = tree.guard.git;
  if (git.exposeForgedEntries === undefined) return [];
  return (await git.exposeForgedEntries()).map(
    (path) => `${tree.main ? path : join(tree.guard.cwd, path)} (hidden from git)`,
  );
}

/**
 * What an agent left in a tree's ignored files (dependency-guard.ts, ignored-guard.ts): the caches it
 * wrote are removed, its other ignored files put back or removed. Returns the dependencies it changed,
 * and the ignored files that cannot be undone, outside a doer's scope.
 */
async function checkIgnored(
  tree: IgnoredTree,
  role: string,
  before: IgnoredFiles | undefined,
  vault: VaultLayout,
  say: (line: string) => void,
): Promise<{ dependencies: string[]; others: string[] } | undefined> {
  const ctx = tree.guard;
  const after = before === undefined ? undefined : await snapshotWithData(tree);
  if (before === undefined || after === undefined) return undefined;
  const allowed = role === 'doer' ? ctx.config.scope.doer_paths : [];
  const named = (paths: readonly string[]) =>
    tree.main ? [...paths] : paths.map((path) => (isAbsolute(path) ? path : join(ctx.cwd, path)));
  // The files the vault guards (tool settings, agent instructions) are put back by it, as tamper.
  const vaultFiles = new Set(vault.files);
  const unguarded = (files: ReadonlyMap<string, string>) =>
    new Map(
      [...files].filter(([path]) => {
        const at = isAbsolute(path) ? path : join(ctx.cwd, path);
        return !vaultFiles.has(at) && !vault.dirs.some((dir) => at.startsWith(dir + sep));
      }),
    );
  const removed = await removeWrittenCaches(ctx, before, after);
  if (removed.length > 0)
    say(
      `removed the caches the ${role} wrote to (${nameSome(named(removed))}): their tools rebuild them from the sources`,
    );
  const othersBefore = unguarded(before.others);
  const othersAfter = unguarded(after.others);
  // Rewritten with the same bytes and mode (a `touch`, a step that writes the same output): only its
  // times are put back.
  const rewritten = changedFiles(othersBefore, othersAfter).filter(
    (path) => othersBefore.has(path) && othersAfter.has(path),
  );
  const differ = new Set(await tree.hashes.contentChanged(othersBefore, othersAfter, rewritten));
  // A doer's scope is no exception: git keeps no ignored file, so what it made there is not its commit's.
  const undo = await undoIgnoredChanges(ctx.cwd, othersBefore, othersAfter, tree.copies, {
    rebuilt: ctx.config.scope.rebuilt_paths,
    sameBytes: new Set(rewritten.filter((path) => !differ.has(path))),
  });
  if (undo.restored.length > 0)
    say(`put back the ignored files the ${role} changed (${nameSome(named(undo.restored))}) as they were`);
  if (undo.removed.length > 0)
    say(
      `removed the ignored files the ${role} made or changed (${nameSome(named(undo.removed))}): build outputs and files the metric writes again`,
    );
  const dependencies = [
    ...forbiddenChanges(
      await changedDependencies(before.dependencies, after.dependencies, tree.contents),
      allowed,
    ),
    ...changedFiles(before.programs, after.programs),
    ...changedStoreFiles(ctx, before, after),
  ];
  return { dependencies: named(dependencies), others: named(undo.lost) };
}

/**
 * The findings for the dependencies and ignored files an agent changed and Forge cannot put back, and
 * the record that holds the loop until a person has looked; undefined when there are none.
 */
function lostFindings(
  ctx: StateGuardContext,
  role: string,
  dependencies: readonly string[],
  others: readonly string[],
): { findings: string[]; record: () => Promise<void> } | undefined {
  const lost = [...dependencies, ...others];
  if (lost.length === 0) return undefined;
  const what: ChangedKind =
    dependencies.length === 0
      ? 'ignored files'
      : others.length === 0
        ? 'installed dependencies'
        : 'installed dependencies and ignored files';
  const shown = lost.slice(0, FINDINGS_SHOWN);
  const more = lost.length - shown.length;
  return {
    findings:
      more > 0
        ? [...shown, `${more} more ${what === 'ignored files' ? 'ignored' : 'installed dependency'} files`]
        : shown,
    record: () => noteChangedFiles(ctx, role, what, lost),
  };
}

/** How many of the dependency files an agent changed a tamper record names. */
const FINDINGS_SHOWN = 10;
