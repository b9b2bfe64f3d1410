// The real claude (2.1.330 waits for its background tasks before exiting) as a doer that starts servers:
// the bead ends at the agent's answer, and nothing the agent started survives it: in a PID namespace of
// its own (the default here) even a server hidden from the sweep; without one, what the sweep finds.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { eventually, isGone } from '../support/fake-agents/harness.js';
import { DEFAULT_USAGE, bash, text, toolUse } from '../support/model-server/index.js';
import { hiddenProcessScript, killTagged, taggedProcesses } from '../support/tagged-processes.js';
import { createAgentWorld, requireClaude, resultOf } from './harness.js';

beforeAll(async () => {
  await assertBuilt();
  await requireClaude();
});

const BEAD_TIMEOUT_S = 120;

describe('a doer that leaves servers running', () => {
  it('without a namespace, ends at its answer: a run_in_background server and a setsid/nohup one are both gone (the sweep), the bead closed in seconds', async () => {
    // The sweep, the guard where namespaces are not allowed: the pids written by the shells are the host's.
    const world = await createAgentWorld({ env: { FORGE_CONTAINMENT: 'off' } });
    // Outside the repo, so the loop sees no change of the agent's: only the processes matter here.
    const backgroundPid = join(world.home, 'background.pid');
    const detachedPid = join(world.home, 'detached.pid');
    const hypothesis = 'HYPOTHESIS: the dev server answers on its first request';
    world.server.addRule({
      name: 'servers',
      match: 'marker:start-servers',
      turns: [
        toolUse('Bash', {
          command: `echo $$ > ${backgroundPid}; exec sleep 300`,
          description: 'start the dev server',
          run_in_background: true,
        }),
        bash(
          `setsid nohup sh -c 'echo $$ > ${detachedPid}; exec sleep 300' > /dev/null 2>&1 &`,
          'start a watcher detached from this shell',
        ),
        text(hypothesis),
        // Only reached if claude ran another turn after its answer (a background task ended).
        text('The background task ended.'),
      ],
    });
    const epic = await world.createEpic('Servers epic');
    const bead = await world.createBead(epic, 'Start the servers (role:doer)', {
      description: 'marker:start-servers\nStart the dev server and the watcher, then state your hypothesis.',
      labels: ['role:doer'],
    });

    const started = Date.now();
    const run = await world.ralph(
      [epic, '--agent', 'claude', '--max-attempts', '1', '--timeout', String(BEAD_TIMEOUT_S)],
      (BEAD_TIMEOUT_S + 60) * 1000,
    );
    const elapsedMs = Date.now() - started;
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect((await world.show(bead)).status, why).toBe('closed');
    // Claude 2.1.330 would wait out the 300 s sleep; the bead ends shortly after the answer instead.
    expect(elapsedMs, why).toBeLessThan(30_000);

    const pids = await Promise.all(
      [backgroundPid, detachedPid].map(async (path) => Number(await readFile(path, 'utf8'))),
    );
    for (const pid of pids)
      expect(await eventually(() => isGone(pid), 2000), `pid ${pid} survived the bead`).toBe(true);

    const events = await world.events(epic);
    const finished = events.filter((event) => event.type === 'attempt_finished' && event.bead === bead);
    expect(finished, JSON.stringify(events, null, 1)).toEqual([
      expect.objectContaining({
        outcome: 'ok',
        input_tokens: 3 * DEFAULT_USAGE.input_tokens,
        output_tokens: 3 * DEFAULT_USAGE.output_tokens,
      }),
    ]);
    // Claude exited on Forge's SIGTERM after its answer: no exit status is reported as if it were its own.
    expect(finished[0]?.exit, JSON.stringify(finished[0])).toBeUndefined();
    const transcript = await world.transcript(epic, bead);
    expect(resultOf(transcript)?.result, transcript.slice(-3000)).toBe(hypothesis);
    // The detached watcher escaped claude's process group: the sweep ended it, and says so.
    expect(transcript, transcript.slice(-3000)).toMatch(/"forge":"swept".*"command":"sleep 300"/);
    expect(
      world.server.turnsOf('servers').map((turn) => turn.response?.turnIndex),
      why,
    ).toEqual([0, 1, 2]);
  });

  it('in its own PID namespace, a server hidden from the sweep (setsid env -i) dies with claude too', async () => {
    const world = await createAgentWorld();
    const tag = `forge-hidden-server-${process.pid}-${Math.random().toString(36).slice(2)}`;
    onTestFinished(() => killTagged(tag));
    const hypothesis = 'HYPOTHESIS: the hidden server keeps the cache warm';
    world.server.addRule({
      name: 'hidden',
      match: 'marker:hidden-server',
      turns: [
        toolUse('Bash', {
          command: `exec sleep 300`,
          description: 'start the dev server',
          run_in_background: true,
        }),
        bash(hiddenProcessScript(tag, join(world.home, `${tag}.ready`)), 'start a server no one can find'),
        text(hypothesis),
        text('The background task ended.'),
      ],
    });
    const epic = await world.createEpic('Hidden server epic');
    const bead = await world.createBead(epic, 'Start a hidden server (role:doer)', {
      description: 'marker:hidden-server\nStart the servers, then state your hypothesis.',
      labels: ['role:doer'],
    });

    const started = Date.now();
    const run = await world.ralph(
      [epic, '--agent', 'claude', '--max-attempts', '1', '--timeout', String(BEAD_TIMEOUT_S)],
      (BEAD_TIMEOUT_S + 60) * 1000,
    );
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    expect((await world.show(bead)).status, why).toBe('closed');
    expect(Date.now() - started, why).toBeLessThan(30_000);
    // It was running (claude's shell waited for it), and is gone with no sweep needed.
    expect(existsSync(join(world.home, `${tag}.ready`)), why).toBe(true);
    expect(taggedProcesses(tag), why).toEqual([]);
    const transcript = await world.transcript(epic, bead);
    expect(transcript, transcript.slice(-3000)).toContain('"pid_namespace":true');
    expect(resultOf(transcript)?.result, transcript.slice(-3000)).toBe(hypothesis);
  });

  it('sends no git context (commit subjects, status) to the model', async () => {
    const world = await createAgentWorld({ files: { 'scores.md': 'baseline\n' } });
    await world.git('commit', '-q', '--allow-empty', '-m', 'autoresearch iter 3: score 87 (kept)');
    world.server.addRule({ name: 'blind', match: 'marker:blind', turns: [text('Nothing to do.')] });
    const epic = await world.createEpic('Blind epic');
    await world.createBead(epic, 'Look around', { description: 'marker:blind' });

    const run = await world.ralph([epic, '--agent', 'claude', '--max-attempts', '1']);
    const why = world.explain(run);
    expect(run.exitCode, why).toBe(0);
    const turns = world.server.turnsOf('blind');
    expect(turns.length, why).toBeGreaterThan(0);
    for (const turn of turns) {
      expect(turn.prompt, why).not.toContain('score 87');
      expect(turn.prompt, why).not.toMatch(/gitStatus|Recent commits/);
    }
  });
});
