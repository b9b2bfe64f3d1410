// What the pipeline's phases record in the run state (evidence, claims, scores, question rounds,
// blockers, reviews, …), applied purely and checked: an id that does not exist, a second reducer or a
// reclassified request is refused with a message, and the state is left as it was.
import type { Dimension, RunState } from './schema.js';

export interface RecordInput {
  prompt?: 'sparse' | 'rich';
  evidence?: { source: string; summary: string }[];
  claims?: { text: string; evidence: string[] }[];
  /** Evidence added to claims already recorded. */
  cites?: { claim: string; evidence: string[] }[];
  reducer?: string;
  gaps?: { dimension: Dimension | null; missing: string }[];
  /** The gap analysis ran and found nothing. */
  noGaps?: boolean;
  questionRound?: { asked: number; answered: number };
  scores?: Partial<Record<Dimension, number>>;
  blockers?: string[];
  /** Blocker ids resolved (the record's reason says how). */
  resolve?: string[];
  review?: { reviewer: string; material: number; minor: number };
  beadsEpic?: string;
  /** The draft spec: its repository-relative path and content hash. */
  draft?: { path: string; sha256: string };
}

export interface Recorder {
  by: string;
  reason: string | null;
  at: string;
}

export type RecordResult =
  { ok: true; state: RunState; what: string[] } | { ok: false; message: string; rule?: string };

class Refusal extends Error {
  constructor(
    message: string,
    readonly rule?: string,
  ) {
    super(message);
  }
}

/** The state with `input` recorded and one history entry saying what, or why it cannot be. */
export function applyRecord(state: RunState, input: RecordInput, who: Recorder): RecordResult {
  try {
    const { state: next, what } = record(state, input, who);
    if (what.length === 0) return { ok: false, message: 'nothing to record: give at least one item' };
    const entry = { kind: 'record' as const, at: who.at, by: who.by, reason: who.reason, what };
    return { ok: true, state: { ...next, history: [...next.history, entry] }, what };
  } catch (error) {
    if (error instanceof Refusal)
      return error.rule === undefined
        ? { ok: false, message: error.message }
        : { ok: false, message: error.message, rule: error.rule };
    throw error;
  }
}

function record(start: RunState, input: RecordInput, who: Recorder): { state: RunState; what: string[] } {
  let s = start;
  const what: string[] = [];
  const stamp = { by: who.by, at: who.at };

  if (input.prompt !== undefined) {
    if (s.phase !== 'intake' && s.prompt !== input.prompt)
      throw new Refusal(
        `the request was classified ${String(s.prompt)} at intake; it cannot be reclassified in ${s.phase}`,
        'intake-classifies-prompt',
      );
    s = { ...s, prompt: input.prompt };
    what.push(`prompt ${input.prompt}`);
  }
  for (const e of input.evidence ?? []) {
    const id = nextId('E', s.evidence);
    s = { ...s, evidence: [...s.evidence, { id, source: e.source, summary: e.summary, ...stamp }] };
    what.push(`evidence ${id}`);
  }
  if (input.reducer !== undefined) {
    if (s.reducer !== null && s.reducer !== input.reducer)
      throw new Refusal(
        `${s.reducer} already reduced this spec's evidence; one reducer only`,
        'single-reducer',
      );
    s = { ...s, reducer: input.reducer };
    what.push(`reducer ${input.reducer}`);
  }
  for (const c of input.claims ?? []) {
    checkEvidence(s, c.evidence);
    const id = nextId('C', s.claims);
    s = { ...s, claims: [...s.claims, { id, text: c.text, evidence: unique(c.evidence), ...stamp }] };
    what.push(`claim ${id}${c.evidence.length > 0 ? ` from ${c.evidence.join(', ')}` : ' (unsourced)'}`);
  }
  for (const cite of input.cites ?? []) {
    checkEvidence(s, cite.evidence);
    if (!s.claims.some((c) => c.id === cite.claim)) throw new Refusal(`no claim ${cite.claim}`);
    s = {
      ...s,
      claims: s.claims.map((c) =>
        c.id === cite.claim ? { ...c, evidence: unique([...c.evidence, ...cite.evidence]) } : c,
      ),
    };
    what.push(`claim ${cite.claim} cites ${cite.evidence.join(', ')}`);
  }
  if (input.noGaps === true) {
    if ((input.gaps ?? []).length > 0) throw new Refusal('give gaps or no gaps, not both');
    s = { ...s, gaps: s.gaps ?? [] };
    what.push('no gaps');
  }
  for (const g of input.gaps ?? []) {
    const gaps = s.gaps ?? [];
    const id = nextId('G', gaps);
    s = { ...s, gaps: [...gaps, { id, dimension: g.dimension, missing: g.missing, ...stamp }] };
    what.push(`gap ${id}`);
  }
  if (input.questionRound !== undefined) {
    const { asked, answered } = input.questionRound;
    if (answered > asked)
      throw new Refusal(`${answered} answered of ${asked} asked: cannot answer more than asked`);
    const round = s.question_rounds.length + 1;
    s = { ...s, question_rounds: [...s.question_rounds, { round, asked, answered, ...stamp }] };
    what.push(`question round ${round}: ${answered}/${asked} answered`);
  }
  for (const [dimension, score] of Object.entries(input.scores ?? {})) {
    s = { ...s, scores: { ...s.scores, [dimension]: score } };
    what.push(`score ${dimension} ${score}`);
  }
  for (const reason of input.blockers ?? []) {
    const id = nextId('B', s.blockers);
    s = { ...s, blockers: [...s.blockers, { id, reason, ...stamp, resolved: null }] };
    what.push(`blocker ${id}`);
  }
  for (const id of input.resolve ?? []) {
    const blocker = s.blockers.find((b) => b.id === id);
    if (blocker === undefined) throw new Refusal(`no blocker ${id}`);
    if (blocker.resolved !== null) throw new Refusal(`blocker ${id} is already resolved`);
    if (who.reason === null) throw new Refusal(`resolving ${id} needs --reason (how it was resolved)`);
    const resolved = { ...stamp, reason: who.reason };
    s = { ...s, blockers: s.blockers.map((b) => (b.id === id ? { ...b, resolved } : b)) };
    what.push(`resolved ${id}`);
  }
  if (input.review !== undefined) {
    s = { ...s, reviews: [...s.reviews, { ...input.review, ...stamp }] };
    what.push(`review by ${input.review.reviewer}: ${input.review.material} material`);
  }
  if (input.draft !== undefined) {
    s = { ...s, draft: { ...input.draft, ...stamp } };
    what.push(`draft ${input.draft.path} (${input.draft.sha256.slice(0, 12)})`);
  }
  if (input.beadsEpic !== undefined) {
    s = { ...s, beads_epic: input.beadsEpic };
    what.push(`beads epic ${input.beadsEpic}`);
  }
  return { state: s, what };
}

function checkEvidence(state: RunState, ids: readonly string[]): void {
  const missing = ids.filter((id) => !state.evidence.some((e) => e.id === id));
  if (missing.length > 0)
    throw new Refusal(`no evidence ${missing.join(', ')}: record it first`, 'claims-trace-to-evidence');
}

/** The next id of a list: one past the highest number used (ids are never reused). */
function nextId(letter: string, items: readonly { id: string }[]): string {
  const highest = items.reduce((max, item) => Math.max(max, Number(item.id.slice(1))), 0);
  return `${letter}${highest + 1}`;
}

function unique(ids: readonly string[]): string[] {
  return [...new Set(ids)];
}
