// What setup refuses before it creates anything: a scope that reaches the loop's own files, the rubric,
// a metric file or out of the repository, and a workspace whose loop is running; and what it warns of.
import { resolve } from 'node:path';
import { realLocation, staysInside } from '../infra/contained-path.js';
import { fileStat, listEntries } from '../infra/fs-ops.js';
import { AppError, ExitCode, UsageError } from '../infra/errors.js';
import type { Git } from '../infra/git.js';
import { isOtherIgnored } from '../infra/ignored-files.js';
import { isOwnerLive, parseLockRecord } from '../infra/lock-record.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { LoopConfig } from './config.js';
import { normalizeRelativePath } from './config-values.js';
import { isPathInScope } from './keep-revert.js';
import { metricFilesVia } from './metric-files.js';
import { isTestFile } from './test-files.js';
import type { WorkspacePaths } from './workspace.js';

const PROTECTED_DIRS = ['.git', '.forge', '.beads'];

/**
 * The doer's scope must not reach the loop's own files (workspace, bead store, Forge's config, git)
 * nor, for a soft metric, the rubric: a doer that can edit what judges it is not blind.
 */
export function checkLayout(workspace: string, config: LoopConfig): void {
  const inside = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);
  const overlaps = (a: string, b: string) => inside(a, b) || inside(b, a);
  for (const raw of config.scope.doer_paths) {
    const path = normalizeRelativePath(raw);
    for (const dir of [workspace, ...PROTECTED_DIRS]) {
      if (overlaps(path, dir)) {
        throw new UsageError(`The scope ${raw} overlaps ${dir}/, which the doer must never change.`, {
          hint: 'Give the directories of the work itself, e.g. --scope src/ --scope docs/spec.md.',
        });
      }
    }
    if (config.metric.type === 'soft' && inside(normalizeRelativePath(config.metric.rubric_path), path)) {
      throw new UsageError(`The rubric ${config.metric.rubric_path} is inside the doer's scope ${raw}.`, {
        hint: 'Move the rubric out of the scope (e.g. into the workspace), or narrow --scope: the doer must not edit what judges it.',
      });
    }
  }
}

/**
 * Scope and artifact paths must stay inside the repository once links are followed (a doer writing
 * through `linkdir -> /elsewhere` would change files no guard sees), and the doer's scope must not
 * hold a file the metric command reads: every change to it would be put back, so the loop could
 * never improve, and a doer that could change it would be scoring itself.
 */
export async function checkContainment(repo: string, config: LoopConfig): Promise<void> {
  const paths = [
    ...config.scope.doer_paths.map((path) => ['scope', path] as const),
    ...config.scope.judge_paths.map((path) => ['judge path', path] as const),
    ...(config.metric.artifact_path === undefined
      ? []
      : [['artifact', config.metric.artifact_path] as const]),
  ];
  for (const [what, path] of paths) {
    if (!(await staysInside(repo, path))) {
      throw new UsageError(
        `The ${what} ${path} leads out of the repository (through a symbolic link, to ${await realLocation(repo, path)}).`,
        {
          hint: 'Give a path that is really inside the repository: the loop only guards and reverts files there.',
        },
      );
    }
  }
  for (const { path: file, via } of await metricFilesVia(config, repo)) {
    const scope = config.scope.doer_paths.find((path) => isPathInScope(file, [path]));
    if (scope === undefined) continue;
    const how = via === undefined ? 'the metric command, a guard or a track reads it' : `run through ${via}`;
    throw new UsageError(
      `The scope ${scope} holds ${file}, a metric file (${how}), which the doer must never change.`,
      {
        hint: 'Narrow --scope so it leaves out the files the metric command reads (its script, its tests), or move them out of the scope.',
      },
    );
  }
}

/**
 * A doer may not change the tests (test-files.ts), so a scope that holds them would make each change to
 * them tamper: refused, unless the loop's doer is meant to write tests.
 */
export async function checkTestsOutOfScope(repo: string, config: LoopConfig): Promise<void> {
  if (config.scope.doer_may_change_tests) return;
  for (const scope of config.scope.doer_paths) {
    const found = await testFilesUnder(repo, normalizeRelativePath(scope));
    if (found.length === 0) continue;
    throw new UsageError(
      `The scope ${scope} holds test files (${found.slice(0, 3).join(', ')}${found.length > 3 ? ', …' : ''}): a doer that changes the tests can make them pass that way, so any change to them would be tamper.`,
      {
        hint: 'Narrow --scope to the code under test, or give --doer-may-change-tests for a loop whose doer writes tests.',
      },
    );
  }
}

/** Folders the walk for tests does not enter: installed dependencies, git's own, virtualenvs. */
const NOT_WALKED = new Set(['node_modules', '.git', '.venv', 'venv', '.forge', '.beads']);

/** Up to four test files at or under `path` (relative to `repo`), in the order a walk finds them. */
async function testFilesUnder(repo: string, path: string): Promise<string[]> {
  if ((await fileStat(resolve(repo, path))) === undefined) return [];
  const top = await listEntries(resolve(repo, path));
  // A file (or nothing to list): the scope is that one path.
  if (top.length === 0) return isTestFile(path) ? [path] : [];
  const found: string[] = [];
  const queue = [path === '.' ? '' : path];
  // Bounded: a scope of the whole repository must not make setup walk a monorepo.
  for (let visited = 0; queue.length > 0 && found.length < 4 && visited < 20_000; visited += 1) {
    const dir = queue.shift() ?? '';
    for (const entry of await listEntries(resolve(repo, dir))) {
      const child = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (entry.kind === 'dir' && !NOT_WALKED.has(entry.name)) queue.push(child);
      else if (entry.kind === 'file' && isTestFile(child)) found.push(child);
    }
  }
  return found.slice(0, 4);
}

/** Warnings for uncommitted changes inside the doer's scope. */
export async function uncommittedInScope(
  git: Pick<Git, 'statusPorcelain'>,
  config: LoopConfig,
): Promise<string[]> {
  const scope = config.scope.doer_paths.map(normalizeRelativePath);
  const dirty = (await git.statusPorcelain()).filter((entry) =>
    scope.some((dir) => entry.path === dir || entry.path.startsWith(`${dir}/`)),
  );
  if (dirty.length === 0) return [];
  const named = dirty
    .slice(0, 3)
    .map((entry) => entry.path)
    .join(', ');
  return [
    `Uncommitted changes in scope (${named}${dirty.length > 3 ? ', …' : ''}): commit or stash them so the baseline matches HEAD; no doer starts an iteration while they are there, since its commit would take them and a revert remove them.`,
  ];
}

/**
 * Ignored data or build outputs under the doer's scope: what the doer writes there is put back before
 * the metric runs (ignored-guard.ts), since git keeps none of it. A metric that measures a build the
 * doer makes there must make it itself, or name it with --rebuilt.
 */
export async function ignoredInScope(git: Pick<Git, 'ignoredPaths'>, config: LoopConfig): Promise<string[]> {
  if (git.ignoredPaths === undefined) return [];
  const { doer_paths: scope, rebuilt_paths: rebuilt } = config.scope;
  const found = (await git.ignoredPaths())
    .map((path) => path.replace(/\/$/, ''))
    .filter(
      (path) =>
        isPathInScope(path, scope) &&
        !isPathInScope(path, rebuilt) &&
        !path.startsWith('.') &&
        isOtherIgnored(path),
    );
  if (found.length === 0) return [];
  const named = found.slice(0, 3).join(', ');
  return [
    `Ignored by git and in the doer's scope (${named}${found.length > 3 ? ', …' : ''}): what the doer writes there is put back before every metric run, since no commit holds it; a metric that measures what the doer builds there must build it itself (or name the path with --rebuilt).`,
  ];
}

/** Refuses to replace the loop of a workspace while a live ralph-loop holds its lock. */
export async function refuseWhenRunning(
  files: LoopFiles,
  paths: WorkspacePaths,
  ports: { host: string; isProcessAlive(pid: number): boolean },
): Promise<void> {
  const text = await files.readIfExists(paths.lock);
  const lock = text === undefined ? undefined : parseLockRecord(text);
  if (lock === undefined) return; // no lock, or not one a runner wrote
  // The lock's last write tells a recycled pid from its holder, on the holder's own host only.
  const writtenAt = lock.host === ports.host ? (await files.stat(paths.lock))?.mtimeMs : undefined;
  if (!isOwnerLive(lock, ports.host, writtenAt, (pid) => ports.isProcessAlive(pid))) return;
  const where =
    lock.host === ports.host ? `pid ${lock.pid}` : `pid ${lock.pid} on ${lock.host}, not checkable from here`;
  throw new AppError(`A ralph-loop (${where}) is running the loop in ${paths.root}; it is not replaced.`, {
    exitCode: ExitCode.locked,
    hint: 'Stop it first (ralph-loop stop <epic>), or give the new loop its own --workspace.',
  });
}
