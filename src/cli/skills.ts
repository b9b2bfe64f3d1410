// The packaged skills (`skills/<name>/SKILL.md`) put where Claude Code and Codex read them, recorded in
// install.sh's manifest, so that uninstall.sh and `forge-pack skills uninstall` remove exactly them.
import { createHash } from 'node:crypto';
import { cp, mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileIfExists, writeFileAtomic } from '../infra/atomic-file.js';

/** The skills shipped with this package. */
export const SHIPPED_SKILLS_DIR = fileURLToPath(new URL('../../skills/', import.meta.url));
/** A file in each skill directory Forge placed: what tells it from one the user wrote (as install.sh). */
export const SKILL_MARKER = '.forge-skill';

export type SkillAgent = 'claude' | 'codex';

export interface SkillTarget {
  agent: SkillAgent;
  /** `user`: the agent's own skills directory; `project`: the repository's. */
  scope: 'user' | 'project';
  dir: string;
}

export interface TargetChoice {
  project?: boolean;
  claude?: boolean;
  codex?: boolean;
}

function homeOf(env: NodeJS.ProcessEnv): string {
  return env.HOME ?? homedir();
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() === true;
}

/** Each agent's home: where its skills live and whether it is there (set in the environment, or the directory exists). */
async function agentHomes(
  env: NodeJS.ProcessEnv,
): Promise<Record<SkillAgent, { dir: string; present: boolean }>> {
  const home = homeOf(env);
  const claude = env.CLAUDE_CONFIG_DIR ? resolve(env.CLAUDE_CONFIG_DIR) : join(home, '.claude');
  const codex = env.CODEX_HOME ? resolve(env.CODEX_HOME) : join(home, '.codex');
  return {
    claude: { dir: claude, present: env.CLAUDE_CONFIG_DIR !== undefined || (await isDirectory(claude)) },
    codex: { dir: codex, present: env.CODEX_HOME !== undefined || (await isDirectory(codex)) },
  };
}

/**
 * Where the skills go. Claude Code: `$CLAUDE_CONFIG_DIR/skills` (else `~/.claude/skills`), with
 * `--project` `<repo>/.claude/skills`. Codex: `$CODEX_HOME/skills` (else `~/.codex/skills`) and the
 * user-level `~/.agents/skills` of current Codex, with `--project` `<repo>/.agents/skills`. Without
 * --claude or --codex: the agents whose home exists (`undefined` entries when neither does).
 */
export async function skillTargets(
  env: NodeJS.ProcessEnv,
  repo: string,
  choice: TargetChoice,
  options: { all?: boolean } = {},
): Promise<{ targets: SkillTarget[]; agents: SkillAgent[] }> {
  const homes = await agentHomes(env);
  const named = (['claude', 'codex'] as const).filter((agent) => choice[agent] === true);
  const agents =
    named.length > 0
      ? named
      : options.all === true
        ? (['claude', 'codex'] as const).slice()
        : (['claude', 'codex'] as const).filter((agent) => homes[agent].present);
  const targets: SkillTarget[] = [];
  for (const agent of agents) {
    if (choice.project === true) {
      targets.push({
        agent,
        scope: 'project',
        dir: join(repo, agent === 'claude' ? '.claude' : '.agents', 'skills'),
      });
    } else {
      targets.push({ agent, scope: 'user', dir: join(homes[agent].dir, 'skills') });
      if (agent === 'codex')
        targets.push({ agent, scope: 'user', dir: join(homeOf(env), '.agents', 'skills') });
    }
  }
  return { targets: targets.filter((t, i) => targets.findIndex((o) => o.dir === t.dir) === i), agents };
}

/** The skills this package ships: directories of `skills/` holding a SKILL.md. */
export async function shippedSkills(source = SHIPPED_SKILLS_DIR): Promise<string[]> {
  const entries = await readdir(source, { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && (await readFileIfExists(join(source, entry.name, 'SKILL.md'))) !== undefined) {
      names.push(entry.name);
    }
  }
  return names.sort();
}

// ---- install.sh's manifest ----

/** `$FORGE_STATE_DIR/install-manifest.txt`, else under `${XDG_DATA_HOME:-~/.local/share}/forge`, as install.sh. */
export function manifestPath(env: NodeJS.ProcessEnv): string {
  const stateDir =
    env.FORGE_STATE_DIR ?? join(env.XDG_DATA_HOME ?? join(homeOf(env), '.local', 'share'), 'forge');
  return join(stateDir, 'install-manifest.txt');
}

/** One line: `kind<TAB>path[<TAB>link target]`; kinds `link`, `skill`, `dir` (removed only when empty). */
interface ManifestEntry {
  kind: string;
  path: string;
  rest?: string;
}

const MANIFEST_HEADER =
  '# Forge install manifest: written by install.sh, read by uninstall.sh.\n' +
  '# kind<TAB>path[<TAB>link target]; kinds: link, skill, dir (removed only when empty).\n';

async function readManifest(path: string): Promise<ManifestEntry[]> {
  const text = (await readFileIfExists(path)) ?? '';
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const [kind = '', entryPath = '', rest] = line.split('\t');
      return rest === undefined ? { kind, path: entryPath } : { kind, path: entryPath, rest };
    });
}

/** Writes the entries, one line per path (the first wins), dropping paths that no longer exist. */
async function writeManifest(path: string, entries: ManifestEntry[]): Promise<void> {
  const kept: ManifestEntry[] = [];
  for (const entry of entries) {
    if (entry.path === '' || kept.some((other) => other.path === entry.path)) continue;
    if ((await stat(entry.path).catch(() => undefined)) === undefined) continue;
    kept.push(entry);
  }
  const lines = kept.map((e) => [e.kind, e.path, ...(e.rest === undefined ? [] : [e.rest])].join('\t'));
  if (lines.length === 0) {
    await rm(path, { force: true });
    return;
  }
  await mkdir(dirname(path), { recursive: true });
  await writeFileAtomic(path, `${MANIFEST_HEADER}${lines.map((line) => `${line}\n`).join('')}`);
}

/** Creates `dir` and returns every directory it had to create, deepest first. */
async function makeDir(dir: string): Promise<string[]> {
  const missing: string[] = [];
  for (let at = dir; !(await isDirectory(at)); at = dirname(at)) {
    missing.push(at);
    if (dirname(at) === at) break;
  }
  await mkdir(dir, { recursive: true });
  return missing;
}

// ---- install, list, uninstall ----

/** `kept`: not Forge's (no marker); `changed`: Forge's copy, changed since it was placed (left as it is). */
export type SkillAction = 'installed' | 'updated' | 'unchanged' | 'removed' | 'absent' | 'kept' | 'changed';

export interface TargetReport {
  agent: SkillAgent;
  scope: 'user' | 'project';
  dir: string;
  skills: { name: string; action: SkillAction }[];
}

export interface SkillsReport {
  manifest: string;
  targets: TargetReport[];
}

export type InstallOutcome =
  | { ok: true; report: SkillsReport }
  /** Paths that exist and were not placed by Forge: nothing was changed. */
  | { ok: false; conflicts: string[] };

async function isOurs(path: string, manifest: ManifestEntry[]): Promise<boolean> {
  if (manifest.some((entry) => entry.path === path)) return true;
  return (await stat(join(path, SKILL_MARKER)).catch(() => undefined)) !== undefined;
}

/**
 * What a skill directory holds, for its marker: one `sha256  path` line a file (sha256sum's format, so
 * uninstall.sh checks it with `sha256sum --check`), sorted by path, the marker itself apart.
 */
export async function skillListing(dir: string): Promise<string> {
  const files: string[] = [];
  const walk = async (sub: string): Promise<void> => {
    for (const entry of await readdir(join(dir, sub), { withFileTypes: true })) {
      const path = sub === '' ? entry.name : `${sub}/${entry.name}`;
      if (entry.isDirectory()) await walk(path);
      else if (path !== SKILL_MARKER) files.push(path);
    }
  };
  await walk('');
  files.sort();
  const lines = await Promise.all(
    files.map(
      async (path) =>
        `${createHash('sha256')
          .update(await readFile(join(dir, path)))
          .digest('hex')}  ${path}`,
    ),
  );
  return lines.map((line) => `${line}\n`).join('');
}

/** The listing a marker holds; undefined for a marker written before markers listed their files. */
function markerListing(text: string): string | undefined {
  const lines = text.split('\n').filter((line) => /^[0-9a-f]{64} {2}/.test(line));
  return lines.length === 0 ? undefined : lines.map((line) => `${line}\n`).join('');
}

/**
 * Whether a copy Forge placed was changed since (a file edited, added or removed): then it is yours,
 * and neither an update nor an uninstall touches it. A marker that lists no files says nothing.
 */
export async function changedSinceInstall(dest: string): Promise<boolean> {
  const marker = await readFileIfExists(join(dest, SKILL_MARKER));
  const listed = marker === undefined ? undefined : markerListing(marker);
  if (listed === undefined) return false;
  return (await skillListing(dest).catch(() => undefined)) !== listed;
}

async function sameSkill(source: string, dest: string): Promise<boolean> {
  if ((await stat(join(dest, SKILL_MARKER)).catch(() => undefined)) === undefined) return false;
  const [ours, theirs] = await Promise.all([
    readFileIfExists(join(source, 'SKILL.md')),
    readFileIfExists(join(dest, 'SKILL.md')),
  ]);
  return ours !== undefined && ours === theirs;
}

/**
 * Copies every shipped skill into each target: a new copy is staged beside the old one and renamed
 * into place, so a skill is never half-written; one already current is left alone. A path that
 * exists and is not Forge's stops the install before anything changes.
 */
export async function installSkills(
  targets: SkillTarget[],
  options: { env: NodeJS.ProcessEnv; source?: string },
): Promise<InstallOutcome> {
  const source = options.source ?? SHIPPED_SKILLS_DIR;
  const path = manifestPath(options.env);
  const manifest = await readManifest(path);
  const names = await shippedSkills(source);
  const conflicts: string[] = [];
  for (const target of targets) {
    for (const name of names) {
      const dest = join(target.dir, name);
      if ((await stat(dest).catch(() => undefined)) !== undefined && !(await isOurs(dest, manifest))) {
        conflicts.push(dest);
      }
    }
  }
  if (conflicts.length > 0) return { ok: false, conflicts };

  const added: ManifestEntry[] = [];
  const reports: TargetReport[] = [];
  for (const target of targets) {
    for (const dir of await makeDir(target.dir)) added.push({ kind: 'dir', path: dir });
    const skills: TargetReport['skills'] = [];
    for (const name of names) {
      const dest = join(target.dir, name);
      const existed = (await stat(dest).catch(() => undefined)) !== undefined;
      if (existed && (await changedSinceInstall(dest))) {
        skills.push({ name, action: 'changed' });
      } else if (existed && (await sameSkill(join(source, name), dest))) {
        skills.push({ name, action: 'unchanged' });
      } else {
        await placeSkill(join(source, name), dest);
        skills.push({ name, action: existed ? 'updated' : 'installed' });
      }
      added.push({ kind: 'skill', path: dest });
    }
    reports.push({ ...target, skills });
  }
  for (const dir of await makeDir(dirname(path))) added.push({ kind: 'dir', path: dir });
  await writeManifest(path, [...added, ...manifest]);
  return { ok: true, report: { manifest: path, targets: reports } };
}

async function placeSkill(from: string, dest: string): Promise<void> {
  const parent = dirname(dest);
  const name = dest.slice(parent.length + 1);
  const staging = join(parent, `.${name}.forge-install.${process.pid}`);
  const old = join(parent, `.${name}.forge-old.${process.pid}`);
  await rm(staging, { recursive: true, force: true });
  await cp(from, staging, { recursive: true });
  await writeFileAtomic(
    join(staging, SKILL_MARKER),
    `Installed by Forge (forge-pack skills install) from ${from}; forge-pack skills uninstall or uninstall.sh removes this directory while it holds these files as they were placed:\n${await skillListing(staging)}`,
  );
  const existed = (await stat(dest).catch(() => undefined)) !== undefined;
  if (existed) await rename(dest, old);
  await rename(staging, dest);
  if (existed) await rm(old, { recursive: true, force: true });
}

/** What each target holds of the shipped skills: current, outdated or absent. */
export async function listSkills(
  targets: SkillTarget[],
  source = SHIPPED_SKILLS_DIR,
): Promise<
  { name: string; targets: { dir: string; state: 'current' | 'outdated' | 'absent' | 'not-forge' }[] }[]
> {
  const names = await shippedSkills(source);
  return Promise.all(
    names.map(async (name) => ({
      name,
      targets: await Promise.all(
        targets.map(async (target) => {
          const dest = join(target.dir, name);
          const text = await readFileIfExists(join(dest, 'SKILL.md'));
          if (text === undefined) return { dir: target.dir, state: 'absent' as const };
          if ((await stat(join(dest, SKILL_MARKER)).catch(() => undefined)) === undefined) {
            return { dir: target.dir, state: 'not-forge' as const };
          }
          const ours = await readFileIfExists(join(source, name, 'SKILL.md'));
          return { dir: target.dir, state: text === ours ? ('current' as const) : ('outdated' as const) };
        }),
      ),
    })),
  );
}

/**
 * Removes the shipped skills Forge placed in each target (a directory without Forge's marker is left
 * alone), then the directories it created there if they are empty, and updates the manifest.
 */
export async function uninstallSkills(
  targets: SkillTarget[],
  options: { env: NodeJS.ProcessEnv; source?: string },
): Promise<SkillsReport> {
  const path = manifestPath(options.env);
  const manifest = await readManifest(path);
  const names = await shippedSkills(options.source ?? SHIPPED_SKILLS_DIR);
  const reports: TargetReport[] = [];
  for (const target of targets) {
    const skills: TargetReport['skills'] = [];
    for (const name of names) {
      const dest = join(target.dir, name);
      if ((await stat(dest).catch(() => undefined)) === undefined) {
        skills.push({ name, action: 'absent' });
      } else if ((await stat(join(dest, SKILL_MARKER)).catch(() => undefined)) === undefined) {
        skills.push({ name, action: 'kept' });
      } else if (await changedSinceInstall(dest)) {
        skills.push({ name, action: 'changed' });
      } else {
        await rm(dest, { recursive: true, force: true });
        skills.push({ name, action: 'removed' });
      }
    }
    reports.push({ ...target, skills });
  }
  // Directories the manifest says Forge created, deepest first, when nothing else lives in them.
  const dirs = manifest
    .filter(
      (entry) =>
        entry.kind === 'dir' &&
        targets.some((t) => t.dir === entry.path || t.dir.startsWith(`${entry.path}${sep}`)),
    )
    .map((entry) => entry.path)
    .sort((a, b) => b.length - a.length);
  for (const dir of dirs) {
    if ((await readdir(dir).catch(() => ['?'])).length === 0) await rm(dir, { recursive: true, force: true });
  }
  await writeManifest(path, manifest);
  return { manifest: path, targets: reports };
}
