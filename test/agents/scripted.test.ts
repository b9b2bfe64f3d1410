// The scripted agent: rules, steps, substitutions and simulated failures, with no model involved.
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { createScriptedRunner } from '../../src/agents/scripted.js';
import type { AgentBeadInfo, AgentRequest, AgentRunner, AgentRunnerOptions } from '../../src/agents/types.js';
import { eventually, isGone } from '../support/fake-agents/harness.js';

interface Setup {
  dir: string;
  work: string;
  runner: AgentRunner;
  run(bead: AgentBeadInfo | undefined, request?: Partial<AgentRequest>): ReturnType<AgentRunner['run']>;
}

async function setUp(script: unknown, options: AgentRunnerOptions = {}): Promise<Setup> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-scripted-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const work = join(dir, 'work');
  await mkdir(work);
  const scriptPath = join(dir, 'script.json');
  await writeFile(scriptPath, typeof script === 'string' ? script : JSON.stringify(script));
  const runner = createScriptedRunner({ cli: 'scripted', text: 'scripted' }, options);
  return {
    dir,
    work,
    runner,
    run: (bead, request = {}) =>
      runner.run({
        prompt: 'prompt',
        cwd: work,
        env: { PATH: `${dirname(process.execPath)}:/usr/bin:/bin`, FORGE_SCRIPTED_AGENT: scriptPath },
        mode: 'full',
        ...(bead ? { bead } : {}),
        ...request,
      }),
  };
}

const doer = (iter = 1, extra: string[] = []): AgentBeadInfo => ({
  id: `bd-7f3.${iter}`,
  title: `Doer ${iter}: improve the parser`,
  labels: ['autoresearch', 'role:doer', `iter:${iter}`, ...extra],
});
const judge: AgentBeadInfo = { id: 'bd-7f3.9', title: 'Judge 1', labels: ['role:judge', 'iter:1'] };
const read = (path: string) => readFile(path, 'utf8');
const exists = (path: string) =>
  access(path).then(
    () => true,
    () => false,
  );

describe('scripted agent: rules', () => {
  const script = {
    rules: [
      { when: { role: 'judge' }, steps: [{ say: 'judge rule' }] },
      { when: { role: 'doer', iter: 2 }, steps: [{ say: 'doer 2' }] },
      { when: { labels: ['role:doer', 'urgent'] }, steps: [{ say: 'urgent doer' }] },
      { when: { titleIncludes: 'parser', attempt: 2 }, steps: [{ say: 'second try' }] },
      { when: { exists: 'DONE' }, steps: [{ say: 'already done' }] },
      { when: { missing: 'DONE' }, steps: [{ say: 'fallback' }] },
    ],
  };

  it('runs the first rule whose conditions all hold', async () => {
    const { run } = await setUp(script);
    expect((await run(judge)).finalText).toBe('judge rule');
    expect((await run(doer(2))).finalText).toBe('doer 2');
    expect((await run(doer(1, ['urgent']))).finalText).toBe('urgent doer');
    expect((await run(doer(1), { attempt: 2 })).finalText).toBe('second try');
    expect((await run(doer(1), { attempt: 1 })).finalText).toBe('fallback');
  });

  it('matches on files that exist or are missing', async () => {
    const { run, work } = await setUp(script);
    await writeFile(join(work, 'DONE'), '');
    expect((await run(doer(1), { attempt: 1 })).finalText).toBe('already done');
  });

  it('counts attempts per bead itself when the runner does not say', async () => {
    const { run } = await setUp({
      rules: [{ when: { attempt: 1 }, steps: [{ fail: 'flaky first try' }] }, { steps: [{ say: 'ok now' }] }],
    });
    expect(await run(doer(1))).toMatchObject({ outcome: 'error', message: 'flaky first try' });
    expect(await run(doer(1))).toMatchObject({ outcome: 'ok', finalText: 'ok now' });
    expect((await run(doer(2))).outcome).toBe('error');
  });

  it('is an error, naming the bead, when no rule matches', async () => {
    const { run } = await setUp({ rules: [{ when: { role: 'judge' }, steps: [] }] });
    const result = await run(doer(1));
    expect(result.outcome).toBe('error');
    expect(result.fatal).toBeUndefined();
    expect(result.message).toContain('no rule');
    expect(result.message).toContain('bd-7f3.1');
  });
});

describe('scripted agent: steps', () => {
  it('writes, edits and appends files with substitutions, and says its final text', async () => {
    const { run, work } = await setUp({
      rules: [
        {
          steps: [
            { write: 'notes/{{bead}}.md', content: 'iter {{iter}} next {{next_iter}} epic {{epic}}\nTODO\n' },
            { edit: 'notes/{{bead}}.md', find: 'TODO', replace: 'done $& $1' },
            { append: 'log.txt', content: '{{ bead }}\n' },
            { say: 'did iteration {{iter}}' },
            { say: 'next is {{next_iter}}' },
          ],
        },
      ],
    });
    const result = await run(doer(3));
    expect(result).toMatchObject({
      outcome: 'ok',
      agent: 'scripted',
      scripted: true,
      finalText: 'did iteration 3\nnext is 4',
    });
    expect(await read(join(work, 'notes/bd-7f3.3.md'))).toBe('iter 3 next 4 epic bd-7f3\ndone $& $1\n');
    expect(await read(join(work, 'log.txt'))).toBe('bd-7f3.3\n');
  });

  it('takes the epic from an epic: label when the id is flat', async () => {
    const { run } = await setUp({ rules: [{ steps: [{ say: '{{epic}}' }] }] });
    expect((await run({ id: 'bd-42', title: 't', labels: ['epic:bd-7f3'] })).finalText).toBe('bd-7f3');
  });

  it('fails an edit whose text is absent, and stops there', async () => {
    const { run, work } = await setUp({
      rules: [
        {
          steps: [
            { write: 'a.txt', content: 'hello' },
            { edit: 'a.txt', find: 'absent', replace: 'x' },
            { write: 'b.txt', content: 'no' },
          ],
        },
      ],
    });
    const result = await run(doer());
    expect(result.outcome).toBe('error');
    expect(result.message).toContain('"absent" is not in it');
    expect(await exists(join(work, 'b.txt'))).toBe(false);
  });

  it('runs argv without a shell in the request cwd with the request env', async () => {
    const { run, work } = await setUp({
      rules: [
        {
          steps: [
            {
              run: [
                'node',
                '-e',
                "require('fs').writeFileSync('ran.txt', process.env.MARK + ' ' + process.argv[1])",
                '$(echo no) {{bead}}',
              ],
            },
            { run: ['node', '-e', 'process.exit(4)'], allowFailure: true },
            { say: 'after' },
          ],
        },
      ],
    });
    const result = await run(doer(), {
      env: {
        PATH: `${dirname(process.execPath)}:/usr/bin:/bin`,
        FORGE_SCRIPTED_AGENT: join(dirname(work), 'script.json'),
        MARK: 'env-ok',
      },
    });
    expect(result.outcome).toBe('ok');
    expect(await read(join(work, 'ran.txt'))).toBe('env-ok $(echo no) bd-7f3.1');
  });

  it('fails when a run step fails without allowFailure', async () => {
    const { run } = await setUp({
      rules: [
        {
          steps: [
            { run: ['node', '-e', "console.error('tests failed'); process.exit(2)"] },
            { say: 'never' },
          ],
        },
      ],
    });
    const result = await run(doer());
    expect(result.outcome).toBe('error');
    expect(result.message).toContain('exited 2: tests failed');
    expect(result.finalText).toBe('');
  });

  it('fails with the message of a fail step', async () => {
    const { run } = await setUp({ rules: [{ steps: [{ fail: 'bead {{bead}} is impossible' }] }] });
    expect(await run(doer())).toMatchObject({ outcome: 'error', message: 'bead bd-7f3.1 is impossible' });
  });

  it('simulates a rate limit, an auth failure and an overload', async () => {
    const now = 1_800_000_000_000;
    const clock = { now: () => now, sleep: async () => {} };
    const { run } = await setUp(
      {
        rules: [
          { when: { iter: 1 }, steps: [{ rateLimit: { resetInSeconds: 90 } }, { say: 'never' }] },
          { when: { iter: 2 }, steps: [{ authError: true }] },
          { when: { iter: 3 }, steps: [{ overloaded: true }] },
        ],
      },
      { clock },
    );
    expect(await run(doer(1))).toMatchObject({
      outcome: 'rate_limited',
      resetAt: now + 90_000,
      retryAfterMs: 90_000,
      finalText: '',
    });
    expect((await run(doer(2))).outcome).toBe('auth');
    expect((await run(doer(3))).outcome).toBe('overloaded');
  });

  it('records usage and cost', async () => {
    const { run } = await setUp({
      rules: [
        {
          steps: [
            { usage: { inputTokens: 100, outputTokens: 20, costUsd: 0.25 } },
            { usage: { costUsd: 0.5 } },
          ],
        },
      ],
    });
    expect(await run(doer())).toMatchObject({ usage: { inputTokens: 100, outputTokens: 20 }, costUsd: 0.75 });
  });

  it('still writes in read-only mode, and says so in the result', async () => {
    const { run, work } = await setUp({
      rules: [
        {
          steps: [
            { write: 'judge-was-here.txt', content: 'x' },
            { run: ['node', '-e', ''] },
            { say: '{"score": 5}' },
          ],
        },
      ],
    });
    const result = await run(judge, { mode: 'read-only' });
    expect(await exists(join(work, 'judge-was-here.txt'))).toBe(true);
    expect(result.outcome).toBe('ok');
    expect(result.readOnly).toEqual({
      enforcement: 'none',
      attempts: ['write judge-was-here.txt', 'run node -e '],
    });
    expect(result.message).toContain('read-only');
  });

  it('writes a transcript of each step and of run output', async () => {
    const { run, dir } = await setUp({
      rules: [
        { steps: [{ write: 'a', content: 'x' }, { run: ['node', '-e', "console.log('hello from run')"] }] },
      ],
    });
    const transcriptPath = join(dir, 'logs', 'bead.log');
    await run(doer(), { transcriptPath });
    const records = (await read(transcriptPath)).trim().split('\n');
    expect(records[0]).toContain('"forge":"start"');
    expect(records.filter((line) => line.includes('"forge":"step"'))).toHaveLength(2);
    expect(records).toContain('hello from run');
    expect(records.at(-1)).toContain('"outcome":"ok"');
  });
});

/** Starts `sleep 300` in a session of its own and returns once it is there (its pid in server.pid). */
const ESCAPE_AND_WAIT =
  "setsid sh -c 'echo $$ > server.pid; exec sleep 300' >/dev/null 2>&1 & while [ ! -s server.pid ]; do sleep 0.05; done";

describe('scripted agent: stopping', () => {
  it('times out during a sleep', async () => {
    const { run } = await setUp({ rules: [{ steps: [{ sleep_ms: 60_000 }, { say: 'never' }] }] });
    const result = await run(doer(), { timeoutMs: 300 });
    expect(result.outcome).toBe('timeout');
  });

  it('times out a run step and kills it', async () => {
    const { run, work } = await setUp({
      rules: [
        {
          steps: [
            {
              run: [
                'node',
                '-e',
                "require('fs').writeFileSync('pid', String(process.pid)); setInterval(() => {}, 1000)",
              ],
            },
          ],
        },
      ],
    });
    // Long enough that the step's node has written its pid under a loaded machine's slow starts.
    const result = await run(doer(), { timeoutMs: 5000 });
    expect(result.outcome).toBe('timeout');
    const pid = Number(await read(join(work, 'pid')));
    expect(await eventually(() => isGone(pid))).toBe(true);
  });

  it('ends what a run step started in a session of its own (setsid), and notes it', async () => {
    const { run, work, dir } = await setUp({
      rules: [{ steps: [{ run: ['sh', '-c', ESCAPE_AND_WAIT] }, { say: 'HYPOTHESIS: served' }] }],
    });
    const transcriptPath = join(dir, 'bead.log');
    const result = await run(doer(), { transcriptPath });
    const pid = Number(await read(join(work, 'server.pid')));
    expect(result.outcome).toBe('ok');
    expect(await isGone(pid)).toBe(true);
    expect(await read(transcriptPath)).toContain(`"forge":"swept"`);
  });

  it('aborts on the caller’s signal', async () => {
    const controller = new AbortController();
    const { run } = await setUp({ rules: [{ steps: [{ sleep_ms: 60_000 }] }] });
    setTimeout(() => controller.abort(), 200);
    expect((await run(doer(), { signal: controller.signal })).outcome).toBe('aborted');
  });
});

describe('scripted agent: script problems are fatal and clear', () => {
  it('needs FORGE_SCRIPTED_AGENT', async () => {
    const { run } = await setUp({ rules: [{ steps: [] }] });
    const result = await run(doer(), { env: {} });
    // The run's set-up, not the bead's fault: the runner stops, the bead left open and unlabelled.
    expect(result).toMatchObject({ outcome: 'error', fatal: true, environment: true });
    expect(result.message).toContain('FORGE_SCRIPTED_AGENT');
  });

  it('resolves a relative script path against the working tree', async () => {
    const { run, work } = await setUp({ rules: [] });
    await writeFile(join(work, 'local.json'), JSON.stringify({ rules: [{ steps: [{ say: 'local' }] }] }));
    expect((await run(doer(), { env: { FORGE_SCRIPTED_AGENT: 'local.json' } })).finalText).toBe('local');
  });

  it.each([
    [{ rules: [{ steps: [{ wirte: 'a', content: 'x' }] }] }, 'rules[0].steps[0]: not a known step'],
    [{ rules: [{ when: { rol: 'doer' }, steps: [] }] }, 'rules[0].when.rol: unknown key'],
    [{ rules: [] }, 'rules'],
    ['{ not json', 'not valid JSON'],
  ])('rejects an invalid script, naming the file and the field', async (script, expected) => {
    const { run } = await setUp(script);
    const result = await run(doer());
    expect(result).toMatchObject({ outcome: 'error', fatal: true, environment: true });
    expect(result.message).toContain('script.json');
    expect(result.message).toContain(expected);
  });

  it('rejects unknown and unavailable placeholders', async () => {
    const { run } = await setUp({
      rules: [{ when: { iter: 1 }, steps: [{ say: '{{title}}' }] }, { steps: [{ say: '{{iter}}' }] }],
    });
    const unknown = await run(doer(1));
    expect(unknown).toMatchObject({ outcome: 'error', fatal: true });
    // A step this bead cannot take is the bead's failure, not the set-up's.
    expect(unknown.environment).toBeUndefined();
    expect(unknown.message).toContain('unknown placeholder {{title}}');
    const unavailable = await run({ id: 'bd-1', title: 't', labels: [] });
    expect(unavailable.message).toContain('{{iter}} needs an iter:N label');
  });

  it('refuses paths outside the working tree', async () => {
    const { run, dir } = await setUp({ rules: [{ steps: [{ write: '../escaped.txt', content: 'x' }] }] });
    const result = await run(doer());
    expect(result).toMatchObject({ outcome: 'error', fatal: true });
    expect(result.message).toContain('outside the working tree');
    expect(await exists(join(dir, 'escaped.txt'))).toBe(false);
  });
});
