// A hard-metric loop on a temp git repo with the runner's state guard around scripted fake agents: the
// executors and the bead guard wired as `ralph-loop` wires them, without spawning any agent.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { parseLoopConfig, type LoopConfigFile } from '../../src/autoresearch/config.js';
import {
  createAutoresearchExecutors,
  type AutoresearchContext,
} from '../../src/autoresearch/executors/index.js';
import {
  createLoopBeadGuard,
  guardAgentExecutor,
  type StateGuardContext,
} from '../../src/autoresearch/state-guard.js';
import { recordHead } from '../../src/autoresearch/loop-head.js';
import { createOutsideWatch } from '../../src/autoresearch/outside-watch.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { Bead, BeadStore } from '../../src/beads/types.js';
import { journaledLoopFiles } from '../../src/infra/journaled-loop-files.js';
import { diskLoopFiles, type LoopFiles } from '../../src/infra/loop-files.js';
import { createGit } from '../../src/infra/git.js';
import { runProcess } from '../../src/infra/process.js';
import type { BeadGuard, ExecutionRequest, ExecutionResult, Executor } from '../../src/loop/types.js';
import { DEFAULT_ROLE } from '../../src/loop/select.js';
import { createFakeClock, type FakeClock } from './fake-clock.js';
import { createTempRepo, type TempRepo } from './git-repo.js';

export type AgentBehaviour = (request: ExecutionRequest) => Promise<ExecutionResult> | ExecutionResult;

export interface LoopFixture {
  repo: TempRepo;
  workspace: string;
  /** The loop's state files, on the real disk beside the repository. */
  files: LoopFiles;
  store: BeadStore;
  epicId: string;
  clock: FakeClock;
  guardContext: StateGuardContext;
  context: AutoresearchContext;
  executors: Record<string, Executor>;
  guard: BeadGuard;
  /** What the fake full-tools agent does on its next runs. */
  full: { behaviour: AgentBehaviour; calls: number };
  readOnly: { behaviour: AgentBehaviour; calls: number };
  request(bead: Partial<Bead> & { labels: string[] }): ExecutionRequest;
  /** Runs a role's bead through its executor, as the runner would. */
  run(role: string, iter: number): Promise<ExecutionResult>;
  baseline(): Promise<void>;
}

export const SCORE_SCRIPT = `const fs = require('node:fs');
const text = fs.readFileSync('src/value.txt', 'utf8');
console.log(JSON.stringify({ score: Number(text.trim()) }));
`;

export interface LoopFixtureOptions {
  /** Wrap the fake agents in the runner's state guard, as `ralph-loop` does (default true). */
  guarded?: boolean;
}

export async function createLoopFixture(
  overrides: Partial<LoopConfigFile> = {},
  options: LoopFixtureOptions = {},
): Promise<LoopFixture> {
  const repo = await createTempRepo({
    'src/value.txt': '10\n',
    'scripts/score.js': SCORE_SCRIPT,
    'notes.md': 'user notes\n',
    '.gitignore': '.autoresearch/\n',
  });
  const workspace = join(repo.dir, '.autoresearch');
  const store = createMemoryBeadStore();
  const epicId = (await store.create({ title: 'autoresearch: value', type: 'epic' })).id;
  await mkdir(join(workspace, 'templates'), { recursive: true });
  const configFile: LoopConfigFile = {
    subject: 'value',
    epic_id: epicId,
    metric: {
      type: 'hard',
      command: 'node scripts/score.js',
      score: { from: 'json', path: 'score' },
      direction: 'maximize',
      timeout_seconds: 30,
    },
    scope: { doer_paths: ['src/'], judge_paths: ['src/'] },
    caps: { max_iterations: 10, plateau_threshold: 3 },
    ...overrides,
  };
  await writeFile(join(workspace, 'config.json'), `${JSON.stringify(configFile, null, 2)}\n`);
  await writeFile(join(workspace, 'program.md'), 'Make the value large.\n');
  await writeFile(join(workspace, 'templates', 'doer.hbs'), '# custom doer template\n');
  await writeFile(join(workspace, 'research-log.jsonl'), '');
  const config = parseLoopConfig(configFile, 'config.json');
  const full = { behaviour: (() => ({ outcome: 'ok', message: 'done' })) as AgentBehaviour, calls: 0 };
  const readOnly = { behaviour: full.behaviour, calls: 0 };
  const fake = (slot: typeof full, kind: string): Executor => ({
    kind,
    writesCode: kind === 'agent',
    async execute(request) {
      slot.calls += 1;
      return slot.behaviour(request);
    },
  });
  const clock = createFakeClock();
  // The executors work on a real git tree, so the loop's files are on disk beside it.
  // Announced to the seal's journal as `ralph-loop` does (cli/loop-run-parts.ts).
  const vaultDir = join(repo.dir, '.git', 'forge', 'bd-e');
  const files = journaledLoopFiles(diskLoopFiles(), { dir: vaultDir, repo: repo.dir });
  const guardContext: StateGuardContext = {
    repo: repo.dir,
    cwd: repo.dir,
    workspace,
    files,
    config,
    epicId,
    store,
    git: repo.git,
    now: () => clock.now(),
    vaultDir,
    env: repo.env,
    gitAt: (cwd) => createGit({ cwd, env: repo.env }),
  };
  const context: AutoresearchContext = {
    repo: repo.dir,
    workspace,
    files,
    config,
    store,
    git: repo.git,
    gitAt: (cwd) => createGit({ cwd, env: repo.env }),
    clock,
    agents:
      options.guarded === false
        ? { full: fake(full, 'agent'), readOnly: fake(readOnly, 'read-only agent') }
        : {
            full: guardAgentExecutor(fake(full, 'agent'), guardContext),
            readOnly: guardAgentExecutor(fake(readOnly, 'read-only agent'), guardContext),
          },
    runMetric: (command, options) =>
      runProcess(command, {
        cwd: options.cwd,
        env: options.withEnv === undefined ? repo.env : options.withEnv(repo.env),
        timeoutMs: options.timeoutMs,
        signal: options.signal,
      }),
    ...(options.guarded === false
      ? {}
      : {
          watchOutside: createOutsideWatch({
            git: repo.git,
            trees: [repo.dir],
            env: repo.env,
            dependencies: { ...guardContext, allowed: config.scope.doer_paths },
          }),
        }),
  };
  await recordHead(files, workspace, repo.git);
  const executors = createAutoresearchExecutors(context);
  const request = (bead: Partial<Bead> & { labels: string[] }): ExecutionRequest => {
    const role = bead.labels.find((label) => label.startsWith('role:'))?.slice(5) ?? DEFAULT_ROLE;
    return {
      bead: {
        id: bead.id ?? `bd-e.${role}`,
        title: bead.title ?? `${role}: value`,
        status: 'in_progress',
        priority: 2,
        issue_type: 'task',
        created_at: '2026-11-22T10:00:00Z',
        updated_at: '2026-11-22T10:00:00Z',
        labels: bead.labels,
      },
      epicId,
      role,
      agentSpec: 'fake',
      agentFromLabel: false,
      attempt: 1,
      cwd: repo.dir,
      signal: new AbortController().signal,
      timeoutMs: 60_000,
      transcriptPath: join(workspace, 'logs', `${role}.log`),
    };
  };
  const run = (role: string, iter: number) =>
    executors[role]!.execute(
      request({ labels: [`role:${role}`, `iter:${iter}`], title: `${role}-${iter}: value` }),
    );
  return {
    repo,
    workspace,
    files,
    store,
    epicId,
    clock,
    guardContext,
    context,
    executors,
    guard: createLoopBeadGuard(guardContext),
    full,
    readOnly,
    request,
    run,
    async baseline() {
      expect((await run('judge', 0)).outcome).toBe('ok');
      expect((await run('arbiter', 0)).message).toContain('baseline');
    },
  };
}

/** A doer behaviour that writes the value (an honest improvement) and then does `extra`. */
export function doerWrites(
  f: LoopFixture,
  value: string,
  extra: () => Promise<void> = async () => undefined,
): AgentBehaviour {
  return async () => {
    await f.repo.write('src/value.txt', `${value}\n`);
    await extra();
    return { outcome: 'ok', message: 'edited', finalText: `HYPOTHESIS: ${value} is better` };
  };
}
