// Commands a run starts over an agent's work (a loop's metric, guards and tracks, an epic's gates) get a
// temp directory of their own, as agents do (agents/agent-temp.ts). Tools keep compiled code in the temp
// directory and load it when it looks current: tsx's cache in `/tmp/tsx-<uid>` is one. A doer that ran
// tsx once with TMPDIR=/tmp and then edited the cached compile of the metric's script had the unchanged
// script score a worse change as the goal (seen). In a directory made for the run, nothing an agent left
// can be found, and what the command leaves is removed with it.
import { makeAgentTemp } from '../agents/agent-temp.js';
import { runProcess, type Command, type ProcessResult, type RunProcessOptions } from '../infra/process.js';

export async function runWithOwnTemp(command: Command, options: RunProcessOptions): Promise<ProcessResult> {
  const temp = await makeAgentTemp(options.env);
  try {
    return await runProcess(command, { ...options, env: temp.env });
  } finally {
    // After the sweep (runProcess waits for it): nothing the command started is left to write there.
    await temp.remove();
  }
}
