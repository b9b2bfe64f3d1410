// A soft judge's world: a fresh directory outside the repository holding only the artifact and the rubric.
//
// A judge with a Read tool can read any file it can name (reference/agent-clis.md), so what it may see
// is decided by where it runs: a copy of the judge paths from the commit being judged, and the rubric,
// under the system temp directory. No .git (no history), no workspace (no program, no ledger). Symlinks
// and submodules are left out, so nothing in the copy leads back out of it.
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join, relative, resolve, sep } from 'node:path';
import { writeFileAtomic } from '../infra/atomic-file.js';
import { listEntries, makeTempDir, readBytesIfReadable, removePath } from '../infra/fs-ops.js';
import type { Git, TreeEntry } from '../infra/git.js';
import { ownTempPrefix, removeLeftTempsOnce } from '../infra/left-temp.js';
import { normalizeRelativePath } from './config-values.js';
import { isPathInScope } from './keep-revert.js';

export interface JudgeCheckoutOptions {
  git: Git;
  /** The repository root (where the rubric is read from). */
  repo: string;
  /** The commit being judged: HEAD after the doer committed its work. */
  commit: string;
  /** Repository-relative paths copied from `commit`: the judge paths and the artifact. */
  paths: readonly string[];
  /** Never copied, even under a judge path: the loop's own files. */
  excluded: readonly string[];
  /** The rubric, repository-relative: copied from the working tree, where the runner guards it. */
  rubricPath?: string;
  /** Where the directory is made (default: the system temp directory). */
  tmpRoot?: string;
}

export interface JudgeCheckout {
  /** Absolute, symlink-free path of the directory: the judge's working directory. */
  dir: string;
  /** Files in it, relative to it (the same as relative to the repository root), sorted. */
  files: string[];
  /** Entries under the judge paths that were left out: symlinks and submodules. */
  skipped: string[];
  /**
   * Agent instruction and settings files under the judge paths that were left out: the judge's CLI
   * would load them as its own instructions (a CLAUDE.md beside the artifact is read as the user's
   * words, a `.claude/settings.json` runs its hooks). Not the artifact itself when it is one.
   */
  instructions: string[];
  /** Set when the rubric file could not be read (the judge still has its text in the prompt). */
  rubricMissing: boolean;
  /** Paths in the directory that are no longer as they were written: a judge that wrote. */
  changes(): Promise<string[]>;
  remove(): Promise<void>;
}

const REGULAR_FILE = new Set(['100644', '100755']);
/** `forge-judge-<pid>-<random>`: a checkout, by the pid of the Forge process that made it. */
const JUDGE_CHECKOUT_PREFIX = 'forge-judge-';

/** Files agent CLIs load as instructions or settings from a project, by name, at any depth. */
const INSTRUCTION_FILES = new Set([
  'CLAUDE.md',
  'CLAUDE.local.md',
  'AGENTS.md',
  'AGENTS.override.md',
  'GEMINI.md',
  'opencode.json',
  'opencode.jsonc',
]);
/** Folders of an agent CLI's project settings, rules, skills, commands and plugins. */
const INSTRUCTION_DIRS = new Set(['.claude', '.gemini', '.opencode', '.codex', '.agents']);

/** The instruction files and settings folders agent CLIs load from a project directory `dir` itself. */
export function agentInstructionPaths(dir: string): { files: string[]; dirs: string[] } {
  return {
    files: [...INSTRUCTION_FILES].map((name) => join(dir, name)),
    dirs: [...INSTRUCTION_DIRS].map((name) => join(dir, name)),
  };
}

/** Whether a repository path is an agent CLI's project instructions or settings, or inside their folder. */
export function isAgentInstructionPath(path: string): boolean {
  const segments = path.split('/');
  return (
    INSTRUCTION_FILES.has(segments.at(-1) ?? '') ||
    segments.slice(0, -1).some((segment) => INSTRUCTION_DIRS.has(segment))
  );
}

export async function createJudgeCheckout(options: JudgeCheckoutOptions): Promise<JudgeCheckout> {
  // Named by this process: a checkout a killed Forge left is removed by the next one made there.
  const root = options.tmpRoot ?? tmpdir();
  await removeLeftTempsOnce(root, JUDGE_CHECKOUT_PREFIX);
  const dir = await makeTempDir(ownTempPrefix(JUDGE_CHECKOUT_PREFIX), root);
  const remove = () => removePath(dir, { recursive: true });
  try {
    // A judge path that is itself instructions (the loop improves a CLAUDE.md, or a skills folder)
    // is the artifact: what is in it is judged, and copied.
    const chosen = options.paths
      .map(normalizeRelativePath)
      .filter((path) => isAgentInstructionPath(path) || isAgentInstructionPath(`${path}/-`));
    const listed = (await options.git.listTree(options.commit, options.paths)).filter(
      (entry) => !isPathInScope(entry.path, options.excluded) && inside(dir, entry.path),
    );
    const isInstruction = (path: string) =>
      isAgentInstructionPath(path) &&
      !chosen.some((judged) => path === judged || path.startsWith(`${judged}/`));
    const instructions = listed.filter((entry) => isInstruction(entry.path)).map((entry) => entry.path);
    const entries = listed.filter((entry) => !isInstruction(entry.path));
    const files: TreeEntry[] = entries.filter((entry) => REGULAR_FILE.has(entry.mode));
    const skipped = entries.filter((entry) => !REGULAR_FILE.has(entry.mode)).map((entry) => entry.path);
    await options.git.exportFiles(files, dir);

    let rubricMissing = false;
    const rubric = options.rubricPath === undefined ? '' : normalizeRelativePath(options.rubricPath);
    if (rubric !== '' && inside(dir, rubric)) {
      // Read through any symlink on the repository side; written here as a plain file.
      const content = await readBytesIfReadable(resolve(options.repo, rubric));
      if (content === undefined) rubricMissing = true;
      else {
        await writeFileAtomic(join(dir, rubric), content);
      }
    }

    const written = await fingerprint(dir);
    return {
      dir,
      files: [...written].filter(([, print]) => print !== 'dir').map(([path]) => path),
      skipped: skipped.sort(),
      instructions: instructions.sort(),
      rubricMissing,
      async changes() {
        const now = await fingerprint(dir);
        const paths = new Set([...written.keys(), ...now.keys()]);
        return [...paths].filter((path) => written.get(path) !== now.get(path)).sort();
      },
      remove,
    };
  } catch (error) {
    await remove();
    throw error;
  }
}

/** Runs `use` with a fresh checkout and removes it afterwards, whatever happens. */
export async function withJudgeCheckout<T>(
  options: JudgeCheckoutOptions,
  use: (checkout: JudgeCheckout) => Promise<T>,
): Promise<T> {
  const checkout = await createJudgeCheckout(options);
  try {
    return await use(checkout);
  } finally {
    await checkout.remove();
  }
}

/** True when the relative `path` stays inside `dir` (git never stores `..`; this does not rely on it). */
function inside(dir: string, path: string): boolean {
  const target = resolve(dir, path);
  return target.startsWith(`${dir}${sep}`) && !relative(dir, target).split(sep).includes('..');
}

/** Every entry under `dir`, without following symlinks: files by content, symlinks by target. */
async function fingerprint(dir: string): Promise<Map<string, string>> {
  const prints = new Map<string, string>();
  const walk = async (at: string): Promise<void> => {
    const entries = await listEntries(at);
    for (const entry of entries) {
      const path = join(at, entry.name);
      const key = relative(dir, path).split(sep).join('/');
      if (entry.kind === 'dir') {
        prints.set(key, 'dir');
        await walk(path);
      } else if (entry.kind === 'file') {
        const content = await readBytesIfReadable(path);
        prints.set(key, content === undefined ? 'unreadable' : `file:${sha256(content)}`);
      } else {
        prints.set(key, entry.kind);
      }
    }
  };
  await walk(dir);
  return new Map([...prints].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}
