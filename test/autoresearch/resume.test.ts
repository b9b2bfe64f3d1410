// The human in the loop: telling answered from unanswered, asking, and resuming without touching scores.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
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
import type { LoopFiles } from '../../src/infra/loop-files.js';
import { createMemoryLoopFiles } from '../support/memory-loop-files.js';

// Asking and resuming only touch the loop's state and its beads: both are held in memory here.

/** A file the test expects to exist, read through the loop's files. */
async function readText(files: LoopFiles, path: string): Promise<string> {
  const text = await files.readIfExists(path);
  if (text === undefined) throw new Error(`expected ${path} to exist`);
  return text;
}

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
  const loopFiles = createMemoryLoopFiles();
  const repo = '/work/repo';
  const ws = join(repo, '.autoresearch');
  const store = createMemoryBeadStore();
  const epic = (await store.create({ title: 'autoresearch: parser', type: 'epic', labels: ['autoresearch'] }))
    .id;
  await loopFiles.writeText(join(ws, 'config.json'), JSON.stringify(EPIC_CONFIG(epic)));
  await loopFiles.writeText(join(ws, 'program.md'), 'Make it faster.\n');
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
  await loopFiles.writeText(
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
  await loopFiles.writeText(
    join(ws, 'judge-output-2.json'),
    JSON.stringify({ score: 55, findings: ['slow on unicode', { at: 'lexer' }] }),
  );
  const ctx = await openLoop(repo, epic, {
    workspace: '.autoresearch',
    storeKind: 'embedded',
    files: loopFiles,
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
    expect((await readNeedsHuman(ctx.files, paths)).state).toBe('none');

    await ctx.files.writeText(paths.needsHuman, 'Which API?\n\n## Answer\n');
    expect(await readNeedsHuman(ctx.files, paths)).toMatchObject({
      state: 'unanswered',
      why: expect.stringContaining('no answer yet'),
    });

    await ctx.files.writeText(paths.needsHuman, 'Which API?\n');
    expect(await readNeedsHuman(ctx.files, paths)).toMatchObject({
      state: 'unanswered',
      why: expect.stringContaining('cannot be told'),
    });

    await recordQuestionAsked(ctx.files, paths, '2026-01-01T00:00:00Z');
    expect(await readNeedsHuman(ctx.files, paths)).toMatchObject({
      state: 'unanswered',
      why: expect.stringContaining('unchanged'),
    });

    await ctx.files.writeText(paths.needsHuman, 'Which API?\nThe public one, unchanged.\n');
    expect(await readNeedsHuman(ctx.files, paths)).toMatchObject({
      state: 'answered',
      question: 'Which API?',
      answer: 'The public one, unchanged.',
    });
  });

  it('an asked record that is not one (bad JSON, a hash that is not text) is as if none was kept', async () => {
    const { ctx } = await makeLoop();
    await ctx.files.writeText(ctx.paths.needsHuman, 'Which API?\nThe public one.\n');
    for (const record of ['{"sha256":', JSON.stringify({ sha256: 5, question: 'Which API?\n' }), '[]']) {
      await ctx.files.writeText(ctx.paths.needsHumanAsked, record);
      expect(await readNeedsHuman(ctx.files, ctx.paths)).toMatchObject({
        state: 'unanswered',
        why: expect.stringContaining('cannot be told'),
      });
    }
    await ctx.files.writeJson(ctx.paths.needsHumanAsked, { sha256: 'x', question: 'Which API?\n' });
    expect(await readNeedsHuman(ctx.files, ctx.paths)).toMatchObject({
      state: 'answered',
      answer: 'The public one.',
    });
  });

  it('askHuman writes the question with an answer section and records it as asked', async () => {
    const { ctx } = await makeLoop();
    await askHuman(ctx.files, ctx.paths, 'bd-9', 'Per user or per key?', '2026-01-01T00:00:00Z');
    const text = await readText(ctx.files, ctx.paths.needsHuman);
    expect(text).toMatch(/^Per user or per key\?\n\n## Answer\n\n<!-- .*ralph-loop resume bd-9 -->\n$/);
    expect((await readNeedsHuman(ctx.files, ctx.paths)).state).toBe('unanswered');
    // Answering above the section still counts: the file changed since it was asked.
    await ctx.files.writeText(ctx.paths.needsHuman, `Per key.\n${text}`);
    expect((await readNeedsHuman(ctx.files, ctx.paths)).state).toBe('answered');
  });
});

describe('resumeLoop', () => {
  it('stamps resume-strategist-1 with question and answer, archives the file, and leaves the ledger intact', async () => {
    const { ctx, store, epic } = await makeLoop();
    const ledgerBefore = await readText(ctx.files, ctx.paths.ledger);
    const bestBefore = (
      await loadLedgerSummary(ctx.files, ctx.paths.ledger, { direction: 'maximize', target: null })
    ).summary;
    expect(bestBefore.best_score).toBe(70);
    await ctx.files.writeText(
      ctx.paths.needsHuman,
      'May I change the public API?\n\n## Answer\n\nNo: keep every exported name.\n',
    );

    const result = await resumeLoop(ctx, store);
    expect(result.k).toBe(1);
    expect(result.answer).toBe('No: keep every exported name.');
    expect(result.archived).toBe(ctx.paths.needsHumanResolved(1));
    expect(await ctx.files.exists(ctx.paths.needsHuman)).toBe(false);
    expect(await readText(ctx.files, result.archived)).toContain('keep every exported name');

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

    expect(await readText(ctx.files, ctx.paths.ledger)).toBe(ledgerBefore);
    const after = (
      await loadLedgerSummary(ctx.files, ctx.paths.ledger, { direction: 'maximize', target: null })
    ).summary;
    expect(after.best_score).toBe(70);
    expect(after.current_score).toBe(70);
    expect(JSON.parse(await readText(ctx.files, ctx.paths.arbiterSignal))).toMatchObject({ best_score: 70 });
  });

  it('numbers later questions 2, 3, … and writes an answer given on the command line', async () => {
    const { ctx, store } = await makeLoop();
    await ctx.files.writeText(ctx.paths.needsHuman, 'First?\n\n## Answer\n\nyes\n');
    await resumeLoop(ctx, store);
    await askHuman(ctx.files, ctx.paths, 'e', 'Second?', '2026-01-01T00:00:00Z');
    const second = await resumeLoop(ctx, store, { answer: 'Use the token bucket.' });
    expect(second.k).toBe(2);
    expect(second.answer).toBe('Use the token bucket.');
    expect(await readText(ctx.files, ctx.paths.needsHumanResolved(2))).toMatch(
      /Second\?\n\n## Answer\n\nUse the token bucket\.\n$/,
    );
    expect(await ctx.files.exists(ctx.paths.needsHumanAsked)).toBe(false);
  });

  it('refuses an unanswered question (exit 6) and a loop that asked nothing (exit 2)', async () => {
    const { ctx, store, epic } = await makeLoop();
    const nothing = (await resumeLoop(ctx, store).catch((e: unknown) => e)) as AppError;
    expect(nothing.exitCode).toBe(ExitCode.usage);
    expect(nothing.message).toContain('not waiting for a human');

    await ctx.files.writeText(ctx.paths.needsHuman, 'Q?\n\n## Answer\n');
    const unanswered = (await resumeLoop(ctx, store).catch((e: unknown) => e)) as AppError;
    expect(unanswered.exitCode).toBe(ExitCode.needsHuman);
    expect(unanswered.message).toContain('not answered');
    expect(await store.children(epic)).toHaveLength(8);
    expect(await readText(ctx.files, ctx.paths.needsHuman)).toBe('Q?\n\n## Answer\n');
  });

  it('after an interruption between stamping and archiving, resuming again stamps nothing twice', async () => {
    const { ctx, store, epic } = await makeLoop();
    await ctx.files.writeText(ctx.paths.needsHuman, 'Q?\n\n## Answer\n\nA.\n');
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
    await ctx.files.writeText(ctx.paths.needsHuman, 'Q?\n\n## Answer\n\nA.\n');
    const result = await resumeLoop(ctx, store);
    expect(result.reopened).toBe(true);
    expect((await store.show(epic)).status).toBe('open');
  });
});
