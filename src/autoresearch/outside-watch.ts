// What the metric, guard and track commands must leave as they found it outside the tree they measure.
// They run the doer's code, and that code can write what every later run loads without git seeing it:
// git's config and hooks (a clean filter rewrites what Forge's own commits hold), a tool's settings
// above the tree or in the home (cargo's runner, pytest's conftest.py, npm's node-options), the
// instructions and settings the next agent's CLI reads. The agent runs are guarded against the same
// (state-guard.ts, agent-executor.ts); this is the same watch around the runs that measure.
import { relative, sep } from 'node:path';
import { changedPaths, restoreSnapshot, takeSnapshot } from '../infra/file-vault.js';
import type { Git } from '../infra/git.js';
import { gitControlPaths, isGitControlPath, readModes, restoreModes } from '../infra/git-control.js';
import { homeAgentConfig, readContents, restoreChanged } from '../infra/home-instructions.js';
import { toolConfigPaths } from '../infra/tool-config.js';
import { agentInstructionPaths } from './judge-checkout.js';

type Env = Readonly<Record<string, string | undefined>>;

export interface OutsideWatchOptions {
  git: Git;
  /** The trees the runs work in: the loop's, and the repository holding it. */
  trees: readonly string[];
  /** The environment the runs get: where the home and the user's git and tool config are. */
  env: Env;
  /** The machine's config folder (/etc; a test's own). */
  etc?: string;
}

/** Ends a watch: puts back what changed since it began and names it (relative inside the first tree). */
export type EndOutsideWatch = () => Promise<string[]>;

/** Begins watching, right before a run; the function it gives undoes the run's changes once it ends. */
export type OutsideWatch = () => Promise<EndOutsideWatch>;

export function createOutsideWatch(options: OutsideWatchOptions): OutsideWatch {
  const { git, trees, env } = options;
  const root = trees[0] ?? '.';
  const name = (path: string) => {
    const inside = relative(root, path);
    return inside.startsWith('..') || inside === '' ? path : inside.split(sep).join('/');
  };
  return async () => {
    const control = gitControlPaths(await git.gitDir(), await git.commonDir(), env);
    const tools = toolConfigPaths(trees, env);
    const instructions = trees.map(agentInstructionPaths);
    const layout = {
      repo: root,
      dirs: [...control.dirs, ...tools.dirs, ...instructions.flatMap((paths) => paths.dirs)],
      files: [
        ...new Set([...control.files, ...tools.files, ...instructions.flatMap((paths) => paths.files)]),
      ],
    };
    const before = await takeSnapshot(layout);
    // A hook is as much its mode as its text: `chmod +x` alone arms one.
    const modes = await readModes([...before.keys()].filter((path) => isGitControlPath(control, path)));
    const home = await readContents(homeAgentConfig(env, options.etc));
    return async () => {
      const modesNow = await readModes([...modes.keys()]);
      const changed = [
        ...new Set([
          ...changedPaths(before, await takeSnapshot(layout)),
          ...[...modes].filter(([path, mode]) => (modesNow.get(path) ?? mode) !== mode).map(([path]) => path),
        ]),
      ].sort();
      await restoreSnapshot(before, changed);
      await restoreModes(modes, changed);
      const homeChanged = await restoreChanged(home);
      return [...new Set([...changed, ...homeChanged])].map(name);
    };
  };
}
