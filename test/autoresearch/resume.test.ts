// The human in the loop: telling answered from unanswered, asking, and resuming without touching scores.
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { decide } from '../../src/autoresearch/arbiter.js';
import { parseLoopConfig, type LoopConfigFile } from '../../src/autoresearch/config.js';
import type { LedgerLine } from '../../src/autoresearch/ledger.js';
import { loadLedgerSummary, recordLedgerLine } from '../../src/autoresearch/ledger-summary.js';
import {
  askHuman,
  readNeedsHuman,
  recordQuestionAsked,
  resumeLoop,
  splitQuestion,
} from '../../src/autoresearch/resume.js';
import { openLoop, type LoopContext } from '../../src/autoresearch/loop-context.js';
import { stampIteration, stampResumeStrategist } from '../../src/autoresearch/stamp.js';
import { createMemoryBeadStore } from '../../src/beads/embedded/index.js';
import type { BeadStore } from '../../src/beads/types.js';
import { ExitCode, type AppError } from '../../src/infra/errors.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

const EPIC_CONFIG = (epic: string): LoopConfigFile => ({
  subject: 'parser',
  epic_id: epic,
  metric: { type: 'hard', command: 'npm test', score: { from: 'exit-code' } },
  target: null,
  scope: { doer_paths: ['src/'] },
  caps: { max_iterations: 0, plateau_threshold: 0 },
  agents: { strategist: 'claude-opus' },
});

async function makeLoop(): Promise<{ ctx: LoopContext; store: BeadStore; epic: string }> {
  const repo = await mkdtemp(join(tmpdir(), 'forge-resume-'));
  onTestFinished(() => rm(repo, { recursive: true, force: true }));
  const ws = join(repo, '.autoresearch');
  await mkdir(ws);
  const store = createMemoryBeadStore();
  const epic = (await store.create({ title: 'autoresearch: parser', type: 'epic', labels: ['autoresearch'] }))
    .id;
  await writeFile(join(ws, 'config.json'), JSON.stringify(EPIC_CONFIG(epic)));
  await writeFile(join(ws, 'program.md'), 'Make it faster.\n');
  const config = parseLoopConfig(EPIC_CONFIG(epic), 'config.json');
  const lines: LedgerLine[] = [];
  for (const [iter, score] of [40, 70, 55].entries()) {
    const { line } = decide({
      config,
      ledger: lines,
      iter,
      judge: { ok: true, output: { score, findings: [] } },
      baseSha: 'a'.repeat(40),
      now: `2026-01-01T00:00:0${iter}Z`,
      hypothesis: `h${iter}`,
    });
    lines.push(line);
    await recordLedgerLine(loopFiles, join(ws, 'research-log.jsonl'), line, {
      direction: 'maximize',
      target: null,
    });
  }
  await writeFile(
    join(ws, 'arbiter-signal.json'),
    JSON.stringify({
      type: 'continue',
      iter: 2,
      next_iter: 3,
      current_score: 55,
      best_score: 70,
      decision: 'revert',
      delta: -15,
    }),
  );
  await writeFile(
    join(ws, 'judge-output-2.json'),
    JSON.stringify({ score: 55, findings: ['slow on unicode', { at: 'lexer' }] }),
  );
  const ctx = await openLoop(repo, epic, {
    workspace: '.autoresearch',
    storeKind: 'embedded',
    files: diskLoopFiles(),
  });
  await stampIteration(ctx, store, { iter: 1 });
  await stampIteration(ctx, store, { iter: 2 });
  return { ctx, store, epic };
}

describe('answered or not', () => {
  it('splits at the last "## Answer" line and ignores the placeholder comment', () => {
    expect(splitQuestion('Q?\n\n## Answer\n\n<!-- write below -->\n')).toEqual({
      question: 'Q?',
      answer: '',
    });
    expect(splitQuestion('Q?\n## answer:\nYes, do it.\n')).toEqual({ question: 'Q?', answer: 'Yes, do it.' });
    expect(splitQuestion('Just a question?')).toEqual({ question: 'Just a question?', answer: undefined });
  });

  it('an empty answer section, an untouched file, or a file with no way to tell are all unanswered', async () => {
    const { ctx } = await makeLoop();
    const { paths } = ctx;
    expect((await readNeedsHuman(loopFiles, paths)).state).toBe('none');

    await writeFile(paths.needsHuman, 'Which API?\n\n## Answer\n');
    expect(await readNeedsHuman(loopFiles, paths)).toMatchObject({
      state: 'unanswered',
      why: expect.stringContaining('no answer yet'),
    });

    await writeFile(paths.needsHuman, 'Which API?\n');
    expect(await readNeedsHuman(loopFiles, paths)).toMatchObject({
      state: 'unanswered',
      why: expect.stringContaining('cannot be told'),
    });

    await recordQuestionAsked(loopFiles, paths, '2026-01-01T00:00:00Z');
    expect(await readNeedsHuman(loopFiles, paths)).toMatchObject({
      state: 'unanswered',
      why: expect.stringContaining('unchanged'),
    });

    await writeFile(paths.needsHuman, 'Which API?\nThe public one, unchanged.\n');
    expect(await readNeedsHuman(loopFiles, paths)).toMatchObject({
      state: 'answered',
      question: 'Which API?',
      answer: 'The public one, unchanged.',
    });
  });

  it('askHuman writes the question with an answer section and records it as asked', async () => {
    const { ctx } = await makeLoop();
    await askHuman(loopFiles, ctx.paths, 'bd-9', 'Per user or per key?', '2026-01-01T00:00:00Z');
    const text = await readFile(ctx.paths.needsHuman, 'utf8');
    expect(text).toMatch(/^Per user or per key\?\n\n## Answer\n\n<!-- .*ralph-loop resume bd-9 -->\n$/);
    expect((await readNeedsHuman(loopFiles, ctx.paths)).state).toBe('unanswered');
    // Answering above the section still counts: the file changed since it was asked.
    await writeFile(ctx.paths.needsHuman, `Per key.\n${text}`);
    expect((await readNeedsHuman(loopFiles, ctx.paths)).state).toBe('answered');
  });
});

describe('resumeLoop', () => {
  it('stamps resume-strategist-1 with question and answer, archives the file, and leaves the ledger intact', async () => {
    const { ctx, store, epic } = await makeLoop();
    const ledgerBefore = await readFile(ctx.paths.ledger, 'utf8');
    const bestBefore = (
      await loadLedgerSummary(loopFiles, ctx.paths.ledger, { direction: 'maximize', target: null })
    ).summary;
    expect(bestBefore.best_score).toBe(70);
    await writeFile(
      ctx.paths.needsHuman,
      'May I change the public API?\n\n## Answer\n\nNo: keep every exported name.\n',
    );

    const result = await resumeLoop(ctx, store);
    expect(result.k).toBe(1);
    expect(result.answer).toBe('No: keep every exported name.');
    expect(result.archived).toBe(ctx.paths.needsHumanResolved(1));
    await expect(stat(ctx.paths.needsHuman)).rejects.toThrow();
    expect(await readFile(result.archived, 'utf8')).toContain('keep every exported name');

    const bead = await store.show(result.created[0]?.id ?? '');
    expect(bead.title).toBe('resume-strategist-1: parser');
    expect([...bead.labels].sort()).toEqual([
      'agent:claude-opus',
      'autoresearch',
      'iter:2',
      'role:resume-strategist',
    ]);
    expect(bead.parent).toBe(epic);
    expect(bead.dependencies.filter((d) => d.dependency_type === 'blocks')).toEqual([]);
    expect(bead.description).toContain('May I change the public API?');
    expect(bead.description).toContain('No: keep every exported name.');
    expect(bead.description).toContain('slow on unicode');
    expect(bead.description).toContain('"best_score":70');
    expect(bead.description).toContain('--iter 3 --directive-file .autoresearch/directives/directive-3.md');
    // It can run at once: it depends on nothing open.
    expect((await store.ready(epic)).map((b) => b.id)).toContain(bead.id);

    expect(await readFile(ctx.paths.ledger, 'utf8')).toBe(ledgerBefore);
    const after = (
      await loadLedgerSummary(loopFiles, ctx.paths.ledger, { direction: 'maximize', target: null })
    ).summary;
    expect(after.best_score).toBe(70);
    expect(after.current_score).toBe(70);
    expect(JSON.parse(await readFile(ctx.paths.arbiterSignal, 'utf8'))).toMatchObject({ best_score: 70 });
  });

  it('numbers later questions 2, 3, … and writes an answer given on the command line', async () => {
    const { ctx, store } = await makeLoop();
    await writeFile(ctx.paths.needsHuman, 'First?\n\n## Answer\n\nyes\n');
    await resumeLoop(ctx, store);
    await askHuman(loopFiles, ctx.paths, 'e', 'Second?', '2026-01-01T00:00:00Z');
    const second = await resumeLoop(ctx, store, { answer: 'Use the token bucket.' });
    expect(second.k).toBe(2);
    expect(second.answer).toBe('Use the token bucket.');
    expect(await readFile(ctx.paths.needsHumanResolved(2), 'utf8')).toMatch(
      /Second\?\n\n## Answer\n\nUse the token bucket\.\n$/,
    );
    await expect(stat(ctx.paths.needsHumanAsked)).rejects.toThrow();
  });

  it('refuses an unanswered question (exit 6) and a loop that asked nothing (exit 2)', async () => {
    const { ctx, store, epic } = await makeLoop();
    const nothing = (await resumeLoop(ctx, store).catch((e: unknown) => e)) as AppError;
    expect(nothing.exitCode).toBe(ExitCode.usage);
    expect(nothing.message).toContain('not waiting for a human');

    await writeFile(ctx.paths.needsHuman, 'Q?\n\n## Answer\n');
    const unanswered = (await resumeLoop(ctx, store).catch((e: unknown) => e)) as AppError;
    expect(unanswered.exitCode).toBe(ExitCode.needsHuman);
    expect(unanswered.message).toContain('not answered');
    expect(await store.children(epic)).toHaveLength(8);
    expect(await readFile(ctx.paths.needsHuman, 'utf8')).toBe('Q?\n\n## Answer\n');
  });

  it('after an interruption between stamping and archiving, resuming again stamps nothing twice', async () => {
    const { ctx, store, epic } = await makeLoop();
    await writeFile(ctx.paths.needsHuman, 'Q?\n\n## Answer\n\nA.\n');
    const first = await stampResumeStrategist(ctx, store, {
      k: 1,
      question: 'Q?',
      answer: 'A.',
      signal: null,
      terminal: null,
      findings: [],
    });
    const result = await resumeLoop(ctx, store);
    expect(result.created).toEqual([]);
    expect(result.existing.map((b) => b.id)).toEqual(first.created.map((b) => b.id));
    expect((await store.children(epic)).filter((b) => b.title.startsWith('resume-strategist'))).toHaveLength(
      1,
    );
  });

  it('reopens an epic the runner closed when all its beads were done', async () => {
    const { ctx, store, epic } = await makeLoop();
    await store.close(epic, 'all done');
    await writeFile(ctx.paths.needsHuman, 'Q?\n\n## Answer\n\nA.\n');
    const result = await resumeLoop(ctx, store);
    expect(result.reopened).toBe(true);
    expect((await store.show(epic)).status).toBe('open');
  });
});
