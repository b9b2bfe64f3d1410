// Stamping cycles: exact labels and dependencies, idempotence, refusals, and the blind contract.
import { appendFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { decide } from '../../src/autoresearch/arbiter.js';
import { parseLoopConfig, type LoopConfigFile } from '../../src/autoresearch/config.js';
import type { LedgerLine } from '../../src/autoresearch/ledger.js';
import { openLoop, type LoopContext } from '../../src/autoresearch/loop-context.js';
import { blindSecrets, redactSecrets } from '../../src/autoresearch/redaction.js';
import { stampIteration, stampRetrospective, stampSoftBaseline } from '../../src/autoresearch/stamp.js';
import { shellWords } from '../../src/infra/command-line.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import { AppError, ExitCode } from '../../src/infra/errors.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

const SENTINEL = {
  command: 'node scripts/metric-SENTINEL-CMD.js --json',
  pattern: 'SENTINEL-REGEX: ([0-9.]+)',
  target: 4242.4242,
  program: 'PROGRAM-SENTINEL: make the parser faster without changing its output.',
  rubric: 'RUBRIC-SENTINEL: score each section for clarity, from 0 to 10, and sum the scores.',
  rubricPath: 'rubrics/rubric-SENTINEL.md',
  directive: 'DIRECTIVE-SENTINEL: try memoising the tokenizer.',
  scores: [313.37, 320.5, 300.25],
  hypotheses: ['', 'HYPOTHESIS-SENTINEL-ONE', 'HYPOTHESIS-SENTINEL-TWO'],
};

interface Loop {
  repo: string;
  ctx: LoopContext;
  store: BeadStore;
  epic: string;
}

async function makeLoop(options: { soft?: boolean; ledger?: boolean } = {}): Promise<Loop> {
  const repo = await mkdtemp(join(tmpdir(), 'forge-stamp-'));
  onTestFinished(() => rm(repo, { recursive: true, force: true }));
  const ws = join(repo, '.autoresearch');
  await mkdir(join(repo, 'rubrics'), { recursive: true });
  await mkdir(ws, { recursive: true });
  await writeFile(join(repo, SENTINEL.rubricPath), `# Rubric\n\n${SENTINEL.rubric}\n`);
  await writeFile(join(ws, 'program.md'), `${SENTINEL.program}\n`);
  const store = createMemoryBeadStore();
  const epic = (await store.create({ title: 'autoresearch: parser', type: 'epic', labels: ['autoresearch'] }))
    .id;
  const metric: LoopConfigFile['metric'] = options.soft
    ? { type: 'soft', rubric_path: SENTINEL.rubricPath, artifact_path: 'docs/spec.md' }
    : {
        type: 'hard',
        command: SENTINEL.command,
        score: { from: 'regex', pattern: SENTINEL.pattern },
        artifact_path: 'src/',
      };
  const file: LoopConfigFile = {
    subject: 'parser',
    epic_id: epic,
    metric,
    target: SENTINEL.target,
    scope: { doer_paths: [options.soft ? 'docs/spec.md' : 'src/'] },
    agents: { doer: 'codex', judge: 'claude-haiku', strategist: 'claude-sonnet' },
  };
  await writeFile(join(ws, 'config.json'), JSON.stringify(file));
  await writeFile(join(ws, 'research-log.jsonl'), '');
  if (options.ledger !== false) {
    const config = parseLoopConfig(file, 'config.json');
    const lines: LedgerLine[] = [];
    SENTINEL.scores.forEach((score, iter) => {
      const result = decide({
        config,
        ledger: lines,
        iter,
        judge: { ok: true, output: { score, findings: [] } },
        baseSha: 'a'.repeat(40),
        now: `2026-01-01T00:00:0${iter}Z`,
        hypothesis: SENTINEL.hypotheses[iter] ?? '',
        iterationCostUsd: 0.25,
      });
      lines.push(result.line);
    });
    await appendFile(join(ws, 'research-log.jsonl'), lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
  }
  const ctx = await openLoop(repo, epic, {
    workspace: '.autoresearch',
    storeKind: 'embedded',
    files: diskLoopFiles(),
  });
  return { repo, ctx, store, epic };
}

async function blockers(store: BeadStore, id: string): Promise<string[]> {
  return (await store.show(id)).dependencies.filter((d) => d.dependency_type === 'blocks').map((d) => d.id);
}

async function beadByTitle(store: BeadStore, epic: string, prefix: string) {
  const bead = (await store.children(epic)).find((b) => b.title.startsWith(`${prefix}:`));
  if (bead === undefined) throw new Error(`no bead ${prefix}`);
  return store.show(bead.id);
}

describe('stamping an iteration', () => {
  it('creates doer, judge, arbiter and strategist with exact titles, labels and a dependency chain', async () => {
    const { ctx, store, epic } = await makeLoop();
    const result = await stampIteration(ctx, store, { iter: 1 });
    expect(result.created.map((b) => b.role)).toEqual(['doer', 'judge', 'arbiter', 'strategist']);
    expect(result.existing).toEqual([]);
    const [doer, judge, arbiter, strategist] = result.created.map((b) => b.id) as [
      string,
      string,
      string,
      string,
    ];

    const shown = await Promise.all([doer, judge, arbiter, strategist].map((id) => store.show(id)));
    expect(shown.map((b) => b.title)).toEqual([
      'doer-1: parser',
      'judge-1: parser',
      'arbiter-1: parser',
      'strategist-1: parser',
    ]);
    expect(shown.map((b) => [...b.labels].sort())).toEqual([
      ['agent:codex', 'autoresearch', 'iter:1', 'role:doer'],
      ['autoresearch', 'iter:1', 'role:judge'],
      ['autoresearch', 'iter:1', 'role:arbiter'],
      ['agent:claude-sonnet', 'autoresearch', 'iter:1', 'role:strategist'],
    ]);
    expect(shown.every((b) => b.parent === epic)).toBe(true);
    expect(await blockers(store, doer)).toEqual([]);
    expect(await blockers(store, judge)).toEqual([doer]);
    expect(await blockers(store, arbiter)).toEqual([judge]);
    expect(await blockers(store, strategist)).toEqual([arbiter]);
    // Only the doer is ready: the cycle runs in order.
    expect((await store.ready(epic)).map((b) => b.id)).toEqual([doer]);
  });

  it('is idempotent: stamping the same iteration again creates nothing and names what exists', async () => {
    const { ctx, store, epic } = await makeLoop();
    const first = await stampIteration(ctx, store, { iter: 1 });
    const again = await stampIteration(ctx, store, { iter: 1, directive: { text: 'another idea' } });
    expect(again.created).toEqual([]);
    expect(again.existing.map((b) => b.id)).toEqual(first.created.map((b) => b.id));
    expect(await store.children(epic)).toHaveLength(4);
  });

  it('makes doer-N depend on strategist-(N-1) and saves the directive as directives/directive-N.md', async () => {
    const { ctx, store } = await makeLoop();
    const one = await stampIteration(ctx, store, { iter: 1 });
    const source = join(ctx.repo, 'my-directive.md');
    await writeFile(source, SENTINEL.directive);
    const two = await stampIteration(ctx, store, {
      iter: 2,
      directive: { text: SENTINEL.directive, source },
    });
    const strategist1 = one.created.find((b) => b.role === 'strategist')?.id;
    const doer2 = two.created.find((b) => b.role === 'doer')?.id ?? '';
    expect(await blockers(store, doer2)).toEqual([strategist1]);
    expect(await readFile(ctx.paths.directive(2), 'utf8')).toBe(SENTINEL.directive);
    expect((await store.show(doer2)).description).toContain(SENTINEL.directive);
    expect((await store.show(doer2)).labels).toContain('iter:2');
  });

  it('refuses an iteration that is not the next one, and one below 1', async () => {
    const { ctx, store, epic } = await makeLoop();
    await stampIteration(ctx, store, { iter: 1 });
    const skipped = await stampIteration(ctx, store, { iter: 3 }).catch((e: unknown) => e);
    expect(skipped).toBeInstanceOf(AppError);
    expect((skipped as AppError).exitCode).toBe(ExitCode.usage);
    expect((skipped as Error).message).toContain('the next is 2');
    await expect(stampIteration(ctx, store, { iter: 0 })).rejects.toThrow(/from 1/);
    await expect(stampIteration(ctx, store, { iter: 1.5 })).rejects.toThrow(/whole number/);
    expect(await store.children(epic)).toHaveLength(4);
  });

  it('completes an iteration a crash left half-stamped, reusing what exists', async () => {
    const { ctx, store, epic } = await makeLoop();
    const doer = await store.create({
      title: 'doer-1: parser',
      parent: epic,
      labels: ['autoresearch', 'role:doer', 'agent:codex', 'iter:1'],
    });
    const result = await stampIteration(ctx, store, { iter: 1 });
    expect(result.existing.map((b) => b.id)).toEqual([doer.id]);
    expect(result.created.map((b) => b.role)).toEqual(['judge', 'arbiter', 'strategist']);
    const judge = result.created[0]?.id ?? '';
    expect(await blockers(store, judge)).toEqual([doer.id]);
  });

  it('refuses to stamp once the loop has a terminal signal, and while a question waits for the user', async () => {
    const { ctx, store } = await makeLoop();
    await stampIteration(ctx, store, { iter: 1 });
    await writeFile(ctx.paths.needsHuman, 'Which API?\n\n## Answer\n');
    const asking = await stampIteration(ctx, store, { iter: 2 }).catch((e: unknown) => e);
    expect((asking as AppError).exitCode).toBe(ExitCode.needsHuman);
    expect((asking as Error).message).toContain('waiting for a human');
    await rm(ctx.paths.needsHuman);

    await writeFile(ctx.paths.terminalSignal, JSON.stringify({ type: 'terminal', reason: 'plateau' }));
    await expect(stampIteration(ctx, store, { iter: 2 })).rejects.toThrow(/has ended \(plateau\)/);
    // An iteration already stamped is still reported, not refused.
    expect((await stampIteration(ctx, store, { iter: 1 })).created).toEqual([]);
  });
});

describe('soft baseline and retrospective', () => {
  it('stamps judge-0 and arbiter-0, and doer-1 waits for arbiter-0', async () => {
    const { ctx, store, epic } = await makeLoop({ soft: true, ledger: false });
    const baseline = await stampSoftBaseline(ctx, store);
    expect(baseline.created.map((b) => [b.role, b.iter])).toEqual([
      ['judge', 0],
      ['arbiter', 0],
    ]);
    const judge0 = await store.show(baseline.created[0]?.id ?? '');
    expect(judge0.title).toBe('judge-0: parser');
    expect([...judge0.labels].sort()).toEqual(['agent:claude-haiku', 'autoresearch', 'iter:0', 'role:judge']);
    const arbiter0 = baseline.created[1]?.id ?? '';
    expect(await blockers(store, arbiter0)).toEqual([judge0.id]);
    expect((await stampSoftBaseline(ctx, store)).created).toEqual([]);

    const cycle = await stampIteration(ctx, store, { iter: 1 });
    expect(await blockers(store, cycle.created[0]?.id ?? '')).toEqual([arbiter0]);
    const judge1 = await beadByTitle(store, epic, 'judge-1');
    expect(judge1.labels).toContain('agent:claude-haiku');
  });

  it('stamps one retrospective, depending on the strategist that stamps it, even after a terminal signal', async () => {
    const { ctx, store, epic } = await makeLoop();
    await stampIteration(ctx, store, { iter: 1 });
    const strategist = await beadByTitle(store, epic, 'strategist-1');
    await writeFile(ctx.paths.terminalSignal, JSON.stringify({ type: 'terminal', reason: 'goal_reached' }));
    await store.claim(strategist.id);

    const result = await stampRetrospective(ctx, store);
    expect(result.created).toHaveLength(1);
    const retro = await store.show(result.created[0]?.id ?? '');
    expect(retro.title).toBe('retrospective: parser');
    expect([...retro.labels].sort()).toEqual([
      'agent:claude-sonnet',
      'autoresearch',
      'iter:1',
      'role:retrospective',
    ]);
    expect(await blockers(store, retro.id)).toEqual([strategist.id]);
    // Named relative to the repository root, where the retrospective runs: never an absolute path.
    expect(retro.description).toContain('`.autoresearch/retrospective.md`');
    expect(retro.description).toContain('`.autoresearch/rubric-suggestions.md`');
    expect(retro.description).not.toContain(ctx.repo);

    const again = await stampRetrospective(ctx, store);
    expect(again.created).toEqual([]);
    expect(again.existing.map((b) => b.id)).toEqual([retro.id]);
  });

  it('stamps no retrospective before the loop has ended: a strategist cannot end the night early', async () => {
    // Seen: strategist-1 stamped the retrospective with the target unmet and no terminal signal; the
    // loop closed its epic as done, and the real end found the retrospective used.
    const { ctx, store, epic } = await makeLoop();
    await stampIteration(ctx, store, { iter: 1 });
    await expect(stampRetrospective(ctx, store)).rejects.toMatchObject({
      exitCode: 2,
      message: `The loop of ${epic} has not ended (no terminal signal): its retrospective comes after the end.`,
    });
    expect((await store.children(epic)).map((bead) => bead.title)).not.toContain('retrospective: parser');
  });
});

describe('the blind contract', () => {
  const doerMustNotSee = (text: string) => {
    for (const secret of [
      'SENTINEL-CMD',
      'SENTINEL-REGEX',
      '4242.4242',
      'RUBRIC-SENTINEL',
      'rubric-SENTINEL',
      '313.37',
      '320.5',
      '300.25',
      'not an improvement',
      'research-log',
      'judge-output',
    ]) {
      expect(text, `the doer must not see ${secret}`).not.toContain(secret);
    }
  };

  it('the doer of a hard loop gets program, directive, scope and hypotheses, never the metric, target or scores', async () => {
    const { ctx, store, epic } = await makeLoop();
    await stampIteration(ctx, store, { iter: 1, directive: { text: SENTINEL.directive } });
    const doer = (await beadByTitle(store, epic, 'doer-1')).description ?? '';
    expect(doer).toContain(SENTINEL.program);
    expect(doer).toContain(SENTINEL.directive);
    expect(doer).toContain('HYPOTHESIS-SENTINEL-ONE');
    expect(doer).toContain('HYPOTHESIS-SENTINEL-TWO');
    expect(doer).toContain('`src/`');
    expect(doer).toMatch(/\| 2 \| reverted \| HYPOTHESIS-SENTINEL-TWO \|/);
    expect(doer).toMatch(/^HYPOTHESIS: /m);
    doerMustNotSee(doer);

    // The strategist, which chooses the next focus, sees everything.
    const strategist = (await beadByTitle(store, epic, 'strategist-1')).description ?? '';
    expect(strategist).toContain(SENTINEL.command);
    expect(strategist).toContain('320.5');
    expect(strategist).toContain('4242.4242');
    expect(strategist).toContain('HYPOTHESIS-SENTINEL-TWO');
  });

  it('the soft judge gets the rubric and the artifact, never the program, ledger, hypotheses or directive', async () => {
    const { ctx, store, epic } = await makeLoop({ soft: true });
    await stampIteration(ctx, store, { iter: 1, directive: { text: SENTINEL.directive } });
    const judge = (await beadByTitle(store, epic, 'judge-1')).description ?? '';
    expect(judge).toContain(SENTINEL.rubric);
    expect(judge).toContain('`docs/spec.md`');
    expect(judge).toContain('{"score": <number>, "findings": [');
    for (const secret of [
      'PROGRAM-SENTINEL',
      'HYPOTHESIS-SENTINEL',
      'DIRECTIVE-SENTINEL',
      'research-log',
      'program.md',
      'directive',
      '313.37',
      '320.5',
    ]) {
      expect(judge, `the judge must not see ${secret}`).not.toContain(secret);
    }
    const doer = (await beadByTitle(store, epic, 'doer-1')).description ?? '';
    doerMustNotSee(doer);
    expect(doer).toContain(SENTINEL.program);
  });

  it('what a directive leaks of the metric or rubric is cut out of the doer description', async () => {
    const { ctx, store, epic } = await makeLoop();
    const leaky = `Run \`${SENTINEL.command}\` and look for "${SENTINEL.pattern}" in its output.`;
    const result = await stampIteration(ctx, store, { iter: 1, directive: { text: leaky } });
    expect(result.redactions).toBe(2);
    const doer = (await beadByTitle(store, epic, 'doer-1')).description ?? '';
    doerMustNotSee(doer);
    expect(doer).toContain('[redacted: how the work is evaluated]');

    const soft = await makeLoop({ soft: true });
    const fromRubric = await stampIteration(soft.ctx, soft.store, {
      iter: 1,
      directive: { text: `Aim at: ${SENTINEL.rubric} (see ${SENTINEL.rubricPath})` },
    });
    expect(fromRubric.redactions).toBe(2);
    doerMustNotSee((await beadByTitle(soft.store, soft.epic, 'doer-1')).description ?? '');
  });

  it('blindSecrets ignores fragments too short to be told from ordinary words', () => {
    const config = parseLoopConfig(
      {
        subject: 's',
        metric: { type: 'hard', command: 'make test', score: { from: 'json', path: 'ok' } },
        scope: { doer_paths: ['src/'] },
      },
      'config.json',
    );
    expect(blindSecrets(config, undefined)).toEqual(['make test']);
    expect(redactSecrets('run make test, ok?', ['make test'])).toEqual({
      text: 'run [redacted: how the work is evaluated], ok?',
      count: 1,
    });
  });
});

describe('commands for agents', () => {
  it('quotes only words that need it', () => {
    expect(shellWords(['forge-pack', '-C', '/tmp/my repo', '--epic', "it's"])).toBe(
      `forge-pack -C '/tmp/my repo' --epic 'it'\\''s'`,
    );
  });
});
