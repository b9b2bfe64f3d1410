// Figure 11: no-op beads of a fixed length run `--parallel N` on this machine (worktrees), or through
// the queue executor (a real redis-server, a bare remote, N `forge-pack worker` processes): the run's
// wall time and the runner's own cost per bead beyond the agents' time (wall − ⌈beads / N⌉ × bead
// time, over the beads).
import { spawn, type ChildProcess } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startRedis } from '../../test/support/redis-server.js';
import {
  BIN,
  cleanEnv,
  expectSuccess,
  initGitRepo,
  NODE,
  noopAgentSpec,
  runTimed,
  tempDir,
} from './support.js';

export interface QueueRun {
  /** `parallel`: worktrees on this machine; `queue`: the queue executor and `workers` worker processes. */
  mode: 'parallel' | 'queue';
  beads: number;
  beadMs: number;
  /** Beads at once: --parallel N, and as many workers for the queue. */
  workers: number;
  wallMs: number;
  overheadPerBeadMs: number;
}

export async function measureQueueRun(options: {
  mode: 'parallel' | 'queue';
  beads: number;
  beadMs: number;
  workers: number;
}): Promise<QueueRun> {
  const dir = await tempDir('queue');
  const queued = options.mode === 'queue';
  const redis = queued ? await startRedis() : undefined;
  const children: ChildProcess[] = [];
  try {
    const repo = join(dir.path, 'repo');
    const remote = join(dir.path, 'remote.git');
    const env = cleanEnv(dir.path);
    const run = async (file: string, args: string[], cwd = repo) =>
      expectSuccess(await runTimed(file, args, { cwd, env }), `${file} ${args.join(' ')}`);
    await run('mkdir', ['-p', repo], dir.path);
    await initGitRepo(repo, dir.path);
    await run('git', ['init', '-q', '--bare', remote], dir.path);
    await run('git', ['remote', 'add', 'origin', remote]);
    const forge = (args: string[]) => run(NODE, [BIN.forgePack, '--store', 'embedded', ...args]);
    await forge(['beads', 'init']);
    const epic = (
      JSON.parse((await forge(['beads', 'create', 'Epic', '-t', 'epic', '--json'])).stdout) as { id: string }
    ).id;
    for (let i = 0; i < options.beads; i++) await forge(['beads', 'create', `no-op ${i}`, '--parent', epic]);
    const agent = join(dir.path, 'sleep-agent.mjs');
    await writeFile(
      agent,
      `process.stdin.resume();\nprocess.stdin.on('end', () => setTimeout(() => undefined, ${options.beadMs}));\n`,
    );
    for (let i = 0; redis !== undefined && i < options.workers; i++) {
      const child = spawn(
        NODE,
        [BIN.forgePack, 'worker', '--redis', redis.url, '--cache', join(dir.path, `worker-${i}`)],
        {
          cwd: dir.path,
          env,
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      );
      children.push(child);
      await new Promise<void>((resolve, reject) => {
        child.stdout?.on('data', (data: Buffer) => {
          if (data.toString().includes(' on redis://')) resolve();
        });
        child.once('exit', (code) => reject(new Error(`worker exited ${String(code)}`)));
      });
    }
    const timed = await run(NODE, [
      BIN.ralphLoop,
      '--store',
      'embedded',
      epic,
      '--agent',
      noopAgentSpec(agent),
      ...(redis === undefined ? [] : ['--executor', 'queue', '--redis', redis.url]),
      '--parallel',
      String(options.workers),
    ]);
    const agentMs = Math.ceil(options.beads / options.workers) * options.beadMs;
    return { ...options, wallMs: timed.ms, overheadPerBeadMs: (timed.ms - agentMs) / options.beads };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await redis?.stop();
    await dir.remove();
  }
}
