// The readiness state machine, pure: every rule in the table is tried against a state that breaks
// it (and the same move from a state that does not), plus the never-reach guarantees by search.
import { describe, expect, it } from 'vitest';
import {
  advance,
  gateVerdict,
  nextStep,
  reenterAfterLoop,
  TARGETS,
  type Target,
} from '../../src/autoresearch/spec-state/machine.js';
import { applyRecord } from '../../src/autoresearch/spec-state/record.js';
import { RULES } from '../../src/autoresearch/spec-state/rules.js';
import {
  DIMENSIONS,
  newRunState,
  PHASE_PLANNING,
  PHASES,
  runStateSchema,
  type Phase,
  type RunState,
} from '../../src/autoresearch/spec-state/schema.js';

const AT = '2026-11-23T18:00:00.000Z';
const WHO = { by: 'tester', reason: 'because', at: AT };
const stamp = { by: 'agent', at: AT };

/** A state at `phase` whose every phase output is in order: each test breaks one thing. */
function good(phase: Phase, handoff: RunState['handoff'] = 'WITHHELD'): RunState {
  return {
    ...newRunState('rate-limiter'),
    prompt: 'sparse',
    phase,
    planning: PHASE_PLANNING[phase],
    handoff,
    evidence: [{ id: 'E1', source: 'src/x.ts', summary: 'x locks', ...stamp }],
    claims: [{ id: 'C1', text: 'x must lock', evidence: ['E1'], ...stamp }],
    reducer: 'reducer',
    gaps: [],
    question_rounds: [{ round: 1, asked: 2, answered: 2, ...stamp }],
    draft: { path: 'specs/rate-limiter/spec.md', sha256: 'a'.repeat(64), ...stamp },
    scores: Object.fromEntries(DIMENSIONS.map((d) => [d, 90])),
    blockers: [],
    reviews: [{ reviewer: 'red-team', material: 0, minor: 3, ...stamp }],
    beads_epic: 'bd-9k2',
  };
}

const openBlocker = { id: 'B1', reason: 'no retry limit', ...stamp, resolved: null };

interface Case {
  rule: string;
  what: string;
  from: RunState;
  to: Target;
  who?: typeof WHO;
  /** The same move from `from` with this change is refused by `rule`. */
  broken: (s: RunState) => RunState;
}

const CASES: Case[] = [
  { rule: 'who-and-why', what: 'no reason', from: good('draft'), to: 'verify', broken: (s) => s },
  {
    rule: 'one-phase-at-a-time',
    what: 'skipping verify',
    from: good('verify'),
    to: 'readiness_gate',
    broken: (s) => ({ ...s, phase: 'draft' }),
  },
  {
    rule: 'intake-classifies-prompt',
    what: 'unclassified request',
    from: good('intake'),
    to: 'evidence_fan_out',
    broken: (s) => ({ ...s, prompt: null }),
  },
  {
    rule: 'evidence-fan-out-collects',
    what: 'no evidence',
    from: good('evidence_fan_out'),
    to: 'reduce_merge',
    broken: (s) => ({ ...s, evidence: [] }),
  },
  {
    rule: 'single-reducer',
    what: 'nobody reduced',
    from: good('reduce_merge'),
    to: 'gap_analysis',
    broken: (s) => ({ ...s, reducer: null }),
  },
  {
    rule: 'claims-trace-to-evidence',
    what: 'no claims after the merge',
    from: good('reduce_merge'),
    to: 'gap_analysis',
    broken: (s) => ({ ...s, claims: [] }),
  },
  {
    rule: 'claims-trace-to-evidence',
    what: 'an unsourced claim at verify',
    from: good('verify'),
    to: 'readiness_gate',
    broken: (s) => ({ ...s, claims: [...s.claims, { id: 'C2', text: 'guess', evidence: [], ...stamp }] }),
  },
  {
    rule: 'claims-trace-to-evidence',
    what: 'an unsourced claim on the way to PLANNING_READY',
    from: good('adversarial_review'),
    to: 'PLANNING_READY',
    broken: (s) => ({ ...s, claims: [{ ...s.claims[0]!, evidence: [] }] }),
  },
  {
    rule: 'gaps-analysed',
    what: 'gap analysis never ran',
    from: good('gap_analysis'),
    to: 'user_input',
    broken: (s) => ({ ...s, gaps: null }),
  },
  {
    rule: 'sparse-prompt-needs-questions',
    what: 'sparse, no rounds, leaving user input',
    from: good('user_input'),
    to: 'draft',
    broken: (s) => ({ ...s, question_rounds: [] }),
  },
  {
    rule: 'sparse-prompt-needs-questions',
    what: 'sparse, a round of zero questions',
    from: good('user_input'),
    to: 'draft',
    broken: (s) => ({ ...s, question_rounds: [{ round: 1, asked: 0, answered: 0, ...stamp }] }),
  },
  {
    rule: 'sparse-prompt-needs-questions',
    what: 'sparse, no rounds, reaching PLANNING_READY with perfect scores',
    from: good('adversarial_review'),
    to: 'plan_handoff',
    broken: (s) => ({ ...s, question_rounds: [], scores: allScores(100) }),
  },
  {
    rule: 'questions-answered',
    what: 'one question unanswered',
    from: good('user_input'),
    to: 'draft',
    broken: (s) => ({ ...s, question_rounds: [{ round: 1, asked: 2, answered: 1, ...stamp }] }),
  },
  {
    rule: 'draft-recorded',
    what: 'no draft recorded',
    from: good('draft'),
    to: 'verify',
    broken: (s) => ({ ...s, draft: null }),
  },
  {
    rule: 'verify-scores-every-dimension',
    what: 'scope not scored',
    from: good('verify'),
    to: 'readiness_gate',
    broken: (s) => ({ ...s, scores: withoutScope(s) }),
  },
  {
    rule: 'blockers-beat-scores',
    what: 'an open blocker with every score 100',
    from: good('readiness_gate'),
    to: 'adversarial_review',
    broken: (s) => ({ ...s, scores: allScores(100), blockers: [openBlocker] }),
  },
  {
    rule: 'blockers-beat-scores',
    what: 'a blocker raised during review',
    from: good('adversarial_review'),
    to: 'plan_handoff',
    broken: (s) => ({ ...s, blockers: [openBlocker] }),
  },
  {
    rule: 'blockers-beat-scores',
    what: 'a blocker before the handoff is released',
    from: good('plan_handoff'),
    to: 'ELIGIBLE',
    broken: (s) => ({ ...s, blockers: [openBlocker] }),
  },
  {
    rule: 'eighty-eighty',
    what: 'one dimension at 79, the rest at 100',
    from: good('readiness_gate'),
    to: 'ADVERSARIAL_REVIEW',
    broken: (s) => ({ ...s, scores: { ...allScores(100), scope: 79 } }),
  },
  {
    rule: 'eighty-eighty',
    what: 'one dimension never scored',
    from: good('readiness_gate'),
    to: 'adversarial_review',
    broken: (s) => ({ ...s, scores: withoutScope(s) }),
  },
  {
    rule: 'reviewers-zero-material',
    what: 'no reviewer',
    from: good('adversarial_review'),
    to: 'plan_handoff',
    broken: (s) => ({ ...s, reviews: [] }),
  },
  {
    rule: 'reviewers-zero-material',
    what: 'a second reviewer with material findings',
    from: good('adversarial_review'),
    to: 'plan_handoff',
    broken: (s) => ({ ...s, reviews: [...s.reviews, { reviewer: 'b', material: 2, minor: 0, ...stamp }] }),
  },
  {
    rule: 'reviewers-zero-material',
    what: "the same reviewer's latest report has findings",
    from: good('adversarial_review'),
    to: 'plan_handoff',
    broken: (s) => ({ ...s, reviews: [...s.reviews, { ...s.reviews[0]!, material: 1 }] }),
  },
  {
    rule: 'handoff-only-from-planning-ready',
    what: 'releasing the handoff during review',
    from: good('plan_handoff'),
    to: 'ELIGIBLE',
    broken: (s) => ({ ...s, phase: 'adversarial_review', planning: 'ADVERSARIAL_REVIEW' }),
  },
  {
    rule: 'handoff-changes',
    what: 'releasing it twice',
    from: good('plan_handoff'),
    to: 'ELIGIBLE',
    broken: (s) => ({ ...s, handoff: 'ELIGIBLE' }),
  },
  {
    rule: 'beads-need-eligible-handoff',
    what: 'beads from a withheld plan',
    from: good('plan_handoff', 'ELIGIBLE'),
    to: 'beads_generation',
    broken: (s) => ({ ...s, handoff: 'WITHHELD' }),
  },
  {
    rule: 'beads-epic-recorded',
    what: 'no build epic',
    from: good('beads_generation', 'ELIGIBLE'),
    to: 'beads_review',
    broken: (s) => ({ ...s, beads_epic: null }),
  },
];

function allScores(value: number): RunState['scores'] {
  return Object.fromEntries(DIMENSIONS.map((d) => [d, value]));
}

function withoutScope(s: RunState): RunState['scores'] {
  const { scope: _scope, ...rest } = s.scores;
  return rest;
}

describe('the readiness rules', () => {
  it.each(CASES)('$rule refuses $what, and allows the same move otherwise', (c) => {
    const allowed = advance(c.from, c.to, WHO);
    expect(allowed.ok, JSON.stringify(allowed)).toBe(true);
    const who = c.rule === 'who-and-why' ? { ...WHO, reason: ' ' } : WHO;
    const refused = advance(c.broken(c.from), c.to, who);
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.violations.map((v) => v.rule)).toContain(c.rule);
  });

  it('every rule in the table has a case that tries to break it', () => {
    expect(new Set(CASES.map((c) => c.rule))).toEqual(new Set(RULES.map((r) => r.name)));
  });

  it('a sparse request with no question round never reaches PLANNING_READY or ELIGIBLE, by any path', () => {
    // Everything else perfect; from every phase before PLANNING_READY (a state loaded from a file may
    // be anywhere), search every state reachable by any sequence of moves.
    const seen = new Set<string>();
    for (const phase of PHASES.filter((p) => PHASE_PLANNING[p] !== 'PLANNING_READY')) {
      const queue: RunState[] = [{ ...good(phase), question_rounds: [], scores: allScores(100) }];
      while (queue.length > 0) {
        const state = queue.shift()!;
        const key = `${phase}:${state.phase}/${state.handoff}`;
        if (seen.has(key)) continue;
        seen.add(key);
        expect(state.planning).not.toBe('PLANNING_READY');
        expect(state.handoff).toBe('WITHHELD');
        for (const target of TARGETS) {
          const result = advance(state, target, WHO);
          if (result.ok) queue.push(result.state);
        }
      }
    }
    // The search reached the adversarial review (from the phases past user input): the rule stopped it there.
    expect(seen).toContain('adversarial_review:adversarial_review/WITHHELD');
  });

  it('a rich request with no question round may go through user input', () => {
    const rich = { ...good('user_input'), prompt: 'rich' as const, question_rounds: [] };
    expect(advance(rich, 'draft', WHO).ok).toBe(true);
  });

  it('scores alone never pass the gate: an open blocker fails it whatever the scores', () => {
    const perfect = { ...good('readiness_gate'), scores: allScores(100) };
    expect(gateVerdict(perfect)).toEqual({ passes: true, needs: [] });
    const blocked = gateVerdict({ ...perfect, blockers: [openBlocker] });
    expect(blocked.passes).toBe(false);
    expect(blocked.needs.map((n) => n.rule)).toEqual(['blockers-beat-scores']);
    const resolved = { ...openBlocker, resolved: { by: 'a', at: AT, reason: 'limit of 3' } };
    expect(gateVerdict({ ...perfect, blockers: [resolved] }).passes).toBe(true);
  });

  it('the gate does not pass before the spec reaches it', () => {
    const verdict = gateVerdict(good('draft'));
    expect(verdict.passes).toBe(false);
    expect(verdict.needs.map((n) => n.rule)).toEqual(['reached-readiness-gate']);
  });
});

describe('moving the machine', () => {
  it('appends every transition to the history with who, why, from and to', () => {
    const result = advance(good('readiness_gate'), 'ADVERSARIAL_REVIEW', WHO);
    if (!result.ok) throw new Error('refused');
    expect(result.state.phase).toBe('adversarial_review');
    expect(result.state.planning).toBe('ADVERSARIAL_REVIEW');
    expect(result.state.history.at(-1)).toEqual({
      kind: 'transition',
      at: AT,
      by: 'tester',
      reason: 'because',
      from: { phase: 'readiness_gate', planning: 'SPECULATIVE_DRAFT', handoff: 'WITHHELD' },
      to: { phase: 'adversarial_review', planning: 'ADVERSARIAL_REVIEW', handoff: 'WITHHELD' },
    });
    expect(runStateSchema.safeParse(result.state).success).toBe(true);
  });

  it('going back from PLANNING_READY withdraws the handoff', () => {
    const result = advance(good('beads_generation', 'ELIGIBLE'), 'AWAITING_CLARIFICATION', WHO);
    if (!result.ok) throw new Error('refused');
    expect(result.state).toMatchObject({
      phase: 'user_input',
      planning: 'AWAITING_CLARIFICATION',
      handoff: 'WITHHELD',
    });
  });

  it('says what the next step needs, and releases the handoff before beads', () => {
    expect(nextStep(good('plan_handoff'))).toEqual({ target: 'ELIGIBLE', needs: [] });
    const step = nextStep({ ...good('readiness_gate'), blockers: [openBlocker] });
    expect(step.target).toBe('adversarial_review');
    expect(step.needs.map((n) => n.rule)).toEqual(['blockers-beat-scores']);
    expect(nextStep(good('beads_review', 'ELIGIBLE')).target).toBeNull();
  });

  it("a serving loop's end puts the spec back at the readiness gate with the handoff withheld", () => {
    const outcome = {
      strategy: 'autoresearch' as const,
      epic: 'bd-l1',
      final_score: 82,
      best_score: 84,
      terminal_reason: 'plateau' as const,
      at: AT,
    };
    const state = reenterAfterLoop(good('beads_review', 'ELIGIBLE'), outcome, 'retrospective');
    expect(state).toMatchObject({
      phase: 'readiness_gate',
      planning: 'SPECULATIVE_DRAFT',
      handoff: 'WITHHELD',
    });
    expect(state.loop).toEqual(outcome);
    expect(state.history.at(-1)).toMatchObject({ kind: 'transition', by: 'retrospective' });
    expect(runStateSchema.safeParse(state).success).toBe(true);
  });

  it('a loop that ends before the spec reached the gate records its outcome but skips no phase', () => {
    const outcome = {
      strategy: 'autoresearch' as const,
      epic: 'bd-l1',
      final_score: 95,
      best_score: 95,
      terminal_reason: 'goal_reached' as const,
      at: AT,
    };
    const state = reenterAfterLoop({ ...good('draft'), draft: null }, outcome, 'retrospective');
    expect(state).toMatchObject({ phase: 'draft', planning: 'SPECULATIVE_DRAFT', loop: outcome });
    expect(state.history.at(-1)).toMatchObject({ kind: 'record', by: 'retrospective' });
    expect(gateVerdict(state).passes).toBe(false);
  });
});

describe('recording', () => {
  it('numbers evidence, claims and blockers, and records who and what', () => {
    const result = applyRecord(
      newRunState('x'),
      {
        prompt: 'rich',
        evidence: [
          { source: 'README.md', summary: 'a' },
          { source: 'src/a.ts', summary: 'b' },
        ],
        claims: [{ text: 'c', evidence: ['E2'] }],
        blockers: ['b'],
      },
      { by: 'agent', reason: null, at: AT },
    );
    if (!result.ok) throw new Error(result.message);
    expect(result.state.evidence.map((e) => e.id)).toEqual(['E1', 'E2']);
    expect(result.state.claims[0]).toMatchObject({ id: 'C1', evidence: ['E2'] });
    expect(result.state.blockers[0]).toMatchObject({ id: 'B1', resolved: null });
    expect(result.state.history).toEqual([
      {
        kind: 'record',
        at: AT,
        by: 'agent',
        reason: null,
        what: ['prompt rich', 'evidence E1', 'evidence E2', 'claim C1 from E2', 'blocker B1'],
      },
    ]);
    expect(runStateSchema.safeParse(result.state).success).toBe(true);
  });

  const who = { by: 'agent', reason: 'r', at: AT };
  it.each([
    [
      'a claim citing missing evidence',
      good('draft'),
      { claims: [{ text: 't', evidence: ['E9'] }] },
      'claims-trace-to-evidence',
    ],
    ['a second reducer', good('gap_analysis'), { reducer: 'someone-else' }, 'single-reducer'],
    [
      'reclassifying a sparse request after intake',
      good('draft'),
      { prompt: 'rich' as const },
      'intake-classifies-prompt',
    ],
    ['resolving a blocker that does not exist', good('draft'), { resolve: ['B4'] }, undefined],
    [
      'more answers than questions',
      good('user_input'),
      { questionRound: { asked: 1, answered: 2 } },
      undefined,
    ],
    ['nothing at all', good('draft'), {}, undefined],
  ])('refuses %s and changes nothing', (_what, state, input, rule) => {
    const result = applyRecord(state, input, who);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.rule).toBe(rule);
  });

  it('resolving a blocker needs a reason', () => {
    const blocked = { ...good('draft'), blockers: [openBlocker] };
    expect(applyRecord(blocked, { resolve: ['B1'] }, { ...who, reason: null }).ok).toBe(false);
    const done = applyRecord(blocked, { resolve: ['B1'] }, who);
    expect(done.ok && done.state.blockers[0]?.resolved).toEqual({ by: 'agent', at: AT, reason: 'r' });
  });
});

describe('the run-state schema', () => {
  it('refuses a planning state that does not match the phase, naming the field', () => {
    const result = runStateSchema.safeParse({ ...good('draft'), planning: 'PLANNING_READY' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((i) => i.path.join('.'))).toContain('planning');
  });

  it('refuses ELIGIBLE outside PLANNING_READY and claims citing unknown evidence', () => {
    const bad = {
      ...good('draft'),
      handoff: 'ELIGIBLE',
      claims: [{ ...good('draft').claims[0]!, evidence: ['E7'] }],
    };
    const paths = runStateSchema.safeParse(bad).error?.issues.map((i) => i.path.join('.'));
    expect(paths).toEqual(expect.arrayContaining(['handoff', 'claims.0.evidence.0']));
  });
});
