// ralph-loop with the real Claude Code binary as its agent, against a scripted Messages API server.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { bash, DEFAULT_USAGE, edit, text, write } from '../support/model-server/index.js';
import { createAgentWorld, requireClaude, resultOf, type AgentWorld } from './harness.js';

beforeAll(async () => {
  await assertBuilt();
  await requireClaude();
});

/** The repo's state a read-only agent must not change: HEAD, tracked changes, files outside Forge's dirs. */
async function treeState(world: AgentWorld): Promise<string> {
  const head = await world.git('rev-parse', 'HEAD');
  const status = (await world.git('status', '--porcelain', '--untracked-files=all'))
    .split('\n')
    .filter((line) => line !== '' && !/ \.(beads|forge)\//.test(line));
  return [head, ...status].join('\n');
}

describe('ralph-loop runs the real claude', () => {
  it('a doer bead: claude writes the file through Write, commits through Bash, the bead closes with its cost', async () => {
    const content = 'Hello from the scripted doer.\nSecond line — ünïcödé ✓\n';
    const world = await createAgentWorld();
    const path = join(world.repo, 'notes', 'hello.txt');
    world.server.addRule({
      name: 'doer',
      match: 'marker:doer-greeting',
      turns: [
        write(path, content),
        bash('git add notes/hello.txt && git commit -q -m "doer: add the greeting"', 'commit the greeting'),
        text('Wrote notes/hello.txt and committed it.'),
      ],
    });
    const epic = await world.createEpic('Greeting epic');
    const title = 'Write the greeting (role:doer)';
    const description = [
      'marker:doer-greeting',
      'Create notes/hello.txt with the greeting, then commit it.',
      `Text that must reach the agent verbatim: $(touch pwned) "double" 'single' \`tick\` ünïcödé`,
    ].join('\n');
    const bead = await world.createBead(epic, title, { description, labels: ['role:doer'] });

    const run = await world.ralph([epic, '--agent', 'claude', '--max-attempts', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect(run.stderr, why).toContain('stopped: done');

    expect(await readFile(path, 'utf8'), why).toBe(content);
    expect(existsSync(join(world.repo, 'pwned')), 'bead text ran as shell code').toBe(false);
    expect(await world.git('log', '-1', '--format=%s'), why).toBe('doer: add the greeting');
    expect(await world.git('show', '--name-only', '--format=', 'HEAD')).toBe('notes/hello.txt');
    expect((await world.show(bead)).status, why).toBe('closed');

    // The agent was told the bead's text verbatim, offered full tools, and saw its tools succeed.
    const turns = world.server.turnsOf('doer');
    expect(
      turns.map((turn) => turn.response?.turnIndex),
      why,
    ).toEqual([0, 1, 2]);
    const first = turns[0]!;
    expect(first.userText, why).toContain(`# ${title}\n\n${description}`);
    expect(first.tools, why).toEqual(expect.arrayContaining(['Bash', 'Edit', 'Read', 'Write']));
    expect(first.headers['x-api-key'], 'the key must never be recorded').toBe('<redacted>');
    expect(turns[1]!.latestToolResults, why).toEqual([expect.objectContaining({ isError: false })]);
    expect(turns[2]!.latestToolResults, why).toEqual([expect.objectContaining({ isError: false })]);
    expect(
      world.server.agentTurns().every((turn) => turn.response?.rule === 'doer'),
      why,
    ).toBe(true);

    // Tokens and cost come from Claude's result object, into the event log.
    const transcript = await world.transcript(epic, bead);
    const result = resultOf(transcript);
    expect(result, `no result object in the transcript:\n${transcript.slice(-2000)}`).toBeDefined();
    const events = await world.events(epic);
    const finished = events.filter((event) => event.type === 'attempt_finished' && event.bead === bead);
    expect(finished, JSON.stringify(events, null, 1)).toHaveLength(1);
    const event = finished[0]!;
    expect(event, JSON.stringify(event)).toMatchObject({
      outcome: 'ok',
      agent: 'claude',
      exit: 0,
      input_tokens: 3 * DEFAULT_USAGE.input_tokens,
      output_tokens: 3 * DEFAULT_USAGE.output_tokens,
    });
    expect(result!.total_cost_usd).toBeGreaterThan(0);
    expect(event.cost_usd).toBe(result!.total_cost_usd);
    expect(Object.keys(result!.modelUsage as object)).toContain(event.model);
    const summary = events.find((e) => e.type === 'run_finished')?.summary;
    expect(summary?.costUsd, JSON.stringify(summary)).toBe(result!.total_cost_usd);
    // Nothing the CLI left in its temp directory outlives the run.
    expect(await readdir(world.tmp), why).toEqual([]);
  });

  it('waits out a 429 that outlasts claude’s own retries, then the bead closes without spending an attempt', async () => {
    // One retry inside claude (it honours retry-after), then claude gives up and the runner waits.
    const world = await createAgentWorld({ env: { CLAUDE_CODE_MAX_RETRIES: '1' } });
    world.server.addRule({
      name: 'limited',
      match: 'marker:rate-limited',
      turns: [write(join(world.repo, 'limited.txt'), 'made it\n'), text('Done after the rate limit.')],
    });
    world.server.fail({ status: 429, times: 2, retryAfterSeconds: 1 });
    const epic = await world.createEpic('Rate-limited epic');
    const bead = await world.createBead(epic, 'Survive a rate limit', { description: 'marker:rate-limited' });

    const run = await world.ralph([epic, '--agent', 'claude', '--max-attempts', '1', '--backoff', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect(run.stderr, why).toMatch(/rate limited: waiting until/);
    expect((await world.show(bead)).status, why).toBe('closed');
    expect(await readFile(join(world.repo, 'limited.txt'), 'utf8'), why).toBe('made it\n');

    const statuses = world.server.agentTurns().map((turn) => turn.response?.status);
    expect(statuses, why).toEqual([429, 429, 200, 200]);
    const events = await world.events(epic);
    const outcomes = events.filter((e) => e.type === 'attempt_finished').map((e) => e.outcome);
    expect(outcomes, JSON.stringify(events, null, 1)).toEqual(['rate_limited', 'ok']);
    expect(events.some((e) => e.type === 'waiting' && e.why === 'rate limited')).toBe(true);
    // Claude's own retry is visible in the transcript as it happened.
    const transcript = await world.transcript(epic, bead);
    expect(transcript, transcript.slice(-3000)).toMatch(/"subtype":"api_retry".*"error_status":429/);
  });

  it('backs off from a 529 overload and runs the bead again without spending an attempt', async () => {
    const world = await createAgentWorld({ env: { CLAUDE_CODE_MAX_RETRIES: '0' } });
    world.server.addRule({
      name: 'busy',
      match: 'marker:overloaded',
      turns: [text('Done once the API had room.')],
    });
    world.server.fail({ status: 529, times: 1 });
    const epic = await world.createEpic('Overloaded epic');
    const bead = await world.createBead(epic, 'Survive an overload', { description: 'marker:overloaded' });

    const run = await world.ralph([epic, '--agent', 'claude', '--max-attempts', '1', '--backoff', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect((await world.show(bead)).status, why).toBe('closed');
    expect(
      world.server.agentTurns().map((turn) => turn.response?.status),
      why,
    ).toEqual([529, 200]);
    const events = await world.events(epic);
    const outcomes = events.filter((e) => e.type === 'attempt_finished').map((e) => e.outcome);
    expect(outcomes, JSON.stringify(events, null, 1)).toEqual(['overloaded', 'ok']);
    expect(events.some((e) => e.type === 'waiting' && e.why === 'overloaded')).toBe(true);
  });

  it('stops at once on a 401 with exit 9, says to check the credentials, and leaves the bead open', async () => {
    // No CLAUDE_CODE_MAX_RETRIES here: the adapter's default lets claude retry, and it must stop it.
    const world = await createAgentWorld();
    world.server.addRule({ name: 'first', match: 'marker:auth-first', turns: [text('never served')] });
    world.server.addRule({ name: 'second', match: 'marker:auth-second', turns: [text('never served')] });
    world.server.fail({ status: 401, times: 'always' });
    const epic = await world.createEpic('Auth epic');
    const first = await world.createBead(epic, 'Needs a valid key', { description: 'marker:auth-first' });
    const second = await world.createBead(epic, 'Never reached', { description: 'marker:auth-second' });

    const run = await world.ralph([epic, '--agent', 'claude', '--backoff', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(9);
    expect(run.stderr, why).toMatch(/credentials/i);
    expect(run.stderr, why).toMatch(/ANTHROPIC_API_KEY/);

    const bead = await world.show(first);
    expect(bead.status, why).toBe('open');
    expect(bead.labels ?? [], why).not.toContain('ralph:failed');
    expect((await world.show(second)).status).toBe('open');
    const turns = world.server.agentTurns();
    expect(turns.length, why).toBeGreaterThan(0);
    expect(
      turns.every((turn) => turn.response?.status === 401 && turn.userText.includes('marker:auth-first')),
      why,
    ).toBe(true);
    const outcomes = (await world.events(epic)).filter((e) => e.type === 'attempt_finished');
    expect(outcomes.map((e) => e.outcome)).toEqual(['auth']);
    // Claude itself would have retried the 401 for minutes: the adapter saw the retry and stopped it.
    const transcript = await world.transcript(epic, first);
    expect(transcript, transcript.slice(-3000)).toMatch(/"subtype":"api_retry".*"error_status":401/);
  });

  it('a role:judge bead runs claude read-only: Write, Edit and a Bash redirect all fail and the tree is unchanged', async () => {
    const world = await createAgentWorld({ files: { 'spec.md': '# Spec\n\nThe artifact under review.\n' } });
    world.server.addRule({
      name: 'judge',
      match: 'marker:greedy-judge',
      turns: [
        write(join(world.repo, 'spec.md'), 'rewritten by the judge\n'),
        edit(join(world.repo, 'spec.md'), 'The artifact under review.', 'Edited by the judge.'),
        bash(`echo pwned > ${join(world.repo, 'pwned.txt')}`, 'write a file through the shell'),
        text('{"score": 40, "findings": ["tried to write"]}'),
      ],
    });
    const epic = await world.createEpic('Judge epic');
    const bead = await world.createBead(epic, 'Judge the spec', {
      description: 'marker:greedy-judge\nScore spec.md from 0 to 100.',
      labels: ['role:judge'],
    });
    const before = await treeState(world);

    const run = await world.ralph([epic, '--agent', 'claude', '--max-attempts', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);

    expect(await treeState(world), why).toBe(before);
    expect(await readFile(join(world.repo, 'spec.md'), 'utf8')).toBe(
      '# Spec\n\nThe artifact under review.\n',
    );
    expect(existsSync(join(world.repo, 'pwned.txt')), why).toBe(false);

    // The model was only ever offered the read-only tools, and each write attempt came back an error.
    const turns = world.server.turnsOf('judge');
    expect(
      turns.map((turn) => turn.response?.turnIndex),
      why,
    ).toEqual([0, 1, 2, 3]);
    for (const turn of turns) expect([...turn.tools].sort(), why).toEqual(['Glob', 'Grep', 'Read']);
    const results = turns.flatMap((turn) => turn.latestToolResults);
    expect(results, why).toHaveLength(3);
    for (const result of results) {
      expect(result.isError, why).toBe(true);
      expect(result.text, why).toMatch(/No such tool available/);
    }

    // The transcript shows the attempts; the event says the read-only run tried them.
    const transcript = await world.transcript(epic, bead);
    for (const tool of ['Write', 'Edit', 'Bash'])
      expect(transcript, transcript.slice(-3000)).toContain(`No such tool available: ${tool}`);
    const events = await world.events(epic);
    const finished = events.find((e) => e.type === 'attempt_finished' && e.bead === bead);
    expect(finished?.message, JSON.stringify(finished)).toMatch(/tried 3 tool call|after trying 3 tool call/);
  });
});
