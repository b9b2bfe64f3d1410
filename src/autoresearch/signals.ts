// The arbiter's signal files: `arbiter-signal.json` (every decision) and `terminal-signal.json` (the loop ends).
import { join } from 'node:path';
import { z } from 'zod';
import type { LoopFiles } from '../infra/loop-files.js';
import { AppError } from '../infra/errors.js';
import { describeZodError } from '../infra/zod-issues.js';
import { DECISIONS, TERMINAL_REASONS } from './ledger.js';

export const ARBITER_SIGNAL_FILE = 'arbiter-signal.json';
export const TERMINAL_SIGNAL_FILE = 'terminal-signal.json';

const iter = z.number().int().min(0);
const score = z.number().nullable();

export const continueSignalSchema = z.object({
  type: z.literal('continue'),
  iter,
  next_iter: iter,
  /** Score measured this iteration (null when it crashed). */
  current_score: score,
  /** Score of the tree left in the repository: the best kept so far. */
  best_score: score,
  decision: z.enum(DECISIONS),
  delta: score,
});
export type ContinueSignal = z.output<typeof continueSignalSchema>;

export const terminalSignalSchema = z.object({
  type: z.literal('terminal'),
  reason: z.enum(TERMINAL_REASONS),
  iter,
  /** Score measured in the final iteration (null when it crashed or no iteration ran). */
  final_score: score,
  /** Score of the tree left in the repository: the best kept. */
  best_score: score,
  decision: z.enum(DECISIONS).nullable(),
});
export type TerminalSignal = z.output<typeof terminalSignalSchema>;

export const arbiterSignalSchema = z.discriminatedUnion('type', [continueSignalSchema, terminalSignalSchema]);
export type ArbiterSignal = ContinueSignal | TerminalSignal;

/**
 * Writes the arbiter's signal: `arbiter-signal.json` always holds the latest decision (continue or
 * terminal, so a strategist reading one file sees either), and a terminal one is also written to
 * `terminal-signal.json`, which the runner checks before picking the next bead.
 */
export async function writeArbiterSignal(
  files: LoopFiles,
  workspaceDir: string,
  signal: ArbiterSignal,
): Promise<void> {
  const checked = arbiterSignalSchema.parse(signal);
  if (checked.type === 'terminal') await files.writeJson(join(workspaceDir, TERMINAL_SIGNAL_FILE), checked);
  await files.writeJson(join(workspaceDir, ARBITER_SIGNAL_FILE), checked);
}

/** For the runner, which ends a loop itself on a wall clock it measured during a bead. */
export async function writeTerminalSignal(
  files: LoopFiles,
  workspaceDir: string,
  signal: TerminalSignal,
): Promise<void> {
  await files.writeJson(join(workspaceDir, TERMINAL_SIGNAL_FILE), terminalSignalSchema.parse(signal));
}

export async function readArbiterSignal(
  files: LoopFiles,
  workspaceDir: string,
): Promise<ArbiterSignal | undefined> {
  return readSignal(files, join(workspaceDir, ARBITER_SIGNAL_FILE), arbiterSignalSchema);
}

export async function readTerminalSignal(
  files: LoopFiles,
  workspaceDir: string,
): Promise<TerminalSignal | undefined> {
  return readSignal(files, join(workspaceDir, TERMINAL_SIGNAL_FILE), terminalSignalSchema);
}

/** Missing → undefined. Unreadable → an error naming the file: a signal is never guessed. */
async function readSignal<T>(files: LoopFiles, path: string, schema: z.ZodType<T>): Promise<T | undefined> {
  const content = await files.readIfExists(path);
  if (content === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    throw new SignalFileError(`${path}: not valid JSON`);
  }
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new SignalFileError(describeZodError(path, result.error));
}

export class SignalFileError extends AppError {
  constructor(message: string) {
    super(message, {
      hint: 'Delete the file and re-run the arbiter bead: it re-emits its signal from the ledger.',
    });
    this.name = 'SignalFileError';
  }
}
