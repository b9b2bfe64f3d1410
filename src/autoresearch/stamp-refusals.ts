// What no stamp may do: stamp past a loop's end, or while it waits for a human.
import type { LoopContext } from './loop-context.js';
import { AppError, ExitCode } from '../infra/errors.js';

export async function refuseWhenEnded(ctx: LoopContext): Promise<void> {
  const text = await ctx.files.readIfExists(ctx.paths.terminalSignal);
  if (text === undefined) return;
  let reason = 'a terminal signal';
  try {
    const value = JSON.parse(text) as { reason?: unknown };
    if (typeof value.reason === 'string') reason = value.reason;
  } catch {
    // An unreadable signal still ends the loop; the message just cannot name its reason.
  }
  throw new AppError(`The loop of ${ctx.epicId} has ended (${reason}): no further iteration is stamped.`, {
    exitCode: ExitCode.failure,
    hint: `Stamp the retrospective instead: forge-pack stamp --epic ${ctx.epicId} --retrospective`,
  });
}

export async function refuseWhenAsking(ctx: LoopContext): Promise<void> {
  if ((await ctx.files.readIfExists(ctx.paths.needsHuman)) === undefined) return;
  throw new AppError(`The loop of ${ctx.epicId} is waiting for a human (${ctx.paths.needsHuman}).`, {
    exitCode: ExitCode.needsHuman,
    hint: `Answer the question in that file, then run: ralph-loop resume ${ctx.epicId}`,
  });
}

/**
 * The retrospective comes after the loop's end (a terminal signal: goal, cap, plateau, wall clock,
 * budget). Stamped before it, by a strategist, it ended the night early with the target unmet and no
 * reason recorded, and the real end then found it used (seen).
 */
export async function refuseBeforeTheEnd(ctx: LoopContext): Promise<void> {
  if ((await ctx.files.readIfExists(ctx.paths.terminalSignal)) !== undefined) return;
  throw new AppError(
    `The loop of ${ctx.epicId} has not ended (no terminal signal): its retrospective comes after the end.`,
    {
      exitCode: ExitCode.usage,
      hint: `Stamp the next iteration (forge-pack stamp --epic ${ctx.epicId} --iter <next>), or ask the user (--needs-human <file>); the arbiter ends the loop at its goal, caps or plateau.`,
    },
  );
}
