// What `forge-pack init` does: checks, detection, questions, then the writes; loaded when init runs.
import { realpath, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { openBeadStore, type StoreChoice } from '../beads/open-store.js';
import { readFileIfExists, writeFileAtomic, writeJsonAtomic } from '../infra/atomic-file.js';
import { AppError, ConfigError, EnvironmentError, ExitCode, UsageError } from '../infra/errors.js';
import { workingDir, type GlobalOptions } from './common.js';
import type { CliDeps } from './deps.js';
import { knownAgentCli } from './agent-clis.js';
import { detectGates, type DetectedGate } from './detect-gates.js';
import {
  AGENT_CLIS,
  findExecutable,
  withProjectBin,
  probeGit,
  type AgentCliName,
  type ExecutableProbe,
} from './environment-probes.js';
import { FORGE_CONFIG_PATH, forgeConfigSchema, parseConfigText, type ForgeConfig } from './forge-config.js';
import {
  buildFreshConfig,
  describeAgents,
  describeGates,
  FORGE_GITIGNORE_PATH,
  installedAgentClis,
  mergeGitignore,
  type ForgeConfigFile,
} from './init-plan.js';
import { say } from './output.js';
import { choosePrompter, type Prompter, type PromptDeps } from './prompt.js';

/** What `forge-pack init` needs: the CLI's deps and a way to ask the user. */
export type InitDeps = CliDeps & PromptDeps;

export interface InitFlags {
  yes?: boolean;
  force?: boolean;
  prefix?: string;
}

type ExistingConfig =
  { state: 'none' } | { state: 'valid'; config: ForgeConfig } | { state: 'invalid'; error: ConfigError };

export interface InitReport {
  repo: string;
  config: {
    path: string;
    action: 'created' | 'kept' | 'replaced';
    backup?: string | undefined;
    value: unknown;
  };
  gitignore: { path: string; action: 'created' | 'updated' | 'unchanged'; added: string[] };
  store: { kind: 'br' | 'embedded'; version?: string | undefined; reason: string };
  gates_detected: { name: string; argv: string[]; source: string }[];
  agent_clis: { name: string; path?: string | undefined }[];
  notes: string[];
}

export async function runInit(deps: InitDeps, options: GlobalOptions, flags: InitFlags): Promise<InitReport> {
  const cwd = workingDir(deps, options);
  const notes: string[] = [];
  const git = await probeGit({ cwd, env: deps.env });
  if (!git.ok && git.reason === 'git-missing') {
    throw new EnvironmentError(`git is not installed or not on PATH (${git.detail}).`, {
      hint: 'Install git (https://git-scm.com/downloads), then run forge-pack init again.',
    });
  }
  if (!git.ok) {
    throw new EnvironmentError(`${cwd} is not inside a git repository.`, {
      hint: 'Forge keeps and reverts agent work with git: run `git init` there and commit once, or point -C at your repository.',
    });
  }
  if ((await realpath(git.topLevel)) !== (await realpath(cwd))) {
    notes.push(
      `This is a subdirectory of the repository ${git.topLevel}; Forge reads .forge/ from the directory its commands run in.`,
    );
  }
  if (!git.hasCommit) notes.push('The repository has no commit yet: commit once before running a loop.');

  const prompter = choosePrompter(deps, flags.yes === true);
  const existing = await readExistingConfig(cwd);
  const [brProbe, agentClis, gates] = await Promise.all([
    deps.storeFactories.probeBr({ env: deps.env, brPath: configuredBrPath(existing) ?? 'br' }),
    findAgentClis(cwd, deps.env),
    detectGates(cwd),
  ]);

  const replace = await shouldReplace(existing, flags, prompter, deps);
  let configValue: ForgeConfigFile | ForgeConfig;
  let storeChoice: StoreChoice;
  if (existing.state === 'valid' && !replace) {
    const config = existing.config;
    if (options.store !== undefined && options.store !== config.store) {
      throw new UsageError(
        `${FORGE_CONFIG_PATH} already sets "store": "${config.store}"; --store ${options.store} would not be used by later commands.`,
        {
          hint: `Edit "store" in ${FORGE_CONFIG_PATH}, or regenerate it: forge-pack init --force --store ${options.store}.`,
        },
      );
    }
    storeChoice = config.store;
    configValue = config;
    const missing = gates.filter((gate) => !(gate.name in config.gates));
    if (missing.length > 0) {
      notes.push(
        `Detected but not in your config: ${missing.map((g) => `${g.name} (${g.argv.join(' ')})`).join(', ')}; add them under "gates" or run forge-pack init --force.`,
      );
    }
  } else {
    storeChoice = options.store ?? (await chooseStore(brProbe, prompter));
    const chosenGates = await chooseGates(gates, prompter);
    const agentCli = await chooseAgentCli(installedAgentClis(agentClis), prompter);
    if (agentCli === undefined && installedAgentClis(agentClis).length > 0) {
      notes.push(`No agent was chosen, so the config names none: ${NO_AGENT_NOTE}`);
    }
    configValue = buildFreshConfig({
      store: storeChoice,
      agentCli,
      gates: chosenGates,
      actor: options.actor,
    });
  }
  if (storeChoice === 'br' && brProbe === undefined) {
    throw new EnvironmentError('The br store was asked for, but br is not on PATH.', {
      hint: 'Install br (beads_rust) and put it on PATH, or run forge-pack init --store embedded.',
    });
  }

  const gitignorePath = join(cwd, FORGE_GITIGNORE_PATH);
  const gitignore = mergeGitignore(await readFileIfExists(gitignorePath));
  const configAction = existing.state === 'none' ? 'created' : replace ? 'replaced' : 'kept';
  if (prompter !== undefined) {
    const plan = [
      configAction === 'kept' ? undefined : `write ${FORGE_CONFIG_PATH}`,
      gitignore.action === 'unchanged' ? undefined : `write ${FORGE_GITIGNORE_PATH}`,
      `set up the ${storeChoice === 'auto' ? (brProbe === undefined ? 'embedded' : 'br') : storeChoice} bead store`,
    ].filter((step) => step !== undefined);
    if (!(await prompter.confirm(`Forge will ${plan.join(', ')} in ${cwd}. Go ahead?`, true))) {
      throw new AppError('Stopped; nothing was written.', { exitCode: ExitCode.failure });
    }
  }

  const configPath = join(cwd, FORGE_CONFIG_PATH);
  let backup: string | undefined;
  if (configAction === 'replaced') {
    backup = `${FORGE_CONFIG_PATH}.${timestampForFile(deps.clock.now())}.bak`;
    await rename(configPath, join(cwd, backup));
  }
  if (configAction !== 'kept') await writeJsonAtomic(configPath, configValue);
  if (gitignore.action !== 'unchanged') await writeFileAtomic(gitignorePath, gitignore.text);

  const effective: Partial<ForgeConfig> = configValue;
  const opened = await openBeadStore(deps.storeFactories, {
    cwd,
    env: deps.env,
    choice: storeChoice,
    actor: options.actor ?? effective.actor ?? 'forge',
    brPath: effective.br_path,
    clock: deps.clock,
  });
  await opened.store.init({ prefix: flags.prefix });

  if (!agentClis.some((cli) => cli.path !== undefined)) {
    notes.push(
      `No agent CLI found (${AGENT_CLIS.map((c) => c.name).join(', ')}), so the config names none: install one (${AGENT_CLIS[0].install}), or ${NO_AGENT_NOTE}`,
    );
  }
  return {
    repo: cwd,
    config: {
      path: FORGE_CONFIG_PATH,
      action: configAction,
      backup,
      value: configValue,
    },
    gitignore: { path: FORGE_GITIGNORE_PATH, action: gitignore.action, added: gitignore.added },
    store: {
      kind: opened.store.kind,
      version: opened.brVersion,
      reason: opened.reason,
    },
    gates_detected: gates.map((gate) => ({ ...gate })),
    agent_clis: agentClis,
    notes,
  };
}

async function readExistingConfig(cwd: string): Promise<ExistingConfig> {
  const text = await readFileIfExists(join(cwd, FORGE_CONFIG_PATH));
  if (text === undefined) return { state: 'none' };
  try {
    return { state: 'valid', config: parseConfigText(FORGE_CONFIG_PATH, text, forgeConfigSchema) };
  } catch (error) {
    if (error instanceof ConfigError) return { state: 'invalid', error };
    throw error;
  }
}

/**
 * Which agent CLIs are on PATH or in node_modules/.bin; init only needs to know they exist (doctor
 * asks their versions).
 */
async function findAgentClis(cwd: string, env: NodeJS.ProcessEnv): Promise<ExecutableProbe[]> {
  const searched = { ...env, PATH: withProjectBin(env.PATH, cwd) };
  return Promise.all(
    AGENT_CLIS.map(async ({ name }) => {
      const path = await findExecutable(name, searched, cwd);
      return path === undefined ? { name } : { name, path };
    }),
  );
}

function configuredBrPath(existing: ExistingConfig): string | undefined {
  return existing.state === 'valid' ? existing.config.br_path : undefined;
}

/** An existing config is replaced only with --force, or when the user says so at the prompt. */
async function shouldReplace(
  existing: ExistingConfig,
  flags: InitFlags,
  prompter: Prompter | undefined,
  deps: InitDeps,
): Promise<boolean> {
  if (existing.state === 'none') return false;
  if (flags.force === true) return true;
  if (existing.state === 'invalid') {
    if (prompter !== undefined) {
      say(deps, existing.error.message);
      if (await prompter.confirm(`Replace ${FORGE_CONFIG_PATH} (the old file is kept as a .bak)?`, false)) {
        return true;
      }
    }
    throw new ConfigError(existing.error.message, {
      hint: `Fix it, or replace it with forge-pack init --force (the old file is kept as ${FORGE_CONFIG_PATH}.<time>.bak).`,
    });
  }
  if (prompter === undefined) return false;
  return prompter.confirm(
    `${FORGE_CONFIG_PATH} exists. Replace it with freshly detected settings (the old file is kept as a .bak)?`,
    false,
  );
}

/**
 * The store to pin in the config: br when it is installed (unless the user declines), else the
 * embedded store. Pinned rather than `auto`, so installing br later does not hide beads kept in
 * `.beads/issues.jsonl` (adopt them with `br init && br sync --import-only`, then set "store": "br").
 */
async function chooseStore(
  br: { version: string } | undefined,
  prompter: Prompter | undefined,
): Promise<StoreChoice> {
  if (br === undefined) return 'embedded';
  if (prompter === undefined) return 'br';
  const useBr = await prompter.confirm(
    `br ${br.version} is installed. Keep beads in br (no: in .beads/issues.jsonl without br)?`,
    true,
  );
  return useBr ? 'br' : 'embedded';
}

const NO_AGENT_NOTE =
  'run with ralph-loop <epic> --agent "<your command>", or name your own agent in .forge/config.json "agent_commands" (e.g. "my-agent": ["my-agent", "--flag"]) and use its name in "agents".';

/**
 * The agent CLI every role uses: asked on a terminal among those installed (a no to each writes
 * none), else the first installed one. Never one the machine does not have.
 */
async function chooseAgentCli(
  installed: readonly AgentCliName[],
  prompter: Prompter | undefined,
): Promise<AgentCliName | undefined> {
  if (prompter === undefined) return installed[0];
  for (const cli of installed) {
    if (await prompter.confirm(`Use ${knownAgentCli(cli).label} as the agent for every role?`, true))
      return cli;
  }
  return undefined;
}

async function chooseGates(gates: DetectedGate[], prompter: Prompter | undefined): Promise<DetectedGate[]> {
  if (prompter === undefined) return gates;
  const chosen: DetectedGate[] = [];
  for (const gate of gates) {
    const question = `Use \`${gate.argv.join(' ')}\` (from ${gate.source}) as the "${gate.name}" gate?`;
    if (await prompter.confirm(question, true)) chosen.push(gate);
  }
  return chosen;
}

/** `2026-01-21T21-46-54Z`: sortable, and safe in a file name on every system. */
function timestampForFile(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
}

export function printInitReport(deps: CliDeps, report: InitReport): void {
  const config = report.config.value as Partial<ForgeConfig>;
  const configLine =
    report.config.action === 'kept'
      ? 'kept as it is (forge-pack init --force regenerates it)'
      : `${report.config.action}${report.config.backup === undefined ? '' : ` (old file: ${report.config.backup})`}`;
  const store = report.store.version === undefined ? report.store.kind : `br ${report.store.version}`;
  const lines = [
    `Forge is set up in ${report.repo}:`,
    `  ${FORGE_CONFIG_PATH.padEnd(20)} ${configLine}`,
    `  ${'store'.padEnd(20)} ${store}, initialised (config says "${config.store ?? 'auto'}")`,
    `  ${'agents'.padEnd(20)} ${describeAgents(config.agents ?? {})}`,
    `  ${'gates'.padEnd(20)} ${describeGates(config.gates ?? {})}`,
    `  ${FORGE_GITIGNORE_PATH.padEnd(20)} ${report.gitignore.action}`,
    ...report.notes.map((note) => `note: ${note}`),
    'Next: forge-pack doctor, then forge-pack loop "<subject>" … (or ralph-loop <epic-id> for an epic of your own).',
  ];
  say(deps, lines.join('\n'));
}
