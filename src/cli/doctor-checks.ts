// The checks behind `forge-pack doctor`: each looks at one thing and says how to fix it when it is wrong.
// This file checks the machine (node, git, br, agent CLIs, skills); doctor-repo-checks.ts the repository.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { featuresOf } from '../beads/br/version.js';
import type { StoreChoice } from '../beads/open-store.js';
import { readFileIfExists } from '../infra/atomic-file.js';
import { checkConfig, checkGatePrograms, checkLocks, checkLoops, checkStore } from './doctor-repo-checks.js';
import type { DoctorCheck, DoctorContext } from './doctor-types.js';
import { parseAgentSpec } from '../agents/spec.js';
import {
  AGENT_CLIS,
  findExecutable,
  MIN_NODE,
  nodeIsSupported,
  probeAgentClis,
  probeGit,
  type ExecutableProbe,
} from './environment-probes.js';
import { FORGE_CONFIG_PATH, forgeConfigSchema, type ForgeConfig } from './forge-config.js';
import { outsideTree } from '../infra/trusted-path.js';
import { CONTAINMENT_ENV, containmentStatus, type Containment } from '../infra/containment.js';
import { programCacheStatus, type ProgramCacheStatus } from './program.js';

export type { CheckStatus, DoctorCheck, DoctorContext } from './doctor-types.js';

/** The skills shipped with this package (`skills/<name>/SKILL.md`). */
export const SHIPPED_SKILLS_DIR = fileURLToPath(new URL('../../skills/', import.meta.url));

export async function runDoctorChecks(ctx: DoctorContext): Promise<DoctorCheck[]> {
  const { deps, cwd } = ctx;
  const probe = { cwd, env: deps.env, timeoutMs: ctx.timeoutMs };
  const configCheck = await checkConfig(cwd);
  const config = configCheck.config ?? forgeConfigSchema.parse({});
  // The br the runner would run: by name, the first on PATH outside the working tree.
  const brPath = await outsideTree(config.br_path ?? 'br', cwd, deps.env);
  const [git, br, agents, ownAgents, skills, store, locks, loops, gates, containment] = await Promise.all([
    probeGit(probe),
    deps.storeFactories.probeBr({ env: deps.env, brPath }),
    probeAgentClis(probe),
    checkAgentCommands(config, cwd, deps.env),
    checkSkills(deps.env),
    checkStore(ctx, config),
    checkLocks(ctx),
    checkLoops(cwd, deps.loopFiles),
    checkGatePrograms(config, cwd, deps.env, { configFile: configCheck.config !== undefined }),
    containmentStatus(deps.env),
  ]);
  return [
    checkNode(ctx.nodeVersion),
    programCheck(withBuildScript(programCacheStatus())),
    gitCheck(git, cwd),
    configCheck.check,
    brCheck(br, ctx.store ?? config.store),
    store,
    agentsCheck(agents, config),
    containmentCheck(containment),
    ...(ownAgents === undefined ? [] : [ownAgents]),
    ...(gates === undefined ? [] : [gates]),
    skills,
    locks,
    ...loops,
  ];
}

function checkNode(version: string): DoctorCheck {
  const needed = `${MIN_NODE[0]}.${MIN_NODE[1]}`;
  if (nodeIsSupported(version))
    return { name: 'node', status: 'ok', summary: `${version} (Forge needs ≥ ${needed})` };
  return {
    name: 'node',
    status: 'fail',
    kind: 'environment',
    summary: `${version} is too old: Forge needs Node ≥ ${needed}`,
    fix: `Install Node ${needed} or newer (https://nodejs.org, or \`nvm install 20\`).`,
  };
}

/** The program's status, and whether the copy it runs from can build it again (a clone can, a package cannot). */
function withBuildScript(started: { status: ProgramCacheStatus; dir: string }): ProgramStart {
  return {
    ...started,
    buildable: existsSync(join(resolve(started.dir, '..', '..'), 'scripts', 'build.mjs')),
  };
}

interface ProgramStart {
  status: ProgramCacheStatus;
  /** Where the build put the program (dist/bundle). */
  dir: string;
  /** Whether the copy of Forge it belongs to has its build script: an npm package has not. */
  buildable: boolean;
}

/** Whether commands start from the code cache the build made for the program (src/cli/program.ts). */
export function programCheck({ status, dir, buildable }: ProgramStart): DoctorCheck {
  const root = resolve(dir, '..', '..');
  // A package ships the cache its packer's Node made, and neither its sources nor its build script.
  const rebuild = buildable
    ? `Run \`npm run build\` in ${root} (the copy of Forge these commands run from).`
    : `${root} is an installed package, without the sources to build from: commands work, only slower to start. For a cache made by this Node, install Forge from a clone with ./install.sh (it builds there).`;
  // Damage in a package: its files are not as installed, and installing it again puts them back.
  const repair = buildable ? rebuild : `Install Forge again: ${root} is not as it was installed.`;
  switch (status) {
    case 'used':
      return { name: 'program', status: 'ok', summary: "commands start from the build's code cache" };
    case 'rejected':
      return {
        name: 'program',
        status: 'warn',
        summary: `Node ${process.versions.node} cannot use the program's code cache (made by another Node, or under other V8 flags): each command starts ~45 ms slower`,
        fix: rebuild,
      };
    case 'missing':
      return {
        name: 'program',
        status: 'warn',
        summary: "the program's code cache is missing: each command starts ~45 ms slower",
        fix: rebuild,
      };
    case 'cache-damaged':
      return {
        name: 'program',
        status: 'warn',
        summary: `the program's code cache in ${dir} is not the one the build wrote (damaged), so it is not used: each command starts ~45 ms slower`,
        fix: repair,
      };
    case 'damaged':
      return {
        name: 'program',
        status: 'warn',
        summary: `the bundled program in ${dir} is not whole (cut short, or not the file the build wrote): commands run from the modules beside it, each starting ~45 ms slower`,
        fix: repair,
      };
    case 'unbuilt':
      return {
        name: 'program',
        status: 'info',
        summary: `running from the modules, not the bundled program: ${join(dir, 'program.json')} is missing or not the build's (\`npm run build\` makes it)`,
      };
  }
}

/** Whether an agent's leftovers die with it whatever they do, or only those the sweep can find. */
export function containmentCheck(containment: Containment): DoctorCheck {
  if (containment.kind === 'pid-namespace') {
    return {
      name: 'containment',
      status: 'ok',
      summary: 'agents run in a PID namespace of their own: nothing they start outlives them',
      details: { unshare: containment.unshare, flags: containment.flags },
    };
  }
  return {
    name: 'containment',
    status: 'warn',
    summary: `agents run without a PID namespace (${containment.why}): a process an agent hides from the sweep (\`setsid env -i …\`) can outlive its bead`,
    fix:
      containment.why === `${CONTAINMENT_ENV}=off`
        ? `Unset ${CONTAINMENT_ENV} to contain agents again.`
        : containment.why.includes('is not a setting')
          ? `Set ${CONTAINMENT_ENV} to off, auto or required (or unset it: auto).`
          : 'Install util-linux (`unshare`) and allow user namespaces (Ubuntu: an AppArmor profile for node, or sysctl kernel.apparmor_restrict_unprivileged_userns=0; Docker: a seccomp profile that permits unshare).',
  };
}

function gitCheck(git: Awaited<ReturnType<typeof probeGit>>, cwd: string): DoctorCheck {
  if (!git.ok && git.reason === 'git-missing') {
    return {
      name: 'git',
      status: 'fail',
      kind: 'environment',
      summary: `git not found (${git.detail})`,
      fix: 'Install git (https://git-scm.com/downloads) and put it on PATH.',
    };
  }
  if (!git.ok) {
    return {
      name: 'git',
      status: 'fail',
      kind: 'environment',
      summary: `git ${git.version ?? ''}, but ${cwd} is not inside a git repository`.replace('  ', ' '),
      fix: 'Run `git init` and commit once, or run doctor from your repository (-C <dir>).',
    };
  }
  if (!git.hasCommit) {
    return {
      name: 'git',
      status: 'warn',
      summary: `git ${git.version}; the repository ${git.topLevel} has no commit yet`,
      fix: 'Commit once (`git commit --allow-empty -m start`): loops record and revert from HEAD.',
    };
  }
  return { name: 'git', status: 'ok', summary: `git ${git.version}; repository ${git.topLevel}` };
}

function brCheck(br: { path: string; version: string } | undefined, choice: StoreChoice): DoctorCheck {
  if (br === undefined) {
    if (choice === 'br') {
      return {
        name: 'br',
        status: 'fail',
        kind: 'environment',
        summary: 'br not found on PATH, and the config (or --store) asks for it',
        fix: 'Install br (beads_rust) and put it on PATH, or set "store": "embedded" in .forge/config.json.',
      };
    }
    return { name: 'br', status: 'info', summary: 'not installed: beads live in the embedded store' };
  }
  const features = featuresOf(br.version);
  const yesNo = (value: boolean): string => (value ? 'yes' : 'no');
  const summary =
    `${br.version} at ${br.path}: ready --parent ${yesNo(features.readyParent)} (≥ 0.1.13), ` +
    `--epic ${yesNo(features.readyEpic)} (≥ 0.2.12), labels in ready rows ${yesNo(features.readyLabels)} (≥ 0.2.12)`;
  const details = { path: br.path, version: br.version, features };
  if (br.version === 'unknown') {
    return {
      name: 'br',
      status: 'warn',
      summary: `${br.path} printed no version; Forge uses the slowest, oldest-compatible protocol`,
      fix: 'Check that `br version --json` works; reinstall br if it does not.',
      details,
    };
  }
  if (!features.readyParent || !features.readyEpic) {
    return {
      name: 'br',
      status: 'warn',
      summary,
      fix: 'Works, with extra br calls per bead; upgrade br to 0.2.12 or newer for the fast path.',
      details,
    };
  }
  return { name: 'br', status: 'ok', summary, details };
}

function agentsCheck(found: ExecutableProbe[], config: ForgeConfig): DoctorCheck {
  const describe = (cli: ExecutableProbe): string =>
    cli.path === undefined
      ? `${cli.name} not found`
      : `${cli.name} ${cli.version ?? '?'} (${cli.path})${cli.problem === undefined ? '' : `: ${cli.problem}`}`;
  // Every known CLI that is installed, with its version; the rest only by name.
  const installed = found.filter((cli) => cli.path !== undefined);
  const absent = found.filter((cli) => cli.path === undefined).map((cli) => cli.name);
  const summary = [
    ...installed.map(describe),
    ...(absent.length === 0 ? [] : [`not found: ${absent.join(', ')}`]),
  ].join('; ');
  const details = { clis: found };
  const usable = found.filter((cli) => cli.path !== undefined && cli.problem === undefined);
  // The CLI each configured agent starts: an adapter's name, or the first word of a named agent's argv.
  const configured = new Set(
    Object.values(config.agents).map((spec) => {
      const text = spec.trim().replace(/^agent:/, '');
      const named = Object.hasOwn(config.agent_commands, text) ? config.agent_commands[text] : undefined;
      if (named !== undefined) return named[0] === 'sh' ? /exec (\S+)/.exec(named[2] ?? '')?.[1] : named[0];
      return /^(claude|codex|opencode|gemini)(?:-|$)/.exec(text)?.[1];
    }),
  );
  const missing = AGENT_CLIS.filter(
    (cli) => configured.has(cli.name) && !usable.some((u) => u.name === cli.name),
  );
  if (missing.length > 0) {
    return {
      name: 'agents',
      status: 'warn',
      summary: `${summary}; ${FORGE_CONFIG_PATH} uses ${missing.map((m) => m.name).join(' and ')}`,
      fix: missing.map((m) => m.install).join('; '),
      details,
    };
  }
  if (usable.length === 0) {
    return {
      name: 'agents',
      status: 'warn',
      summary,
      fix: `Install an agent CLI (${AGENT_CLIS[0].install}), or give ralph-loop --agent "<your command>".`,
      details,
    };
  }
  const broken = found.filter((cli) => cli.path !== undefined && cli.problem !== undefined);
  if (broken.length > 0) {
    return {
      name: 'agents',
      status: 'warn',
      summary,
      fix: `Check that ${broken.map((b) => `\`${b.name} --version\``).join(' and ')} works in this shell.`,
      details,
    };
  }
  return { name: 'agents', status: 'ok', summary, details };
}

/**
 * The user's own agents: each `agent_commands` entry, and each `agents` entry that is a command line
 * rather than an agent name, must start a program that exists. Undefined when there are none.
 */
async function checkAgentCommands(
  config: ForgeConfig,
  cwd: string,
  env: NodeJS.ProcessEnv,
): Promise<DoctorCheck | undefined> {
  const named = Object.entries(config.agent_commands).map(([name, argv]) => ({ name, argv }));
  const inline = Object.entries(config.agents).flatMap(([role, spec]) => {
    const parsed = parseAgentSpec(spec, { allowCommand: true, commands: config.agent_commands });
    return parsed.ok && parsed.spec.cli === 'command' && !Object.hasOwn(config.agent_commands, spec.trim())
      ? [{ name: `agents.${role}`, argv: parsed.spec.argv ?? [] }]
      : [];
  });
  const all = [...named, ...inline];
  if (all.length === 0) return undefined;
  const found = await Promise.all(
    all.map(async (agent) => ({
      ...agent,
      path: await findExecutable(agent.argv[0] ?? '', env, cwd),
    })),
  );
  const describe = (agent: (typeof found)[number]): string =>
    `${agent.name} → ${agent.argv[0] ?? ''}${agent.path === undefined ? ' not found' : ` (${agent.path})`}`;
  const missing = found.filter((agent) => agent.path === undefined);
  const details = { agents: found };
  if (missing.length > 0) {
    return {
      name: 'agent-commands',
      status: 'warn',
      summary: found.map(describe).join('; '),
      fix: `Install ${missing.map((m) => `\`${m.argv[0] ?? ''}\``).join(' and ')} or put it on PATH, or fix its argv in ${FORGE_CONFIG_PATH} (a relative path is taken from ${cwd}).`,
      details,
    };
  }
  return { name: 'agent-commands', status: 'ok', summary: found.map(describe).join('; '), details };
}

/** Where install.sh and `forge-pack skills install` put skills, in the order they look. */
export function skillLocations(env: NodeJS.ProcessEnv): { label: string; dir: string }[] {
  const home = env.HOME ?? homedir();
  const dirs = [
    ...(env.FORGE_SKILLS_DIR ? [{ label: 'FORGE_SKILLS_DIR', dir: resolve(env.FORGE_SKILLS_DIR) }] : []),
    ...(env.CLAUDE_CONFIG_DIR
      ? [{ label: 'claude', dir: join(resolve(env.CLAUDE_CONFIG_DIR), 'skills') }]
      : []),
    { label: 'claude', dir: join(home, '.claude', 'skills') },
    ...(env.CODEX_HOME ? [{ label: 'codex', dir: join(resolve(env.CODEX_HOME), 'skills') }] : []),
    { label: 'codex', dir: join(home, '.codex', 'skills') },
    { label: 'codex', dir: join(home, '.agents', 'skills') },
  ];
  return dirs.filter((entry, i) => dirs.findIndex((other) => other.dir === entry.dir) === i);
}

async function checkSkills(env: NodeJS.ProcessEnv): Promise<DoctorCheck> {
  const shipped = await listSkills(SHIPPED_SKILLS_DIR);
  const places: { label: string; dir: string; installed: number; outdated: string[] }[] = [];
  for (const { label, dir } of skillLocations(env)) {
    let installed = 0;
    const outdated: string[] = [];
    for (const name of shipped) {
      const theirs = await readFileIfExists(join(dir, name, 'SKILL.md'));
      if (theirs === undefined) continue;
      installed += 1;
      if (theirs !== (await readFile(join(SHIPPED_SKILLS_DIR, name, 'SKILL.md'), 'utf8')))
        outdated.push(name);
    }
    if (installed > 0) places.push({ label, dir, installed, outdated });
  }
  const details = { shipped, places };
  if (places.length === 0) {
    return {
      name: 'skills',
      status: 'warn',
      summary: `none of the ${shipped.length} Forge skills is installed for claude or codex`,
      fix: 'Run forge-pack skills install (or ./install.sh from a Forge checkout).',
      details,
    };
  }
  const summary = places
    .map(
      (p) =>
        `${p.installed}/${shipped.length} in ${p.dir}${p.outdated.length > 0 ? ` (${p.outdated.length} outdated)` : ''}`,
    )
    .join('; ');
  if (places.some((p) => p.outdated.length > 0 || p.installed < shipped.length)) {
    return {
      name: 'skills',
      status: 'warn',
      summary,
      fix: 'Run forge-pack skills install again to install the skills of this version.',
      details,
    };
  }
  return { name: 'skills', status: 'ok', summary, details };
}

async function listSkills(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const entry of entries) {
    if (entry.isDirectory() && (await readFileIfExists(join(dir, entry.name, 'SKILL.md'))) !== undefined) {
      names.push(entry.name);
    }
  }
  return names.sort();
}
