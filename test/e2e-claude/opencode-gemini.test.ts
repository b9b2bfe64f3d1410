// ralph-loop with the real opencode and Gemini CLI as agents, against the scripted server (opencode over
// the Anthropic Messages API, Gemini CLI over Gemini's generateContent): a bead, a judge that tries to
// write, a 401, a 429, and one hard-metric autoresearch iteration. No agent is shown the working tree.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { DEFAULT_USAGE, text, type Rule } from '../support/model-server/index.js';
import { CASES, DIRECTORY_TREE, retrospectiveByShell, strategistByShell, type CliCase } from './cli-cases.js';
import { requireCli } from './cli-setup.js';
import { createAgentWorld, type AgentWorld } from './harness.js';

beforeAll(async () => {
  await assertBuilt();
  for (const cli of CASES) await requireCli(cli.bin, cli.pkg);
});

const RALPH_TIMEOUT = ['--timeout', '120', '--max-attempts', '1'];

describe.each(CASES)('ralph-loop runs the real $agent', (cli) => {
  it('a doer bead: the scripted shell command writes and commits, the bead closes, tokens are recorded', async () => {
    const world = await createAgentWorld();
    world.server.addRule({
      name: 'doer',
      match: `marker:${cli.agent}-doer`,
      turns: [
        cli.shell(
          `mkdir -p notes && printf 'written by ${cli.agent}\\n' > notes/note.txt && git add notes && git commit -q -m '${cli.agent}: add a note'`,
        ),
        text('Wrote and committed notes/note.txt.'),
      ],
    });
    const epic = await world.createEpic(`${cli.agent} epic`);
    const description = `marker:${cli.agent}-doer\nVerbatim: $(touch pwned) "double" 'single' ünïcödé`;
    const bead = await world.createBead(epic, `Write a note with ${cli.agent}`, { description });

    const run = await world.ralph([epic, '--agent', cli.agent, ...RALPH_TIMEOUT]);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect(await readFile(join(world.repo, 'notes', 'note.txt'), 'utf8'), why).toBe(
      `written by ${cli.agent}\n`,
    );
    expect(existsSync(join(world.repo, 'pwned')), 'bead text ran as shell code').toBe(false);
    expect(await world.git('log', '-1', '--format=%s'), why).toBe(`${cli.agent}: add a note`);
    expect((await world.show(bead)).status, why).toBe('closed');

    const turns = world.server.turnsOf('doer');
    expect(
      turns.map((turn) => turn.response?.turnIndex),
      why,
    ).toEqual([0, 1]);
    expect(turns[0]!.model, why).toBe(cli.model.replace(/^anthropic\//, ''));
    expect(turns[0]!.userText, why).toContain(description);
    // The adapter's own settings, not the user's: no listing of the tree it works in.
    expect(turns[0]!.prompt, why).not.toMatch(DIRECTORY_TREE);
    expect(turns[1]!.latestToolResults[0]?.text ?? '', why).not.toMatch(/error|denied/i);
    // The agent's two turns were the run's only model requests: no title or other side request.
    expect(
      world.server.requests.map((request) => request.response?.rule ?? request.userText.slice(0, 80)),
      why,
    ).toEqual(['doer', 'doer']);

    const events = await world.events(epic);
    const finished = events.find((e) => e.type === 'attempt_finished' && e.bead === bead);
    expect(finished, JSON.stringify(events, null, 1)).toMatchObject({
      outcome: 'ok',
      agent: cli.agent,
      input_tokens: 2 * DEFAULT_USAGE.input_tokens,
      output_tokens: 2 * DEFAULT_USAGE.output_tokens,
    });
    if (cli.costed) expect(finished?.cost_usd, JSON.stringify(finished)).toBeGreaterThan(0);
    const transcript = await world.transcript(epic, bead);
    expect(transcript, why).toMatch(/"forge":"end".*"outcome":"ok"/);
    // The world's HOME is seeded as after a first run (cli-setup.ts): no package install, no registry.
    expect(existsSync(join(world.home, '.npm')), 'the CLI installed packages from npm').toBe(false);
    // Nothing the CLI left in its temp directory outlives the run (opencode's native library: 5.5 MB a run).
    expect(await readdir(world.tmp), why).toEqual([]);
    // opencode kept no snapshot store of the tree (Forge turns snapshots off: it commits itself).
    const snapshots = join(world.home, '.local', 'share', 'opencode', 'snapshot');
    expect(existsSync(snapshots) ? await readdir(snapshots) : [], why).toEqual([]);
  });

  it('a role:judge bead runs it read-only: its ways out, a write, an edit and a shell redirect all fail; the tree is unchanged', async () => {
    const world = await createAgentWorld({ files: { 'spec.md': '# Spec\n' } });
    const spec = join(world.repo, 'spec.md');
    world.server.addRule({
      name: 'judge',
      match: `marker:${cli.agent}-judge`,
      turns: [
        // First the ways out of read-only (Gemini CLI's plan mode exit, sub-agents), then the writes.
        ...cli.escapes,
        cli.writeFile(join(world.repo, 'pwned.txt'), 'judged'),
        cli.editFile(spec, '# Spec', '# Rewritten'),
        cli.shell(`echo judged > ${join(world.repo, 'shell-pwned.txt')}`),
        text('{"score": 50, "findings": []}'),
      ],
    });
    const epic = await world.createEpic(`${cli.agent} judge epic`);
    await world.createBead(epic, `Judge with ${cli.agent}`, {
      description: `marker:${cli.agent}-judge`,
      labels: ['role:judge'],
    });
    const head = await world.git('rev-parse', 'HEAD');

    const run = await world.ralph([epic, '--agent', cli.agent, ...RALPH_TIMEOUT]);
    const why = world.explain(
      run,
      JSON.stringify(world.server.turnsOf('judge').map((t) => t.latestToolResults)),
    );
    expect(run.exitCode, why).toBe(0);
    expect(
      world.server.turnsOf('judge').map((turn) => turn.response?.turnIndex),
      why,
    ).toEqual([...Array(cli.escapes.length + 4).keys()]);
    // Each way out was refused: an error, or opencode's answer to a tool it does not offer.
    const answers = world.server.turnsOf('judge').flatMap((turn) => turn.latestToolResults);
    for (const answer of answers.slice(0, cli.escapes.length))
      expect(answer.isError || /unavailable tool/.test(answer.text), why).toBe(true);
    expect(existsSync(join(world.repo, 'pwned.txt')), why).toBe(false);
    expect(existsSync(join(world.repo, 'shell-pwned.txt')), why).toBe(false);
    expect(await readFile(spec, 'utf8'), why).toBe('# Spec\n');
    expect(await world.git('rev-parse', 'HEAD')).toBe(head);
    // Nothing changed but Forge's own state (the bead store, run logs).
    const status = (await world.git('status', '--porcelain', '--untracked-files=all')).split('\n');
    expect(
      status.filter((line) => line !== '' && !/^\?\? \.(?:beads|forge)\//.test(line)),
      why,
    ).toEqual([]);
    // The shell tool is not offered at all to a read-only run.
    const first = world.server.turnsOf('judge')[0]!;
    expect(first.tools, why).not.toContain(cli.agent === 'opencode' ? 'bash' : 'run_shell_command');
    // Nor any way out of read-only, nor the web.
    for (const tool of [
      'task',
      'exit_plan_mode',
      'invoke_agent',
      'webfetch',
      'websearch',
      'google_web_search',
    ])
      expect(first.tools, why).not.toContain(tool);
    // Nor is it shown the tree: nothing names spec.md until the judge's own tools do.
    expect(first.prompt, why).not.toMatch(DIRECTORY_TREE);
    expect(first.prompt, why).not.toContain('spec.md');
  });

  it('stops at once on a 401 with exit 9 and leaves the bead open', async () => {
    const world = await createAgentWorld();
    world.server.addRule({ name: 'doer', match: `marker:${cli.agent}-auth`, turns: [text('never served')] });
    world.server.fail({ status: 401, times: 'always' });
    const epic = await world.createEpic(`${cli.agent} auth epic`);
    const bead = await world.createBead(epic, 'Needs a key', { description: `marker:${cli.agent}-auth` });

    const run = await world.ralph([epic, '--agent', cli.agent, '--timeout', '120', '--backoff', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(9);
    expect(run.stderr, why).toMatch(/authenticate|credentials|API key/i);
    const shown = await world.show(bead);
    expect(shown.status, why).toBe('open');
    expect(shown.labels ?? [], why).not.toContain('ralph:failed');
  });

  it('takes over from its own retries on a 429, waits, and the bead closes without spending an attempt', async () => {
    const world = await createAgentWorld();
    world.server.addRule({
      name: 'doer',
      match: `marker:${cli.agent}-limited`,
      turns: [text('Done after the limit.')],
    });
    world.server.fail({ status: 429, times: cli.rateLimitFaults, retryAfterSeconds: 1 });
    const epic = await world.createEpic(`${cli.agent} rate-limited epic`);
    const bead = await world.createBead(epic, 'Survive a rate limit', {
      description: `marker:${cli.agent}-limited`,
    });

    const run = await world.ralph([epic, '--agent', cli.agent, '--backoff', '1', ...RALPH_TIMEOUT]);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect((await world.show(bead)).status, why).toBe('closed');
    const outcomes = (await world.events(epic))
      .filter((e) => e.type === 'attempt_finished')
      .map((e) => e.outcome);
    expect(outcomes, why).toEqual(['rate_limited', 'ok']);
  });

  it('one hard-metric autoresearch iteration reaches the target; the doer is blind to the metric', async () => {
    const metricCommand = 'node bench/score.mjs --emit result';
    const world = await createAgentWorld({
      files: {
        'src/value.txt': '11\n',
        'bench/score.mjs':
          "import { readFileSync } from 'node:fs';\nconsole.log('RESULT=' + Number(readFileSync('src/value.txt', 'utf8').trim()));\n",
      },
    });
    for (const rule of metricRules(cli, world)) world.server.addRule(rule);
    const created = await world.forge([
      'loop',
      'value booster',
      '--program',
      'Raise the value kept in src/value.txt.',
      '--metric-command',
      metricCommand,
      '--score',
      'regex:RESULT=([0-9.]+)',
      '--scope',
      'src/',
      '--target',
      '40',
      '--max-iterations',
      '3',
    ]);
    expect(created.exitCode, created.stderr).toBe(0);
    const epic = created.stdout.trim();

    const run = await world.ralph([epic, '--agent', cli.agent, ...RALPH_TIMEOUT], 280_000);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    const ledger = (await readFile(join(world.repo, '.autoresearch', 'research-log.jsonl'), 'utf8'))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { iter: number; decision: string; score_after: number | null });
    expect(
      ledger.map((line) => [line.iter, line.decision, line.score_after]),
      why,
    ).toEqual([
      [0, 'baseline', 11],
      [1, 'keep', 40],
    ]);
    expect(await readFile(join(world.repo, '.autoresearch', 'retrospective.md'), 'utf8'), why).toContain(
      'One step was enough',
    );
    const doer = world.server.turnsOf('doer');
    expect(doer.length, why).toBeGreaterThan(0);
    for (const turn of [...doer, ...world.server.turnsOf('strategist')]) {
      expect(turn.prompt, why).not.toMatch(DIRECTORY_TREE);
    }
    for (const turn of doer) {
      for (const secret of [metricCommand, 'score.mjs', 'RESULT=', 'research-log'])
        expect(turn.prompt, why).not.toContain(secret);
    }
    // Every model request was one of the loop's agents at work: none of them made a side request.
    expect(
      world.server.requests
        .filter((request) => request.response?.rule === undefined)
        .map((r) => r.userText.slice(0, 80)),
      why,
    ).toEqual([]);
    const agents = (await world.events(epic)).filter(
      (e) => e.type === 'attempt_finished' && e.agent === cli.agent,
    );
    expect(
      agents.map((e) => e.outcome),
      why,
    ).toEqual(['ok', 'ok', 'ok']);
  });
});

/** Doer, strategist and retrospective acting only through the CLI's shell tool. */
function metricRules(cli: CliCase, world: AgentWorld): Rule[] {
  return [
    {
      name: 'doer',
      match: '# Doer, iteration 1:',
      turns: [
        cli.shell(`printf '40\\n' > ${join(world.repo, 'src', 'value.txt')}`),
        text('Done.\nHYPOTHESIS: raise it to 40'),
      ],
    },
    strategistByShell(cli),
    retrospectiveByShell(cli, '# Retrospective\\n\\nOne step was enough.\\n'),
  ];
}
