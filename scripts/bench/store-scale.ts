// Figure 8: the embedded store at 100, 1,000 and 10,000 beads. A change (claim, comment, close) must
// cost about the same at every size, and `ready` must not grow with the beads already closed. Each
// store is an epic whose children are mostly closed (as a long loop leaves them), on the disk the
// project lives on, so every change pays its real fsync.
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createEmbeddedStore,
  serializeIssuesJsonl,
  type IssueRecord,
} from '../../src/beads/embedded/index.js';
import type { Row } from './report.js';
import { summarize, type Summary } from './stats.js';

export interface StoreScaleSize {
  beads: number;
  /** Children still open when the rounds start (the rest are closed). */
  open: number;
  fileBytes: number;
  /** First `ready` of a fresh store: reads and parses the whole file. */
  coldReadMs: number;
  /** Each of claim, comment and close, every one fsynced before it resolves. */
  changeMs: Summary;
  readyMs: Summary;
  /** One compaction (the whole file rewritten sorted), and that cost spread over the changes before it. */
  compactMs: number;
  compactEvery: number;
}

export interface StoreScale {
  dir: string;
  sizes: StoreScaleSize[];
}

/** Budget: a change at the largest size within this factor of a change at the smallest. */
export const CHANGE_RATIO_BUDGET = 1.5;
const OPEN_CHILDREN = 40;
const EPIC_ID = 'bd-epic';

export async function measureStoreScale(options: {
  sizes: readonly number[];
  rounds: number;
  /** Where the stores go: a directory on the disk Forge's users keep repositories on. */
  baseDir: string;
}): Promise<StoreScale> {
  await mkdir(options.baseDir, { recursive: true });
  const dir = await mkdtemp(join(options.baseDir, 'forge-store-scale-'));
  try {
    const stores: SizeRun[] = [];
    for (const beads of options.sizes) stores.push(await prepareSize(join(dir, `n${beads}`), beads));
    // Round-robin over the sizes, each round starting at another one, so a busy moment on a shared
    // machine lands on every size alike rather than on whichever ran then.
    for (let round = 0; round < options.rounds; round += 1) {
      for (let k = 0; k < stores.length; k += 1) {
        const size = stores[(round + k) % stores.length];
        if (size !== undefined) await runRound(size, round);
      }
    }
    const sizes: StoreScaleSize[] = [];
    for (const size of stores) sizes.push(await finish(size));
    return { dir: options.baseDir, sizes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

interface SizeRun {
  beads: number;
  open: number;
  issues: string;
  store: ReturnType<typeof createEmbeddedStore>;
  coldReadMs: number;
  changes: number[];
  readies: number[];
}

async function prepareSize(cwd: string, beads: number): Promise<SizeRun> {
  const open = Math.min(OPEN_CHILDREN, beads - 1);
  await mkdir(join(cwd, '.beads'), { recursive: true });
  const issues = join(cwd, '.beads', 'issues.jsonl');
  await writeFile(issues, serializeIssuesJsonl(syntheticEpic(beads, open)));
  await writeFile(join(cwd, '.beads', 'forge-embedded.json'), `${JSON.stringify({ prefix: 'bd' })}\n`);
  const store = createEmbeddedStore({ cwd, actor: 'bench' });
  const t0 = performance.now();
  await store.ready(EPIC_ID);
  return { beads, open, issues, store, coldReadMs: performance.now() - t0, changes: [], readies: [] };
}

async function timed<T>(samples: number[], run: () => Promise<T>): Promise<T> {
  const start = performance.now();
  const result = await run();
  samples.push(performance.now() - start);
  return result;
}

async function runRound(size: SizeRun, round: number): Promise<void> {
  const { store, changes, readies } = size;
  const [next] = await timed(readies, () => store.ready(EPIC_ID));
  if (next === undefined) throw new Error(`no ready bead left at ${size.beads} beads, round ${round}`);
  await timed(changes, () => store.claim(next.id));
  await timed(changes, () => store.comment(next.id, `round ${round}`));
  await timed(changes, () => store.close(next.id, 'bench'));
  // Reopened so the open set stays the same size through the rounds.
  await store.reopen(next.id, undefined);
}

async function finish(size: SizeRun): Promise<StoreScaleSize> {
  const fileBytes = (await stat(size.issues)).size;
  const c0 = performance.now();
  await size.store.flush();
  const compactMs = performance.now() - c0;
  return {
    beads: size.beads,
    open: size.open,
    fileBytes,
    coldReadMs: size.coldReadMs,
    changeMs: summarize(size.changes),
    readyMs: summarize(size.readies),
    compactMs,
    // The default bound: more superseded lines than max(256, issues).
    compactEvery: Math.max(256, size.beads) + 1,
  };
}

/** An epic and its children in br's line format: `open` of them open, the rest closed, with a comment each. */
export function syntheticEpic(beads: number, open: number): IssueRecord[] {
  const at = (second: number): string =>
    new Date(Date.UTC(2026, 0, 1) + second * 1000).toISOString().replace('Z', '000000Z');
  const base = {
    priority: 2,
    issue_type: 'task',
    created_by: 'bench',
    source_repo: '.',
    compaction_level: 0,
    original_size: 0,
  };
  const records: IssueRecord[] = [
    {
      ...base,
      id: EPIC_ID,
      title: 'Epic',
      issue_type: 'epic',
      status: 'open',
      created_at: at(0),
      updated_at: at(0),
      labels: [],
      dependencies: [],
      comments: [],
    },
  ];
  for (let n = 1; n < beads; n += 1) {
    const id = `${EPIC_ID}.${n}`;
    const closed = n > open;
    records.push({
      ...base,
      id,
      title: `bead ${n}`,
      description: `Do step ${n} of the plan and report what changed.`,
      status: closed ? 'closed' : 'open',
      created_at: at(n),
      updated_at: at(n + 1),
      ...(closed ? { closed_at: at(n + 1), close_reason: 'done' } : {}),
      labels: ['role:doer', `iter:${n}`],
      dependencies: [{ issue_id: id, depends_on_id: EPIC_ID, type: 'parent-child', created_at: at(n) }],
      comments: [{ id: n, issue_id: id, author: 'bench', text: `attempt 1 of ${n}`, created_at: at(n + 1) }],
    });
  }
  return records;
}

export function storeScaleRows(scale: StoreScale, ms: (value: number) => string): Row[] {
  const first = scale.sizes[0];
  const last = scale.sizes.at(-1);
  const rows: Row[] = scale.sizes.map((size, index) => ({
    figure: index === 0 ? '8' : '',
    measure:
      `embedded store, ${size.beads.toLocaleString('en')} beads (${size.open} open, ` +
      `${(size.fileBytes / 1024 ** 2).toFixed(1)} MB): change / ready, median (p95); cold read; compaction`,
    value:
      `${ms(size.changeMs.median)} (${ms(size.changeMs.p95)}) / ${ms(size.readyMs.median)} ` +
      `(${ms(size.readyMs.p95)}); ${ms(size.coldReadMs)}; ${ms(size.compactMs)} ` +
      `(${ms(size.compactMs / size.compactEvery)} per change)`,
    budget: '',
    verdict: '',
  }));
  if (first !== undefined && last !== undefined && first !== last) {
    const change = last.changeMs.median / first.changeMs.median;
    const ready = last.readyMs.median / first.readyMs.median;
    rows.push({
      figure: '',
      measure: `change and ready at ${last.beads.toLocaleString('en')} beads ÷ at ${first.beads} (median)`,
      value: `${change.toFixed(2)}× / ${ready.toFixed(2)}×`,
      budget: `≤ ${CHANGE_RATIO_BUDGET.toFixed(1)}× each`,
      verdict:
        change <= CHANGE_RATIO_BUDGET && ready <= CHANGE_RATIO_BUDGET
          ? 'meets'
          : `misses (${Math.max(change, ready).toFixed(2)}×)`,
    });
  }
  return rows;
}
