// Forge's own state in a project: the folders it keeps beside the user's files, which no commit Forge
// makes may hold (a run's project can be a folder inside the repository: they are matched at any depth).

/** Forge's folders: its config and run files, the embedded bead store, a loop's workspace. */
export const FORGE_STATE_DIRS = ['.forge', '.beads', '.autoresearch'] as const;

/** Whether a repository path (`/`-separated) is one of Forge's folders or inside one. */
export function isForgeStatePath(path: string): boolean {
  return path.split('/').some((segment) => (FORGE_STATE_DIRS as readonly string[]).includes(segment));
}
