// The hint under a run that stopped short: it adds what the message does not already say.
import { describe, expect, it } from 'vitest';
import { stopHint } from '../../src/cli/run-command.js';
import type { RunSummary } from '../../src/loop/types.js';

const summary = (reason: RunSummary['reason'], message: string): RunSummary => ({
  reason,
  message,
  beadsRun: 1,
  beadsClosed: 0,
  costUsd: 0,
});

describe('stopHint', () => {
  it('a loop waiting for a human is told where the question is and how to resume', () => {
    expect(stopHint('bd-a', summary('needs_human', 'The strategist asked a question.'))).toBe(
      "Answer the question in the loop's needs-human.md, then run: ralph-loop resume bd-a",
    );
  });

  it('a stop whose executor said what comes next gets that, or none when it said there is none', () => {
    // A pipeline's stage, stopped by hand: its message names the command that goes on.
    const stopped = {
      ...summary(
        'needs_human',
        'Stage "spec" (bd-s) was stopped by ralph-loop stop; run the pipeline again to go on: ralph-loop bd-p',
      ),
      hint: '',
    };
    expect(stopHint('bd-p', stopped)).toBeUndefined();
    expect(stopHint('bd-p', { ...stopped, hint: 'Run: ralph-loop bd-p' })).toBe('Run: ralph-loop bd-p');
  });

  it('a message that merely quotes a command (an agent’s question) still gets the loop’s hint', () => {
    const asked = summary('needs_human', 'Should I run `ralph-loop bd-x` again, or stop?');
    expect(stopHint('bd-a', asked)).toBe(
      "Answer the question in the loop's needs-human.md, then run: ralph-loop resume bd-a",
    );
  });
});
