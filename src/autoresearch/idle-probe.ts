// Explains an idle autoresearch epic: a question waiting for the user, or a terminal signal.
import { join, relative } from 'node:path';
import type { LoopFiles } from '../infra/loop-files.js';
import type { IdleProbe } from '../loop/types.js';
import { NEEDS_HUMAN_FILE } from './executors/strategist.js';
import { readTerminalSignal } from './signals.js';

export function createLoopIdleProbe(options: {
  repo: string;
  workspace: string;
  files: LoopFiles;
}): IdleProbe {
  return {
    async explain(epicId) {
      const question = join(options.workspace, NEEDS_HUMAN_FILE);
      const asked = await options.files.exists(question);
      if (asked) {
        return {
          reason: 'needs_human',
          detail: `The loop is waiting for your answer in ${relative(options.repo, question) || question}. Answer it in that file, then run: ralph-loop resume ${epicId}`,
        };
      }
      const terminal = await readTerminalSignal(options.files, options.workspace);
      if (terminal !== undefined) {
        return {
          reason: 'terminal',
          detail: `The loop ended (${terminal.reason}) at iteration ${terminal.iter}; best score ${String(terminal.best_score)}.`,
        };
      }
      return undefined;
    },
  };
}
