// ralph-loop with the real Codex CLI as its agent, against the same scripted server speaking the
// OpenAI Responses API (streaming), as Codex does.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { DEFAULT_USAGE, execCommand, text } from '../support/model-server/index.js';
import { createAgentWorld, requireCodex } from './harness.js';

beforeAll(async () => {
  await assertBuilt();
  await requireCodex();
});

describe('ralph-loop runs the real codex', () => {
  it('a doer bead: codex runs the scripted shell commands, the file and commit land, tokens are recorded', async () => {
    const world = await createAgentWorld();
    world.server.addRule({
      name: 'doer',
      match: 'marker:codex-doer',
      turns: [
        execCommand(
          "mkdir -p notes && printf 'written by codex\\n' > notes/codex.txt && git add notes && git commit -q -m 'codex: add a note'",
          world.repo,
        ),
        text('Wrote and committed notes/codex.txt.'),
      ],
    });
    const epic = await world.createEpic('Codex epic');
    const title = 'Write a note with codex';
    const description = `marker:codex-doer\nVerbatim: $(touch pwned) "double" 'single' ünïcödé`;
    const bead = await world.createBead(epic, title, { description });

    const run = await world.ralph([epic, '--agent', 'codex', '--max-attempts', '1', '--timeout', '120']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect(await readFile(join(world.repo, 'notes', 'codex.txt'), 'utf8'), why).toBe('written by codex\n');
    expect(existsSync(join(world.repo, 'pwned')), 'bead text ran as shell code').toBe(false);
    expect(await world.git('log', '-1', '--format=%s'), why).toBe('codex: add a note');
    expect((await world.show(bead)).status, why).toBe('closed');

    const turns = world.server.turnsOf('doer');
    expect(
      turns.map((turn) => turn.response?.turnIndex),
      why,
    ).toEqual([0, 1]);
    expect(turns[0]!.path).toBe('/v1/responses');
    expect(turns[0]!.userText, why).toContain(`# ${title}\n\n${description}`);
    expect(turns[0]!.headers.authorization, 'the key must never be recorded').toBe('<redacted>');
    expect(turns[1]!.latestToolResults[0]?.text, why).toMatch(/exited with code 0/);

    const events = await world.events(epic);
    const finished = events.find((e) => e.type === 'attempt_finished' && e.bead === bead);
    expect(finished, JSON.stringify(events, null, 1)).toMatchObject({
      outcome: 'ok',
      agent: 'codex',
      input_tokens: 2 * DEFAULT_USAGE.input_tokens,
      output_tokens: 2 * DEFAULT_USAGE.output_tokens,
    });
  });

  it('a role:judge bead runs codex read-only: a shell write is refused and the tree is unchanged', async () => {
    const world = await createAgentWorld({ files: { 'spec.md': '# Spec\n' } });
    world.server.addRule({
      name: 'judge',
      match: 'marker:codex-judge',
      turns: [
        execCommand(`echo judged > ${join(world.repo, 'pwned.txt')} && echo rewritten > spec.md`, world.repo),
        text('{"score": 50, "findings": []}'),
      ],
    });
    const epic = await world.createEpic('Codex judge epic');
    await world.createBead(epic, 'Judge with codex', {
      description: 'marker:codex-judge',
      labels: ['role:judge'],
    });
    const head = await world.git('rev-parse', 'HEAD');

    const run = await world.ralph([epic, '--agent', 'codex', '--max-attempts', '1', '--timeout', '120']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect(existsSync(join(world.repo, 'pwned.txt')), why).toBe(false);
    expect(await readFile(join(world.repo, 'spec.md'), 'utf8'), why).toBe('# Spec\n');
    expect(await world.git('rev-parse', 'HEAD')).toBe(head);
    const refused = world.server.turnsOf('judge')[1]?.latestToolResults[0]?.text ?? '';
    // The sandbox refused (here: the command ran on a read-only file system and failed).
    expect(refused, why).toMatch(/Read-only file system|exited with code [1-9]|sandbox|denied|rejected/i);
    expect(refused, why).not.toMatch(/exited with code 0/);
    // Nothing codex left in its temp directory (its sandbox's lock file) outlives the run.
    expect(await readdir(world.tmp), why).toEqual([]);
    // Nor a session in ~/.codex/sessions: the judge's copy is gone, and the session held what it judged.
    const sessions = await readdir(join(world.home, '.codex', 'sessions'), { recursive: true }).catch(
      () => [],
    );
    expect(
      sessions.filter((path) => path.endsWith('.jsonl')),
      why,
    ).toEqual([]);
  });

  it('stops at once on a 401 with exit 9 and leaves the bead open', async () => {
    const world = await createAgentWorld();
    world.server.addRule({ name: 'doer', match: 'marker:codex-auth', turns: [text('never served')] });
    world.server.fail({ status: 401, times: 'always' });
    const epic = await world.createEpic('Codex auth epic');
    const bead = await world.createBead(epic, 'Needs a key', { description: 'marker:codex-auth' });

    const run = await world.ralph([epic, '--agent', 'codex', '--timeout', '120', '--backoff', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(9);
    expect(run.stderr, why).toMatch(/credentials|API key/i);
    const shown = await world.show(bead);
    expect(shown.status, why).toBe('open');
    expect(shown.labels ?? [], why).not.toContain('ralph:failed');
  });

  it('waits out a 429 and then the bead closes without spending an attempt', async () => {
    const world = await createAgentWorld();
    world.server.addRule({
      name: 'doer',
      match: 'marker:codex-limited',
      turns: [text('Done after the limit.')],
    });
    world.server.fail({ status: 429, times: 1, retryAfterSeconds: 1 });
    const epic = await world.createEpic('Codex rate-limited epic');
    const bead = await world.createBead(epic, 'Survive a rate limit', {
      description: 'marker:codex-limited',
    });

    const run = await world.ralph([
      epic,
      '--agent',
      'codex',
      '--max-attempts',
      '1',
      '--backoff',
      '1',
      '--timeout',
      '120',
    ]);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect((await world.show(bead)).status, why).toBe('closed');
    const outcomes = (await world.events(epic))
      .filter((e) => e.type === 'attempt_finished')
      .map((e) => e.outcome);
    expect(outcomes, why).toEqual(['rate_limited', 'ok']);
  });
});
