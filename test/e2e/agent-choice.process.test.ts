// Which agent runs, as a new user meets it: init on a machine without claude, --agent over labels and
// config, --dry-run naming where each choice came from, and the user's own named agents (the CLIs'
// programs in the test's process; the agents they start are processes).
import { execa } from 'execa';
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, runCliInProcess, type CliResult } from '../support/cli.js';
import { commandPath } from '../support/command-path.js';

/** The user's own agent: logs how it was called, then does a little work in the working tree. */
const MY_AGENT = `#!/usr/bin/env node
import { appendFileSync, writeFileSync } from 'node:fs';
let prompt = '';
process.stdin.on('data', (chunk) => (prompt += chunk));
process.stdin.on('end', () => {
  appendFileSync(process.env.MY_AGENT_LOG, JSON.stringify({
    args: process.argv.slice(2), role: process.env.FORGE_ROLE, bead: process.env.FORGE_BEAD_ID,
    mode: process.env.FORGE_AGENT_MODE, prompt,
  }) + '\\n');
  if (process.env.FORGE_ROLE === 'doer') writeFileSync('src/value.txt', '20\\n');
  else writeFileSync('my-agent-' + process.env.FORGE_BEAD_ID + '.txt', 'done\\n');
  console.log('HYPOTHESIS: 20 is larger');
});
`;

const VALUE_METRIC = `import { readFileSync } from 'node:fs';
console.log(JSON.stringify({ value: Number(readFileSync('src/value.txt', 'utf8').trim()) }));
`;

interface UserRepo {
  dir: string;
  forge(args: string[]): Promise<CliResult>;
  ralph(args: string[]): Promise<CliResult>;
  config(value: unknown): Promise<void>;
  epic(beads: { title: string; labels?: string[] }[]): Promise<{ epic: string; ids: string[] }>;
  calls(): Promise<{ args: string[]; role: string; bead: string; mode: string; prompt: string }[]>;
  exists(path: string): Promise<boolean>;
}

/**
 * A repo on a machine that has git, node and the user's `my-agent`, and no claude, codex or br: PATH
 * holds nothing else, so an agent CLI installed here never leaks in.
 */
async function userRepo(): Promise<UserRepo> {
  const base = await mkdtemp(join(tmpdir(), 'forge-agents-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const bin = join(base, 'bin');
  const dir = join(base, 'repo');
  await mkdir(bin);
  await mkdir(join(dir, 'src'), { recursive: true });
  await mkdir(join(dir, 'metric'));
  await symlink(commandPath('git'), join(bin, 'git'));
  await symlink(process.execPath, join(bin, 'node'));
  await writeFile(join(bin, 'my-agent'), MY_AGENT);
  await chmod(join(bin, 'my-agent'), 0o755);
  await writeFile(join(dir, 'src', 'value.txt'), '10\n');
  await writeFile(join(dir, 'metric', 'score.mjs'), VALUE_METRIC);
  await writeFile(join(dir, '.gitignore'), '.forge/epics/\n.beads/\n.autoresearch/\n');
  const script = join(base, 'scripted.json');
  await writeFile(
    script,
    JSON.stringify({
      rules: [{ steps: [{ write: 'scripted-{{bead}}.txt', content: 'x\n' }, { say: 'ok' }] }],
    }),
  );
  const log = join(base, 'my-agent.jsonl');
  const env = {
    PATH: bin,
    HOME: base,
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@e.st',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@e.st',
    FORGE_SCRIPTED_AGENT: script,
    MY_AGENT_LOG: log,
  };
  const git = (...args: string[]) =>
    execa('git', args, { cwd: dir, env: { ...env, PATH: process.env.PATH } });
  await git('init', '-q', '-b', 'main');
  await git('add', '-A');
  await git('commit', '-q', '-m', 'start');
  const repo: UserRepo = {
    dir,
    forge: (args) => runCliInProcess('forge-pack', args, { cwd: dir, env }),
    ralph: (args) => runCliInProcess('ralph-loop', args, { cwd: dir, env }),
    config: (value) => writeFile(join(dir, '.forge', 'config.json'), JSON.stringify(value)),
    async epic(beads) {
      const created = async (args: string[]) => {
        const run = await repo.forge(['beads', 'create', ...args]);
        expect(run.exitCode, run.stderr).toBe(0);
        return run.stdout.trim();
      };
      const epic = await created(['Epic', '-t', 'epic']);
      const ids: string[] = [];
      for (const bead of beads) {
        const labels = bead.labels === undefined ? [] : ['-l', bead.labels.join(',')];
        ids.push(await created([bead.title, '--parent', epic, '-d', `Do ${bead.title}.`, ...labels]));
      }
      return { epic, ids };
    },
    async calls() {
      const text = await readFile(log, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Awaited<ReturnType<UserRepo['calls']>>[number]);
    },
    exists: (path) =>
      readFile(join(dir, path)).then(
        () => true,
        () => false,
      ),
  };
  return repo;
}

type PlanStep = { id: string; role: string; agent: string; agent_source: string };

async function dryRunPlan(repo: UserRepo, args: string[]): Promise<{ plan: PlanStep[]; run: CliResult }> {
  const run = await repo.ralph([...args, '--dry-run', '--json']);
  expect(run.exitCode, run.stderr).toBe(0);
  const event = run.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { type: string; order?: PlanStep[] })
    .find((e) => e.type === 'plan');
  return { plan: event?.order ?? [], run };
}

beforeAll(assertBuilt);

describe('choosing agents, as a new user meets it', () => {
  it('init --yes without claude names no agent, and ralph-loop --agent scripted runs every bead, labels too', async () => {
    const repo = await userRepo();
    const init = await repo.forge(['init', '--yes']);
    expect(init.exitCode, init.stderr).toBe(0);
    const config = await readFile(join(repo.dir, '.forge', 'config.json'), 'utf8');
    expect(JSON.parse(config)).toMatchObject({ agents: {} });
    expect(config).not.toMatch(/claude|codex/);
    expect(init.stderr).toContain('the config names none');

    const { epic, ids } = await repo.epic([
      { title: 'plain' },
      { title: 'stamped', labels: ['role:doer', 'agent:claude-opus'] },
    ]);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    for (const id of ids) expect(await repo.exists(`scripted-${id}.txt`), id).toBe(true);
    expect(run.stderr).not.toContain('not found');
  });

  it('--dry-run shows which agent runs each bead and where that choice came from', async () => {
    const repo = await userRepo();
    expect((await repo.forge(['init', '--yes'])).exitCode).toBe(0);
    await repo.config({
      store: 'embedded',
      agents: { default: 'codex', judge: 'my-agent' },
      agent_commands: { 'my-agent': ['my-agent'] },
    });
    const { epic, ids } = await repo.epic([
      { title: 'plain' },
      { title: 'judge', labels: ['role:judge'] },
      { title: 'labelled', labels: ['role:strategist', 'agent:claude-haiku'] },
      { title: 'doer', labels: ['role:doer'] },
    ]);
    const sources = (plan: PlanStep[]) =>
      Object.fromEntries(plan.map((s) => [s.id, [s.agent, s.agent_source]]));

    const stored = await dryRunPlan(repo, [epic]);
    expect(sources(stored.plan)).toEqual({
      [ids[0]!]: ['codex', '.forge/config.json agents.default'],
      [ids[1]!]: ['my-agent', '.forge/config.json agents.judge'],
      [ids[2]!]: ['claude-haiku', 'label agent:claude-haiku'],
      [ids[3]!]: ['codex', '.forge/config.json agents.default'],
    });
    expect(stored.run.stderr).toContain('via claude-haiku (from label agent:claude-haiku)');

    const typed = await dryRunPlan(repo, [epic, '--agent', 'scripted', '--agents', 'doer=my-agent']);
    expect(sources(typed.plan)).toEqual({
      [ids[0]!]: ['scripted', '--agent'],
      [ids[1]!]: ['scripted', '--agent'],
      [ids[2]!]: ['scripted', '--agent'],
      [ids[3]!]: ['my-agent', '--agents doer'],
    });

    await repo.config({ store: 'embedded' });
    const builtin = await dryRunPlan(repo, [epic]);
    expect(builtin.plan[0]).toMatchObject({ agent: 'claude', agent_source: 'built-in default' });
  });

  it('--no-auto-commit and --max-attempts beat .forge/config.json "runner"', async () => {
    const repo = await userRepo();
    expect((await repo.forge(['init', '--yes'])).exitCode).toBe(0);
    await repo.config({
      store: 'embedded',
      runner: { auto_commit: true, max_attempts: 1 },
      agent_commands: { failing: ['git', 'no-such-command'] },
    });
    const commits = async () =>
      Number((await execa('git', ['rev-list', '--count', 'HEAD'], { cwd: repo.dir })).stdout.trim());
    const before = await commits();
    const { epic: first } = await repo.epic([{ title: 'committed' }]);
    const committed = await repo.ralph([first, '--agent', 'scripted']);
    expect(committed.exitCode, committed.stderr).toBe(0);
    expect(await commits()).toBe(before + 1);
    const { epic: second } = await repo.epic([{ title: 'uncommitted' }]);
    const run = await repo.ralph([second, '--agent', 'scripted', '--no-auto-commit']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(await commits()).toBe(before + 1);

    // runner.max_attempts: 1 stops at the first failure; --max-attempts 2 tries twice.
    const attempts = async (extra: string[]): Promise<number> => {
      const { epic: failing, ids } = await repo.epic([{ title: 'fails', labels: ['agent:failing'] }]);
      expect((await repo.ralph([failing, '--no-auto-commit', '--backoff', '0', ...extra])).exitCode).toBe(5);
      const shown = JSON.parse((await repo.forge(['beads', 'show', ids[0]!, '--json'])).stdout) as {
        comments?: { text: string }[];
      }[];
      return shown[0]!.comments?.filter((c) => /attempt/i.test(c.text)).length ?? 0;
    };
    expect(await attempts([])).toBe(1);
    expect(await attempts(['--max-attempts', '2'])).toBe(2);
  });

  it("runs the user's own agent, named once in .forge/config.json, from a bead's label", async () => {
    const repo = await userRepo();
    expect((await repo.forge(['init', '--yes'])).exitCode).toBe(0);
    await repo.config({ store: 'embedded', agent_commands: { 'my-agent': ['my-agent', '--flag'] } });
    const { epic, ids } = await repo.epic([{ title: 'write a file', labels: ['agent:my-agent'] }]);
    const run = await repo.ralph([epic]);
    expect(run.exitCode, run.stderr).toBe(0);
    const calls = await repo.calls();
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ args: ['--flag'], bead: ids[0], mode: 'full' });
    expect(calls[0]!.prompt).toContain('write a file');
    expect(await repo.exists(`my-agent-${ids[0]!}.txt`)).toBe(true);

    // A label names an agent; it never becomes a command of its own.
    const { epic: other } = await repo.epic([{ title: 'sneaky', labels: ['agent:my-agent2'] }]);
    // The check before the run refuses it (exit 4); past the check, the bead itself fails (exit 5).
    const refused = await repo.ralph([other, '--max-attempts', '1']);
    expect(refused.exitCode).toBe(4);
    expect(refused.stderr).toContain('unknown agent "my-agent2"');
    expect(refused.stderr).toContain('agent_commands');
    const unchecked = await repo.ralph([other, '--max-attempts', '1', '--no-validate']);
    expect(unchecked.exitCode).toBe(5);
    expect(unchecked.stderr).toContain('unknown agent "my-agent2"');
  });

  it('forge-pack loop --agents doer=my-agent stamps a doer that the named agent runs', async () => {
    const repo = await userRepo();
    expect((await repo.forge(['init', '--yes'])).exitCode).toBe(0);
    await repo.config({ store: 'embedded', agent_commands: { 'my-agent': ['my-agent'] } });
    const loopArgs = [
      'loop',
      'value',
      '--program',
      'Make the value in src/value.txt as large as possible.',
      '--metric-command',
      'node metric/score.mjs',
      '--score',
      'json:value',
      '--scope',
      'src/',
    ];
    const unknown = await repo.forge([...loopArgs, '--agents', 'doer=their-agent']);
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain('--agents doer: unknown agent "their-agent"');

    const stamped = await repo.forge([...loopArgs, '--agents', 'doer=my-agent']);
    expect(stamped.exitCode, stamped.stderr).toBe(0);
    const epic = stamped.stdout.trim();
    // doer, judge (the metric command) and arbiter: the named agent does the work, the ledger keeps it.
    const run = await repo.ralph([epic, '--max-beads', '3']);
    expect(run.exitCode, run.stderr).toBe(0);
    const calls = await repo.calls();
    expect(calls.map((c) => c.role)).toEqual(['doer']);
    const ledger = (await readFile(join(repo.dir, '.autoresearch', 'research-log.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { iter: number; decision: string; score_after: number });
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 20],
    ]);
  });
});
