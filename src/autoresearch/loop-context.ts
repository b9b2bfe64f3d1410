// A loop opened for stamping: its workspace (given, registered, or the default) and its config, checked
// against the epic it is opened for.
import { relative } from 'node:path';
import { UsageError } from '../infra/errors.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { loadLoopConfig, type LoopConfig } from './config.js';
import {
  requireLoopWorkspace,
  resolveWorkspaceDir,
  workspacePaths,
  type WorkspacePaths,
} from './workspace.js';

/** Everything stamping needs to know about one loop. */
export interface LoopContext {
  /** Absolute path of the repository root. */
  repo: string;
  paths: WorkspacePaths;
  /** The workspace relative to the repository root. */
  workspace: string;
  config: LoopConfig;
  /** The loop's state files (its workspace, `.forge/loops.json`): on disk, or in memory in tests. */
  files: LoopFiles;
  epicId: string;
  /** Agents call `forge-pack stamp` back with this store, so they write where the runner reads. */
  storeKind: 'br' | 'embedded';
}

/** Loads the loop of an epic: its workspace (given, registered, or the default) and its config. */
export async function openLoop(
  repo: string,
  epicId: string,
  options: { workspace?: string | undefined; storeKind: 'br' | 'embedded'; files: LoopFiles },
): Promise<LoopContext> {
  const root =
    options.workspace === undefined
      ? (await requireLoopWorkspace(repo, epicId)).root
      : resolveWorkspaceDir(repo, options.workspace).root;
  const paths = workspacePaths(root);
  const config = await loadLoopConfig(options.files, paths.config);
  if (config.epic_id !== undefined && config.epic_id !== epicId) {
    throw new UsageError(`${paths.config} belongs to epic ${config.epic_id}, not ${epicId}.`, {
      hint: `Check the epic id, or give the workspace of ${epicId} with --workspace.`,
    });
  }
  return {
    repo,
    paths,
    workspace: relative(repo, root).split('\\').join('/'),
    config,
    files: options.files,
    epicId,
    storeKind: options.storeKind,
  };
}
