// How an arbiter's decision reads in prose: the status table, progress lines and the doer's history.
// No zod here (ledger.ts has it): `ralph-loop status` renders these and loads no schema library.
import type { Decision } from './ledger.js';

export const DECISION_WORDS = {
  baseline: 'baseline',
  keep: 'kept',
  revert: 'reverted',
  crash: 'crashed',
  tamper: 'tampered',
  guard_failed: 'guard failed',
} as const satisfies Record<Decision, string>;

export type DecisionWord = (typeof DECISION_WORDS)[Decision];
