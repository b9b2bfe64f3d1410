// The built-in executors of an autoresearch loop, by role, for the runner's registry.
import type { Executor } from '../../loop/types.js';
import { createArbiterExecutor } from './arbiter.js';
import type { AutoresearchContext } from './context.js';
import { createDoerExecutor } from './doer.js';
import { createJudgeExecutor } from './judge.js';
import { candidateDoer, candidateJudge } from './candidate.js';
import { createRetrospectiveExecutor, createStrategistExecutor } from './strategist.js';

export type { AutoresearchContext } from './context.js';
export { NEEDS_HUMAN_FILE } from './strategist.js';

export function createAutoresearchExecutors(context: AutoresearchContext): Record<string, Executor> {
  const arbiter = createArbiterExecutor(context);
  return {
    // A population's candidates (beads labelled candidate:<i>) run in their own worktrees.
    doer: candidateDoer(context, createDoerExecutor(context), createDoerExecutor),
    judge: candidateJudge(context, createJudgeExecutor(context), createJudgeExecutor),
    arbiter,
    'arbiter-script': arbiter,
    strategist: createStrategistExecutor(context, 'strategist'),
    'resume-strategist': createStrategistExecutor(context, 'resume-strategist'),
    retrospective: createRetrospectiveExecutor(context),
  };
}
