// The loop's own state belongs to the runner: which of its files an agent may change (none that decide a
// score), the branch and HEAD the loop stands on, and the loop's caps, checked before every bead.
//
// Around every agent run the loop's files are snapshotted in memory (out of every agent's reach) and
// anything the agent changed that its role may not change is put back and recorded as tamper; what git
// does not see (ignored files, environments outside the tree, index flags) is ignored-trees.ts's. Between
// beads, when a bead ends and between runs the seal (loop-seal.ts) tells the runner's writes from
// anybody else's: settings a person changed are recorded in the ledger, anything else is put back.
import { basename, isAbsolute, join, resolve, sep } from 'node:path';
import type { Bead } from '../beads/types.js';
import { relativeName } from '../infra/seal-journal.js';
import { changedPaths, restoreSnapshot, takeSnapshot, type VaultLayout } from '../infra/file-vault.js';
import type { Git } from '../infra/git.js';
import {
  gitControlPaths,
  isGitControlPath,
  presentMarkers,
  readModes,
  restoreModes,
  type GitControlPaths,
} from '../infra/git-control.js';
import { toolConfigPaths } from '../infra/tool-config.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { BeadGuard, Executor, GuardVeto, StopReason } from '../loop/types.js';
import type { LoopConfig } from './config.js';
import { readIterationState, updateIterationState, withTamper } from './iteration-state.js';
import { changedFilesLeft } from './dependency-guard.js';
import { questionWaits, userWorkInScope } from './bead-vetoes.js';
import { agentRunMarker, createIgnoredGuard } from './ignored-trees.js';
import { isPathInScope, revertIteration } from './keep-revert.js';
import { agentInstructionPaths } from './judge-checkout.js';
import { watchLooseObjects } from '../infra/loose-objects.js';
import { loadLedgerSummary } from './ledger-summary.js';
import { heldCommandFiles } from './run-outputs.js';
import { createLoopSeal, workspaceRelative } from './loop-seal.js';
import { writeTerminalSignal } from './signals.js';
import { readSpend } from './spend.js';
import { iterOf } from '../infra/labels.js';
import { loopRoleOf } from './loop-beads.js';
import { checkHead, recordHead } from './loop-head.js';
import { candidateFiles, candidateOf } from './candidates.js';
import type { BeadStore } from '../beads/types.js';
import { bookkeepingPaths } from './executors/context.js';
import { snapshotSubmodules } from './submodules.js';
import { describeTreeChange, restoreTree, snapshotTree, type TreeChange } from './tree-snapshot.js';

export interface StateGuardContext {
  /** The repository root the workspace lives in. */
  repo: string;
  /** The working tree the agents work in (the repository, or the loop's worktree). */
  cwd: string;
  /** Absolute path of the workspace. */
  workspace: string;
  /**
   * The loop's state files. The snapshots, seals and restores of the loop's files below stay on the
   * real disk (infra/file-vault.ts): they guard the tree the agents really write to.
   */
  files: LoopFiles;
  config: LoopConfig;
  epicId: string;
  store: BeadStore;
  git: Git;
  now: () => number;
  /** Where the seal and its copies live (in git's common directory, outside the watched files). */
  vaultDir: string;
  /** The person moved HEAD on purpose: take the current HEAD as the loop's. */
  acceptHead?: boolean;
  /**
   * The environment agents run in: where the user's git and tool config is (HOME, XDG_CONFIG_HOME,
   * GIT_CONFIG_*, npm_config_userconfig). Without it only the repository's own files are guarded.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** Git in another working tree (a population candidate's worktree). */
  gitAt?: (cwd: string) => Git;
  /** Whether the environments outside the tree are watched from this context (default: yes). */
  outside?: boolean;
  warn?: (message: string) => void;
}

/** Roles whose agent may write these workspace entries (relative to the workspace). */
const AGENT_WRITES: Record<string, readonly string[]> = {
  strategist: ['directives/', 'needs-human.md', 'needs-human.asked.json'],
  'resume-strategist': ['directives/', 'needs-human.md', 'needs-human.asked.json'],
  retrospective: ['retrospective.md', 'rubric-suggestions.md'],
};
/** Derived caches a role's own `forge-pack` calls may refresh: put back silently, never a finding. */
const QUIET_FOR: Record<string, readonly string[]> = {
  strategist: ['ledger-summary.json'],
  'resume-strategist': ['ledger-summary.json'],
  retrospective: ['ledger-summary.json'],
};
/** Roles that never touch the bead store; for them `.beads/` is guarded too. */
const STORE_GUARDED_ROLES = new Set(['doer', 'judge']);
/**
 * In a loop only the doer changes the tree. Every other agent bead of its epic works in the loop's files
 * or nowhere: the strategists, the retrospective, and any bead of another role or none (one a strategist
 * made with `forge-pack beads create`, which ran between doer-2 and judge-2 and rewrote the artifact
 * with a score of its own: found by the red team). A tracked file one of them changed would be judged
 * as the doer's work, or taken by the next doer for the user's, and scored with it. The doer's tree is
 * the doer's guard's (keep-revert.ts), the soft judge's the judge's (judge.ts).
 */
function treeGuarded(role: string): boolean {
  return role !== 'doer' && role !== 'judge';
}

async function guardedFiles(ctx: StateGuardContext): Promise<string[]> {
  // A build's output the loop's runs write is not the metric's: what an agent does to it is the ignored guard's.
  const held = await heldCommandFiles({ ...ctx, tree: ctx.cwd });
  const inTree = held.map((path) => resolve(ctx.cwd, path));
  return [...inTree, join(ctx.repo, '.forge', 'config.json'), join(ctx.repo, '.forge', 'loops.json')];
}

function mayWrite(
  ctx: StateGuardContext,
  role: string,
  path: string,
  table: Record<string, readonly string[]>,
) {
  const rel = workspaceRelative(ctx, path);
  if (rel === undefined) return false;
  return (table[role] ?? []).some((entry) => (entry.endsWith('/') ? rel.startsWith(entry) : rel === entry));
}

/** A guarded path as findings name it: relative inside the repository, absolute outside (~/.gitconfig). */
function findingName(repo: string, path: string): string {
  const name = relativeName(repo, path);
  return name.startsWith('../') || isAbsolute(name) ? path : name;
}

/** The iteration a role's tamper is recorded on: the one whose ledger line is still to be written. */
function tamperIteration(role: string, iter: number | undefined): number | undefined {
  if (iter === undefined) return undefined;
  if (role === 'doer' || role === 'judge') return iter;
  if (role === 'strategist' || role === 'resume-strategist') return iter + 1;
  return undefined;
}

/** What the loop may still spend, when it has a budget: its cap less every agent run counted so far. */
export async function budgetLeft(
  ctx: Pick<StateGuardContext, 'config' | 'workspace' | 'files'>,
): Promise<number | undefined> {
  const cap = ctx.config.caps.max_cost_usd;
  if (cap <= 0) return undefined;
  const { summary } = await loadLedgerSummary(ctx.files, join(ctx.workspace, 'research-log.jsonl'), {
    direction: ctx.config.metric.direction,
    target: ctx.config.target,
  });
  const spent = Math.max((await readSpend(ctx.files, ctx.workspace)).cost_usd, summary.total_cost_usd);
  return cap - spent;
}

/**
 * Wraps an agent executor: the loop's files are snapshotted around each run and put back if changed,
 * and the run gets what is left of the loop's budget (a CLI that can enforce it stops there).
 */
export function guardAgentExecutor(inner: Executor, ctx: StateGuardContext): Executor {
  // Git's own configuration and hooks: no agent of a loop may change them (see infra/git-control.ts).
  let control: Promise<GitControlPaths> | undefined;
  const gitControl = () =>
    (control ??= Promise.all([ctx.git.gitDir(), ctx.git.commonDir()]).then(
      ([gitDir, commonDir]) => gitControlPaths(gitDir, commonDir, ctx.env ?? {}),
      (error: unknown) => {
        control = undefined;
        throw error;
      },
    ));
  // In the repository, the loop's tree and the one this agent works in (a population candidate's):
  // what the metric's tools read besides the tree (infra/tool-config.ts), and the instructions and
  // settings the next agent's CLI would load (CLAUDE.local.md, .claude/, AGENTS.md, …), often ignored
  // so no scope check sees them. One the doer's scope names is left to it: the user chose that.
  const projectFiles = async (agentCwd: string): Promise<{ files: string[]; dirs: string[] }> => {
    const trees = [...new Set([ctx.repo, ctx.cwd, agentCwd])];
    const inScope = (path: string) => isPathInScope(path, ctx.config.scope.doer_paths);
    const instructions = trees.map(agentInstructionPaths);
    // Above the trees and in the home too (tool-config.ts): cargo's, pytest's, Go's, Gradle's, …
    const tools = await toolConfigPaths(trees, ctx.env ?? {}, inScope);
    const open = (path: string) => !inScope(basename(path));
    return {
      files: [...tools.files, ...instructions.flatMap((paths) => paths.files).filter(open)],
      dirs: [...tools.dirs, ...instructions.flatMap((paths) => paths.dirs).filter(open)],
    };
  };
  const ignoredGuard = createIgnoredGuard(ctx);
  return {
    ...inner,
    async execute(request) {
      const role = request.role;
      const left = await budgetLeft(ctx);
      if (left !== undefined && left <= 0) {
        return {
          outcome: 'budget',
          message: `The loop's budget of $${ctx.config.caps.max_cost_usd} is spent; no agent was started.`,
        };
      }
      const git = await gitControl();
      const project = await projectFiles(request.cwd);
      const layout: VaultLayout = {
        repo: ctx.repo,
        // The runner's own copy (the seal) too: a forged copy would be "restored" over the real files.
        dirs: [
          ctx.workspace,
          ctx.vaultDir,
          ...(STORE_GUARDED_ROLES.has(role) ? [join(ctx.repo, '.beads')] : []),
          ...git.dirs,
          ...project.dirs,
        ],
        files: [...(await guardedFiles(ctx)), ...git.files, ...project.files],
      };
      const before = await takeSnapshot(layout);
      // A hook is as much its mode as its text: `chmod +x` alone arms one.
      const modes = await readModes([...before.keys()].filter((path) => isGitControlPath(git, path)));
      const markers = await presentMarkers(git);
      const ignoredRound = await ignoredGuard.begin(request.cwd);
      const treeBefore = treeGuarded(role) ? await snapshotTree(ctx.git) : undefined;
      // Their submodules too: git's status passes over a submodule's files (see submodules.ts).
      const submodulesBefore = treeGuarded(role)
        ? await snapshotSubmodules(ctx.git, ctx.gitAt, ctx.cwd, 'HEAD', [])
        : undefined;
      const objects = await watchLooseObjects(ctx.git, `the ${role}`);
      const result = await inner.execute(left === undefined ? request : { ...request, budgetUsd: left });
      // First, so HEAD and the tracked files are back before the loop's own files are compared.
      const treeChange =
        treeBefore === undefined
          ? undefined
          : await restoreTree(
              ctx.git,
              treeBefore,
              bookkeepingPaths({ repo: ctx.cwd, workspace: ctx.workspace }),
            );
      if (treeChange?.keptUnder !== undefined) {
        // Someone else's work can be in it (a commit the user made while the agent ran): never lost.
        request.onActivity?.(
          `put back the tree as it was before the ${role}; what was undone is kept under ${treeChange.keptUnder} (git log ${treeChange.keptUnder}/head, git show ${treeChange.keptUnder}/files/…)`,
        );
      }
      const treeFindings = [
        ...(treeChange === undefined ? [] : treeChangeNames(treeChange)),
        ...((await submodulesBefore?.restore()) ?? []),
      ];
      const { hidden, lost: ignoredChange } = await ignoredRound.end(role, layout, (line) =>
        request.onActivity?.(line),
      );
      const ignoredFindings = ignoredChange?.findings ?? [];
      const modesNow = await readModes([...modes.keys()]);
      const rearmed = [...modes].filter(([path, mode]) => (modesNow.get(path) ?? mode) !== mode);
      // A marker of a git operation the agent left (MERGE_HEAD, rebase-merge/, …) goes whole, whatever
      // it is: an empty directory or one named like a file holds no content the snapshot would see.
      const leftMarkers = [...(await presentMarkers(git))].filter((path) => !markers.has(path));
      const changed = [
        ...new Set([
          ...changedPaths(before, await takeSnapshot(layout)).filter(
            (path) => !leftMarkers.some((marker) => path.startsWith(`${marker}${sep}`)),
          ),
          ...rearmed.map(([path]) => path),
          ...leftMarkers,
        ]),
      ]
        .sort()
        .filter((path) => !mayWrite(ctx, role, path, AGENT_WRITES) && path !== agentRunMarker(ctx));
      await restoreSnapshot(before, changed);
      await restoreModes(modes, changed);
      // Each loose object the agent wrote, or rewrote, is what it is named: git would check a rewritten
      // one out as it was rewritten, for the loop and for the user after it.
      for (const line of await objects.check()) request.onActivity?.(line);
      // Only now, with git's config as it was: finding forged entries hashes files through its filters.
      const forged = await ignoredRound.forged();
      const undone = [...hidden, ...forged];
      if (
        changed.length === 0 &&
        ignoredFindings.length === 0 &&
        undone.length === 0 &&
        treeFindings.length === 0
      )
        return result;
      // Recorded in the vault once the vault is as it was, or the record would be put back as tamper.
      await ignoredChange?.record();
      const findings = [
        ...new Set([
          ...treeFindings,
          ...changed
            .filter((path) => !mayWrite(ctx, role, path, QUIET_FOR))
            .map((path) => findingName(ctx.repo, path)),
          ...ignoredFindings,
          ...undone,
        ]),
      ];
      if (findings.length === 0) return result;
      const iter = tamperIteration(role, iterOf(request.bead));
      if (iter !== undefined) {
        // A population's candidate keeps its own state: its tamper is its own, not its siblings'.
        const candidate = candidateOf(request.bead);
        const files =
          candidate === undefined ? ctx.files : candidateFiles(ctx.files, ctx.workspace, iter, candidate);
        // Where HEAD had gone is not in the names: said once, in the record's `what`.
        const what = treeChange?.headMoved
          ? describeTreeChange({ ...treeChange, paths: [], indexChanged: false })
          : undefined;
        await updateIterationState(files, ctx.workspace, iter, (state) =>
          withTamper(state, { role, paths: findings, ...(what === undefined ? {} : { what }) }),
        );
      }
      request.onActivity?.(
        `tamper: the ${role} changed ${findings.join(', ')}; ${ignoredFindings.length === 0 ? 'put back' : 'the loop stops before its next agent bead'}`,
      );
      return { ...result, tampered: [...(result.tampered ?? []), ...findings] };
    },
  };
}

/** What a tree change is named by in a tamper record: its files, and HEAD and the index when moved. */
function treeChangeNames(change: TreeChange): string[] {
  return [
    ...(change.headMoved ? ['HEAD'] : []),
    ...(change.indexChanged ? ['the index'] : []),
    ...change.paths,
  ];
}

/**
 * What an agent left in the files git ignores (dependency-guard.ts, ignored-guard.ts): the caches it
 * wrote are removed, its other ignored files put back; the dependencies it changed, and the ignored
 * files that cannot be put back, outside a doer's scope, are named for a finding and recorded, so that
 * no bead runs on them until a person has looked.
 */
// ---- the guard the runner calls around beads ----

export function createLoopBeadGuard(ctx: StateGuardContext): BeadGuard {
  const seal = createLoopSeal(ctx, () => guardedFiles(ctx));
  const ledgerPath = join(ctx.workspace, 'research-log.jsonl');
  let acceptHead = ctx.acceptHead === true;

  /** The loop's own caps, checked before every bead that would spend an agent. */
  async function checkCaps(bead: Bead, role: string, builtin: boolean): Promise<GuardVeto | undefined> {
    const { caps } = ctx.config;
    const { summary } = await loadLedgerSummary(ctx.files, ledgerPath, {
      direction: ctx.config.metric.direction,
      target: ctx.config.target,
    });
    let reason: 'wall_clock' | 'budget' | undefined;
    let why = '';
    const started = summary.first_ts === null ? undefined : Date.parse(summary.first_ts);
    if (caps.wall_clock_seconds > 0 && started !== undefined) {
      const deadline = started + caps.wall_clock_seconds * 1000;
      if (ctx.now() >= deadline) {
        reason = 'wall_clock';
        why = `its wall clock of ${caps.wall_clock_seconds}s is spent`;
      }
    }
    const left = reason === undefined ? await budgetLeft(ctx) : undefined;
    if (left !== undefined && left <= 0) {
      reason = 'budget';
      why = `its budget of $${caps.max_cost_usd} is spent ($${(caps.max_cost_usd - left).toFixed(4)})`;
    }
    if (reason === undefined || builtin) return undefined;
    await abandonIteration(iterOf(bead), role);
    const last = summary.recent[summary.recent.length - 1];
    await writeTerminalSignal(ctx.files, ctx.workspace, {
      type: 'terminal',
      reason,
      iter: Math.max(0, summary.last_iter),
      final_score: last?.score_after ?? null,
      best_score: summary.best_score,
      decision: last?.decision ?? null,
    });
    return { reason: 'terminal', message: `The loop ended: ${why}; no further agent was started.` };
  }

  /**
   * An iteration that cannot finish (a cap, a failed doer) leaves the tree as the ledger says: the
   * scope goes back to the iteration's base, and its doer (and judge) beads are open again.
   */
  async function abandonIteration(iter: number | undefined, role: string): Promise<void> {
    if (iter === undefined || !['doer', 'judge'].includes(role)) return;
    const { summary } = await loadLedgerSummary(ctx.files, ledgerPath, {
      direction: ctx.config.metric.direction,
      target: ctx.config.target,
    });
    if (summary.last_iter >= iter) return; // already decided
    const state = await readIterationState(ctx.files, ctx.workspace, iter);
    if (state.base_sha === undefined) return; // the doer never started: nothing to undo
    await revertIteration({
      git: ctx.git,
      baseSha: state.base_sha,
      scopePaths: ctx.config.scope.doer_paths,
      message: `autoresearch iter ${iter}: stopped\n\nBase: ${state.base_sha}`,
    });
    await recordHead(ctx.files, ctx.workspace, ctx.git);
    for (const bead of await ctx.store.children(ctx.epicId, { recursive: true })) {
      const beadRole = loopRoleOf(bead);
      if (iterOf(bead) !== iter || (beadRole !== 'doer' && beadRole !== 'judge')) continue;
      if (bead.status === 'closed') {
        await ctx.store.reopen(
          bead.id,
          `Reopened by ralph-loop: iteration ${iter} was stopped before it was decided, and its changes were undone.`,
        );
      }
    }
  }

  return {
    async start() {
      await seal.verify('while no runner was watching');
    },
    async beforeBead(bead, context) {
      await seal.verify('between beads');
      // An agent changed the installed dependencies, and they are still as it left it.
      const changedDependencies = context.builtin ? undefined : await changedFilesLeft(ctx);
      if (changedDependencies !== undefined) return { reason: 'refused', message: changedDependencies };
      const waiting =
        (await userWorkInScope(ctx, bead, context.role)) ?? (await questionWaits(ctx, context.role));
      if (waiting !== undefined) return waiting;
      const head = await checkHead(
        { workspace: ctx.workspace, files: ctx.files, git: ctx.git, now: ctx.now, accept: acceptHead },
        bead,
        context.role,
      );
      acceptHead = false;
      const veto = head ?? (await checkCaps(bead, context.role, context.builtin));
      // The checks may have recorded HEAD, a ledger event or a terminal signal: sealed, checked as ever.
      await seal.verify('between beads');
      return veto;
    },
    async afterBead() {
      // Checked, not just sealed again: a process the bead's agent left running (hidden from the
      // sweep) may have rewritten a file the runner wrote during the bead, before this seal.
      await seal.verify('while the bead ran');
    },
    async leftOpen(bead, context, reason: StopReason) {
      // Interrupted or killed iterations resume where they stopped; a cap or a failure ends them here.
      if (reason === 'wall_clock' || reason === 'failed' || reason === 'terminal') {
        await abandonIteration(iterOf(bead), context.role);
      }
      if (reason === 'wall_clock' || reason === 'terminal') {
        const veto = await checkCaps(bead, context.role, false);
        if (veto !== undefined) ctx.warn?.(veto.message);
      }
      await seal.verify('while the bead ran');
    },
  };
}
