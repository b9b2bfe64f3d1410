// Figure 6 (optional): the same no-op epic through another runner command on the same fake br, next to
// ralph-loop. The command is split like any Forge command line (no shell) and may use placeholders:
// {epic} the epic id, {agent} the no-op agent as one command line, {agent_script} its script, {node},
// {root} the project root, {beads_dir}. The env also carries FORGE_BENCH_EPIC and FORGE_BENCH_AGENT.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { splitCommandLine } from '../../src/infra/command-line.js';
import { runRalphLoop } from './runner-process.js';
import { brEnv, countBrCalls, seedFakeBrEpic } from './seed.js';
import { initGitRepo, NODE, noopAgentSpec, runTimed, tempDir, writeNoopAgent } from './support.js';

export interface CompareRun {
  command: string;
  exitCode: number | null;
  wallMs: number;
  closed: number;
  wallPerBeadMs: number;
  brCallsPerBead: number;
}

export interface Compare {
  beads: number;
  ralphLoop: CompareRun;
  other: CompareRun;
  /** other ÷ ralph-loop, wall time per closed bead. */
  ratio: number;
}

/** The argv of `command` with its placeholders filled in; a command a shell would be needed for is refused. */
export function compareArgv(command: string, values: Record<string, string>): string[] {
  const split = splitCommandLine(command, '--compare');
  if (!split.ok) throw new Error(`--compare: ${split.reason}`);
  return split.argv.map((word) => word.replace(/\{(\w+)\}/g, (all, name: string) => values[name] ?? all));
}

async function closedChildren(beadsDir: string, epicId: string): Promise<number> {
  const state = JSON.parse(await readFile(join(beadsDir, 'fake-br-state.json'), 'utf8')) as {
    issues: Record<string, { status: string }>;
  };
  return Object.entries(state.issues).filter(
    ([id, issue]) => id.startsWith(`${epicId}.`) && issue.status === 'closed',
  ).length;
}

export async function measureCompare(command: string, beads: number, brVersion = '0.2.19'): Promise<Compare> {
  const scratch = await tempDir('compare');
  const mine = await seedFakeBrEpic(beads, brVersion);
  const theirs = await seedFakeBrEpic(beads, brVersion);
  try {
    const agentScript = await writeNoopAgent(scratch.path);
    const agent = noopAgentSpec(agentScript);
    await initGitRepo(mine.workspace.root, mine.workspace.root);
    await initGitRepo(theirs.workspace.root, theirs.workspace.root);

    const own = await runRalphLoop({
      cwd: mine.workspace.root,
      env: brEnv(mine.workspace),
      epicId: mine.epicId,
      store: 'br',
      agentSpec: agent,
      beads,
    });
    const ownCalls = await countBrCalls(mine.workspace);
    const ralphLoop: CompareRun = {
      command: 'ralph-loop --store br {epic} --agent {agent}',
      exitCode: own.process.exitCode,
      wallMs: own.wallMs,
      closed: own.closed,
      wallPerBeadMs: own.wallMs / own.closed,
      brCallsPerBead: ownCalls.total / own.closed,
    };

    const argv = compareArgv(command, {
      epic: theirs.epicId,
      agent,
      agent_script: agentScript,
      node: NODE,
      root: theirs.workspace.root,
      beads_dir: theirs.beadsDir,
    });
    const [file, ...args] = argv;
    if (file === undefined) throw new Error('--compare: the command is empty');
    const env = { ...brEnv(theirs.workspace), FORGE_BENCH_EPIC: theirs.epicId, FORGE_BENCH_AGENT: agent };
    const run = await runTimed(file, args, { cwd: theirs.workspace.root, env, timeoutMs: 900_000 });
    const closed = await closedChildren(theirs.beadsDir, theirs.epicId);
    const theirCalls = await countBrCalls(theirs.workspace);
    const other: CompareRun = {
      command,
      exitCode: run.exitCode,
      wallMs: run.ms,
      closed,
      wallPerBeadMs: closed === 0 ? Number.NaN : run.ms / closed,
      brCallsPerBead: closed === 0 ? Number.NaN : theirCalls.total / closed,
    };
    if (closed === 0) {
      throw new Error(
        `--compare: "${command}" closed no bead of ${theirs.epicId} (exit ${String(run.exitCode)}):\n${run.stderr.slice(-1500)}`,
      );
    }
    return { beads, ralphLoop, other, ratio: other.wallPerBeadMs / ralphLoop.wallPerBeadMs };
  } finally {
    await mine.workspace.cleanup();
    await theirs.workspace.cleanup();
    await scratch.remove();
  }
}
