// Doctor's checks of the repository: its config, its bead store, runner locks, and registered loops.
import { pathExists } from '../infra/atomic-file.js';
import { readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { loadLoopConfig } from '../autoresearch/config.js';
import { LOOPS_REGISTRY_PATH, readLoopsRegistry } from '../autoresearch/workspace.js';
import { openBeadStore } from '../beads/open-store.js';
import { readFileIfExists } from '../infra/atomic-file.js';
import { AppError } from '../infra/errors.js';
import { findExecutable } from '../infra/executables.js';
import { isLockHolderLive, readLockFile } from '../infra/lock-file.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { DoctorCheck, DoctorContext } from './doctor-types.js';
import { FORGE_CONFIG_PATH, forgeConfigSchema, parseConfigText, type ForgeConfig } from './forge-config.js';
import { configuredGates } from './config-gates.js';
import { detectGates } from './detect-gates.js';

export async function checkConfig(cwd: string): Promise<{ check: DoctorCheck; config?: ForgeConfig }> {
  const text = await readFileIfExists(join(cwd, FORGE_CONFIG_PATH));
  if (text === undefined) {
    return {
      check: {
        name: 'config',
        status: 'warn',
        summary: `no ${FORGE_CONFIG_PATH}: the defaults apply`,
        fix: 'Run forge-pack init to write one (store, agents per role, gates).',
      },
    };
  }
  try {
    const config = parseConfigText(FORGE_CONFIG_PATH, text, forgeConfigSchema);
    const gates = Object.keys(config.gates);
    return {
      config,
      check: {
        name: 'config',
        status: 'ok',
        summary: `${FORGE_CONFIG_PATH} is valid (store ${config.store}, ${gates.length} gate${gates.length === 1 ? '' : 's'})`,
      },
    };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return {
      check: {
        name: 'config',
        status: 'fail',
        kind: 'config',
        summary: error.message.replace(/\n/g, '; '),
        fix: `Fix ${FORGE_CONFIG_PATH} (the message names the field), or regenerate it with forge-pack init --force.`,
      },
    };
  }
}

export async function checkStore(ctx: DoctorContext, config: ForgeConfig): Promise<DoctorCheck> {
  const { deps, cwd } = ctx;
  try {
    const opened = await openBeadStore(deps.storeFactories, {
      cwd,
      env: deps.env,
      choice: ctx.store ?? config.store,
      actor: ctx.actor ?? config.actor ?? 'forge',
      brPath: config.br_path,
      clock: deps.clock,
    });
    const open = await opened.store.list({});
    const where = opened.store.kind === 'br' ? 'br database in .beads/' : '.beads/issues.jsonl';
    return {
      name: 'store',
      status: 'ok',
      summary: `${opened.reason.replace(/^store: /, '')}; ${where} readable, ${open.length} open bead${open.length === 1 ? '' : 's'}`,
      details: { kind: opened.store.kind, open_beads: open.length },
    };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return {
      name: 'store',
      status: 'fail',
      kind: 'environment',
      summary: `the bead store cannot be opened: ${error.message}`,
      fix: error.hint ?? 'Run forge-pack init to create it.',
    };
  }
}

export async function checkLocks(ctx: DoctorContext): Promise<DoctorCheck> {
  const { cwd, deps } = ctx;
  const paths: string[] = [];
  const epicsDir = join(cwd, '.forge', 'epics');
  for (const entry of await readdir(epicsDir, { withFileTypes: true }).catch(() => [])) {
    if (entry.isDirectory()) paths.push(join(epicsDir, entry.name, 'ralph-loop.lock'));
  }
  const registry = await readLoopsRegistry(cwd).catch(() => ({}));
  for (const entry of Object.values(registry))
    paths.push(join(resolve(cwd, entry.workspace), 'ralph-loop.lock'));

  const stale: string[] = [];
  const live: string[] = [];
  const unreadable: string[] = [];
  for (const path of paths) {
    if (!(await pathExists(path))) continue;
    const holder = await readLockFile(path);
    const shown = path.startsWith(`${cwd}/`) ? path.slice(cwd.length + 1) : path;
    if (holder === undefined) unreadable.push(shown);
    else if (!(await isLockHolderLive(path, holder, deps.host, (pid) => ctx.isAlive(pid))))
      stale.push(`${shown} (pid ${holder.pid}, dead)`);
    else live.push(`${holder.epic} (pid ${holder.pid} on ${holder.host})`);
  }
  const details = { stale, live, unreadable };
  if (stale.length > 0 || unreadable.length > 0) {
    return {
      name: 'locks',
      status: 'warn',
      summary: [
        stale.length > 0 ? `stale: ${stale.join(', ')}` : '',
        unreadable.length > 0 ? `unreadable: ${unreadable.join(', ')}` : '',
      ]
        .filter((part) => part !== '')
        .join('; '),
      fix: 'The next ralph-loop run takes a stale lock over by itself; delete the file if no loop is running.',
      details,
    };
  }
  if (live.length > 0)
    return { name: 'locks', status: 'info', summary: `running: ${live.join(', ')}`, details };
  return { name: 'locks', status: 'ok', summary: 'no stale runner locks', details };
}

export async function checkLoops(cwd: string, files: LoopFiles): Promise<DoctorCheck[]> {
  let registry;
  try {
    registry = await readLoopsRegistry(cwd);
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return [
      {
        name: 'loops',
        status: 'fail',
        kind: 'config',
        summary: error.message,
        fix: error.hint ?? `Fix ${LOOPS_REGISTRY_PATH}.`,
      },
    ];
  }
  const epics = Object.entries(registry);
  if (epics.length === 0)
    return [{ name: 'loops', status: 'info', summary: `no loops in ${LOOPS_REGISTRY_PATH}` }];
  const checks: DoctorCheck[] = [];
  for (const [epic, entry] of epics) {
    const name = `loop ${epic}`;
    const root = resolve(cwd, entry.workspace);
    const isDir = await stat(root).then(
      (s) => s.isDirectory(),
      () => false,
    );
    if (!isDir) {
      checks.push({
        name,
        status: 'warn',
        summary: `workspace ${entry.workspace} is missing`,
        fix: `Remove "${epic}" from ${LOOPS_REGISTRY_PATH} if the loop is gone, or restore ${entry.workspace}.`,
      });
      continue;
    }
    try {
      const config = await loadLoopConfig(files, join(root, 'config.json'));
      checks.push({
        name,
        status: 'ok',
        summary: `${entry.workspace}: "${config.subject}", ${config.metric.type} metric, config valid`,
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      checks.push({
        name,
        status: 'fail',
        kind: 'config',
        summary: error.message.split(`${cwd}/`).join('').replace(/\n/g, '; '),
        fix: error.hint ?? `Fix ${entry.workspace}/config.json.`,
      });
    }
  }
  return checks;
}

/**
 * Each gate's program must exist (on PATH, or a path taken from the repo): a missing one stops every
 * run at the first code-writing bead. With no gate in a config of its own, the gates init would find
 * now are named (a config written before the repo had its tests, or by an init that knew fewer
 * settings files, runs none); undefined when there are none either.
 */
export async function checkGatePrograms(
  config: ForgeConfig,
  cwd: string,
  env: NodeJS.ProcessEnv,
  options: { configFile: boolean },
): Promise<DoctorCheck | undefined> {
  const gates = configuredGates(config);
  if (gates.length === 0) return options.configFile ? gatesToDetect(cwd) : undefined;
  const found = await Promise.all(
    gates.map(async (gate) => ({
      gate: gate.name,
      program: gate.argv[0] ?? '',
      path: (await findExecutable(gate.argv[0] ?? '', env.PATH ?? '', cwd)) ?? null,
    })),
  );
  const summary = found
    .map((g) => `${g.gate} → ${g.program}${g.path === null ? ' not found' : ''}`)
    .join('; ');
  const missing = found.filter((g) => g.path === null);
  if (missing.length === 0) return { name: 'gates', status: 'ok', summary, details: { gates: found } };
  return {
    name: 'gates',
    status: 'warn',
    summary,
    fix: `Install ${missing.map((g) => `\`${g.program}\``).join(' and ')} or put it on PATH, or fix the gate${missing.length > 1 ? 's' : ''} ${missing.map((g) => g.gate).join(', ')} in ${FORGE_CONFIG_PATH} "gates" (a relative path is taken from ${cwd}); until then ralph-loop stops at the first code-writing bead (or run it with --no-gates).`,
    details: { gates: found },
  };
}

async function gatesToDetect(cwd: string): Promise<DoctorCheck | undefined> {
  const detected = await detectGates(cwd);
  if (detected.length === 0) return undefined;
  const named = detected.map((gate) => `${gate.name} (${gate.argv.join(' ')}, from ${gate.source})`);
  const json = JSON.stringify(Object.fromEntries(detected.map((gate) => [gate.name, gate.argv])));
  return {
    name: 'gates',
    status: 'info',
    summary: `none configured, so code-writing beads close untested; this repo has ${named.join(', ')}`,
    fix: `To run them after each code-writing bead, add "gates": ${json} to ${FORGE_CONFIG_PATH}.`,
    details: { gates: [], detected },
  };
}
