// `forge-pack worker`: takes bead attempts off the Redis queue a `ralph-loop --executor queue` fills,
// runs each with this machine's agents and credentials, pushes the result to the job's git remote.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { refuseUncontainedRun } from '../infra/containment.js';
import { sweepMarkedProcesses } from '../infra/process.js';
import { withRunMark } from '../infra/run-marks.js';
import { claimRunRecord } from '../infra/run-records.js';
import type { Command } from 'commander';
import { reachRedis, startAttemptWorkers } from '../dispatch/queue/bullmq-adapter.js';
import { createAttemptProcessor } from '../dispatch/queue/attempt-worker.js';
import type { QueueJob } from '../dispatch/queue/job-schema.js';
import { queueNameForKind } from '../dispatch/queue/job-schema.js';
import { agentAdapters } from '../agents/registry.js';
import { ExitCode, UsageError } from '../infra/errors.js';
import type { CliDeps } from './deps.js';
import { createAgentExecutors, createExecutorRegistry } from './executors.js';

interface WorkerFlags {
  redis: string;
  concurrency: string;
  cache?: string;
  agents?: string;
  lockMs: string;
}

function positiveInt(text: string, what: string): number {
  if (!/^\d+$/.test(text) || Number(text) < 1)
    throw new UsageError(`${what} must be a whole number ≥ 1, got "${text}"`);
  return Number(text);
}

/** `claude=2,codex=1` → a concurrency per agent kind; kinds not named get `fallback`. */
export function agentLimits(spec: string | undefined, fallback: number): Map<string, number> {
  const limits = new Map(Object.keys(agentAdapters).map((kind) => [kind, fallback]));
  if (spec === undefined) return limits;
  for (const part of spec.split(',')) {
    const [kind = '', limit = ''] = part.split('=').map((s) => s.trim());
    if (!limits.has(kind))
      throw new UsageError(
        `--agents: unknown agent kind "${kind}" (known: ${Object.keys(agentAdapters).join(', ')})`,
      );
    // 0 takes none of that kind's attempts (no credentials for it on this machine).
    if (!/^\d+$/.test(limit)) throw new UsageError(`--agents: "${part}" is not kind=limit`);
    limits.set(kind, Number(limit));
  }
  return limits;
}

export function defineWorkerCommand(command: Command, deps: CliDeps): void {
  command
    .usage('--redis <url> [options]')
    .requiredOption('--redis <url>', 'the Redis the runner queues attempts on (redis://host:6379)')
    .option('--concurrency <n>', 'attempts of each agent kind run at once on this machine', '1')
    .option(
      '--cache <dir>',
      'mirrors of the remotes and attempt worktrees, and a record of each worker using it, so the next one ends what a killed one left running (default: ~/.cache/forge/worker)',
    )
    .option('--agents <kind=limit,...>', 'a limit per agent kind, e.g. claude=2,codex=1,gemini=0 (0: none)')
    .option(
      '--lock-ms <ms>',
      "how long a job's lock outlives this worker if it dies (renewed at half)",
      '30000',
    )
    .action(async (flags: WorkerFlags) => {
      await refuseUncontainedRun();
      const concurrency = positiveInt(flags.concurrency, '--concurrency');
      const lockMs = positiveInt(flags.lockMs, '--lock-ms');
      const limits = agentLimits(flags.agents, concurrency);
      const cacheDir = flags.cache ?? join(deps.env.HOME ?? deps.cwd, '.cache', 'forge', 'worker');
      const worker = `${deps.host}:${deps.pid}`;
      // A worker killed outright leaves its agents running; the next worker started on this cache ends
      // them, by the mark each carries, before it takes anything.
      const mark = `worker-${randomBytes(8).toString('hex')}`;
      const record = await claimRunRecord({
        dir: join(cacheDir, 'workers'),
        host: deps.host,
        pid: deps.pid,
        mark,
        startedAt: new Date(deps.clock.now()).toISOString(),
        endRun: (dead) => sweepMarkedProcesses(dead, { graceMs: 0 }),
      });
      const say = (line: string): void => void deps.stdout.write(`${line}\n`);
      for (const dead of record.ended) say(`ended what the worker ${dead}, which is gone, left running`);
      // A job naming one of the runner's own agents (agent_commands) carries its argv.
      const executors = (job: QueueJob) => {
        const commands = job.agentCommand === undefined ? {} : { [job.agentSpec.trim()]: job.agentCommand };
        return createExecutorRegistry(
          createAgentExecutors((spec, how) => deps.agentFactory(spec, { ...how, commands }), deps.env),
        );
      };
      const pids = new Set<number>();
      const runAttempt = createAttemptProcessor({
        cacheDir,
        env: deps.env,
        executors,
        worker,
        onSpawn: (_id, pid) => pids.add(pid),
      });
      const queues = new Map(
        [...limits].filter(([, limit]) => limit > 0).map(([kind, limit]) => [queueNameForKind(kind), limit]),
      );
      await reachRedis(flags.redis);
      const workers = await startAttemptWorkers(flags.redis, {
        queues,
        lockDurationMs: lockMs,
        onError: (error) => deps.stderr.write(`worker: ${error.message}\n`),
        async process(job) {
          say(`took ${job.attemptId}`);
          const result = await withRunMark(mark, () => runAttempt(job));
          say(
            `finished ${job.attemptId}: ${result.outcome}${result.commit === undefined ? '' : ` ${result.commit.slice(0, 12)}`} (${result.message})`,
          );
          return result;
        },
      });
      // Listening before the line that says it is up: a SIGTERM sent on seeing that line could land
      // before a handler was in place, and end the worker as SIGTERM's default does (seen under load).
      // Still listening while it stops: a second signal ends its agents and it at once.
      let off = (): void => undefined;
      const dropped = new Promise<boolean>((resolve) => {
        off = deps.onInterrupt((count) => {
          if (count > 1) {
            for (const pid of pids) deps.killProcessGroup(pid);
            deps.exitNow(ExitCode.interrupted);
            return;
          }
          say('stopping: no new attempts; the running ones are stopped');
          void workers.close().then(resolve);
        });
      });
      say(
        `worker ${worker} on ${flags.redis}: ${[...limits].map(([kind, limit]) => `${kind}=${limit}`).join(',')}; cache ${cacheDir}`,
      );
      const wasDropped = await dropped;
      off();
      await record.release();
      if (!wasDropped) {
        say('stopped');
        return;
      }
      // Redis had gone: what the queue library still retries would keep this process for ever.
      say('stopped (Redis did not answer; its connections were dropped)');
      deps.exitNow(ExitCode.ok);
    });
}
