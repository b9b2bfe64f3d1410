// A loop's workspace (`.autoresearch/` by default): its file layout, and the registry `.forge/loops.json`
// that maps an epic id to its workspace.
//
// This module sits on the path of `ralph-loop status`, whose whole process has a time budget (DESIGN:
// at most half the bash status), so it loads no schema library: zod alone costs more than the budget
// leaves. The registry and the config's epic id are checked by hand, and a bad registry is reported as
// readJsonFile reports a schema's refusal: a ConfigError whose problems name the file and the field.
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { readFileIfExists, writeJsonAtomic } from '../infra/atomic-file.js';
import { AppError, ConfigError, ExitCode } from '../infra/errors.js';
import { describeProblem, type FieldProblem } from '../infra/zod-issues.js';

export const DEFAULT_WORKSPACE = '.autoresearch';
export const LOOPS_REGISTRY_PATH = join('.forge', 'loops.json');

export interface WorkspacePaths {
  /** Absolute path of the workspace directory. */
  root: string;
  config: string;
  program: string;
  ledger: string;
  arbiterSignal: string;
  terminalSignal: string;
  needsHuman: string;
  /** Hash of needs-human.md as it was asked, to tell an answered question from an untouched one. */
  needsHumanAsked: string;
  retrospective: string;
  rubricSuggestions: string;
  directivesDir: string;
  templatesDir: string;
  /** The runner's lock (the workspace is the loop's run directory). */
  lock: string;
  judgeOutput(iter: number): string;
  directive(iter: number): string;
  needsHumanResolved(k: number): string;
}

export function workspacePaths(root: string): WorkspacePaths {
  const at = (name: string) => join(root, name);
  return {
    root,
    config: at('config.json'),
    program: at('program.md'),
    ledger: at('research-log.jsonl'),
    arbiterSignal: at('arbiter-signal.json'),
    terminalSignal: at('terminal-signal.json'),
    needsHuman: at('needs-human.md'),
    needsHumanAsked: at('needs-human.asked.json'),
    retrospective: at('retrospective.md'),
    rubricSuggestions: at('rubric-suggestions.md'),
    directivesDir: at('directives'),
    templatesDir: at('templates'),
    lock: at('ralph-loop.lock'),
    judgeOutput: (iter) => at(`judge-output-${iter}.json`),
    directive: (iter) => join(root, 'directives', `directive-${iter}.md`),
    needsHumanResolved: (k) => at(`needs-human-resolved-${k}.md`),
  };
}

// ---- the registry ----

export interface LoopEntry {
  /** Relative to the repository root. */
  workspace: string;
  subject?: string | undefined;
  /** The bead store the loop was created on: its runs use it unless told otherwise (`--store`). */
  store?: 'br' | 'embedded' | undefined;
}
export type LoopsRegistry = Record<string, LoopEntry>;

/** Reads `.forge/loops.json`; a missing file is an empty registry, a malformed one a ConfigError. */
export async function readLoopsRegistry(repo: string): Promise<LoopsRegistry> {
  const text = await readFileIfExists(join(repo, LOOPS_REGISTRY_PATH));
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw registryError('', `not valid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw registryError('', 'expected an object mapping epic ids to loops');
  }
  const registry: LoopsRegistry = {};
  for (const [epic, entry] of Object.entries(value as Record<string, unknown>)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      throw registryError(epic, 'expected an object with "workspace"');
    }
    const { workspace, subject, store, ...rest } = entry as Record<string, unknown>;
    const unknown = Object.keys(rest)[0];
    if (unknown !== undefined) throw registryError(`${epic}.${unknown}`, 'unknown key');
    if (typeof workspace !== 'string' || workspace === '') {
      throw registryError(`${epic}.workspace`, 'expected the path of the loop workspace');
    }
    if (subject !== undefined && typeof subject !== 'string') {
      throw registryError(`${epic}.subject`, 'expected a string');
    }
    if (store !== undefined && store !== 'br' && store !== 'embedded') {
      throw registryError(`${epic}.store`, 'expected "br" or "embedded"');
    }
    registry[epic] = {
      workspace,
      subject,
      store,
    };
  }
  return registry;
}

/** A bad registry, told as readJsonFile tells a schema's refusal: one problem naming file and field. */
function registryError(field: string, message: string): ConfigError {
  const problem: FieldProblem = { file: LOOPS_REGISTRY_PATH, field, message };
  return new ConfigError(describeProblem(problem), {
    hint:
      field === ''
        ? `Fix the JSON in ${LOOPS_REGISTRY_PATH}; forge-pack loop writes one entry per epic.`
        : `Fix the field above in ${LOOPS_REGISTRY_PATH}.`,
    problems: [problem],
  });
}

/** Adds or replaces the epic's entry; the file is rewritten atomically. */
export async function registerLoop(repo: string, epicId: string, entry: LoopEntry): Promise<void> {
  const registry = await readLoopsRegistry(repo);
  registry[epicId] = entry;
  await writeJsonAtomic(join(repo, LOOPS_REGISTRY_PATH), registry);
}

/**
 * The workspace of the epic's loop, as an absolute path: its registry entry, else the default
 * workspace when its config names this epic (a clone without `.forge/`); undefined for other epics.
 */
export async function findLoopWorkspace(repo: string, epicId: string): Promise<string | undefined> {
  const entry = (await readLoopsRegistry(repo))[epicId];
  if (entry !== undefined) return resolve(repo, entry.workspace);
  const fallback = join(repo, DEFAULT_WORKSPACE);
  return (await configEpicId(fallback)) === epicId ? fallback : undefined;
}

/** Like findLoopWorkspace, but an epic without a loop is an error that says how to get one. */
export async function requireLoopWorkspace(repo: string, epicId: string): Promise<WorkspacePaths> {
  const root = await findLoopWorkspace(repo, epicId);
  if (root === undefined) {
    throw new AppError(`Epic ${epicId} has no autoresearch loop: it is not in ${LOOPS_REGISTRY_PATH}.`, {
      exitCode: ExitCode.usage,
      hint: 'Create one with `forge-pack loop "<subject>" …` (it prints the epic id), or run this from the repository root.',
    });
  }
  return workspacePaths(root);
}

/** The epic id a workspace's config.json names, without validating the rest of it. */
export async function configEpicId(workspaceRoot: string): Promise<string | undefined> {
  const text = await readFileIfExists(join(workspaceRoot, 'config.json'));
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as { epic_id?: unknown } | null;
    return typeof value?.epic_id === 'string' ? value.epic_id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Resolves `--workspace` against the repository: the absolute path and the path relative to the repo
 * root that the registry stores. A workspace outside the repository is refused.
 */
export function resolveWorkspaceDir(
  repo: string,
  dir: string | undefined,
): { root: string; relative: string } {
  const root = resolve(repo, dir ?? DEFAULT_WORKSPACE);
  const rel = relative(repo, root);
  if (rel === '' || rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
    throw new AppError(`The workspace must be a directory inside the repository, got ${dir ?? root}.`, {
      exitCode: ExitCode.usage,
      hint: `Use a path such as ${DEFAULT_WORKSPACE} or .autoresearch-parser (relative to the repository root).`,
    });
  }
  return { root, relative: rel.split(sep).join('/') };
}
