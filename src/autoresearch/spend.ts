// What a loop's agents have spent so far (cost and tokens, by role), kept in one small file.
//
// The ledger records each iteration's cost, but a strategist and the retrospective run after the
// last ledger line; this file counts everything, so `status` and the budget cap see the true total.
// It is read on the `status` path, so it stays free of heavy imports.
import { join } from 'node:path';
import type { LoopFiles } from '../infra/loop-files.js';

export const SPEND_FILE = 'spend.json';

export interface Spend {
  cost_usd: number;
  input_tokens: number;
  output_tokens: number;
  /** Agent runs counted. */
  runs: number;
  /** Runs by the built-in scripted agent (no model involved). */
  scripted_runs: number;
  by_role: Record<string, { cost_usd: number; input_tokens: number; output_tokens: number; runs: number }>;
}

export interface SpendItem {
  costUsd?: number | undefined;
  inputTokens?: number | undefined;
  outputTokens?: number | undefined;
  scripted?: boolean | undefined;
}

export function emptySpend(): Spend {
  return { cost_usd: 0, input_tokens: 0, output_tokens: 0, runs: 0, scripted_runs: 0, by_role: {} };
}

/** Reads the spend file; a missing or unreadable file counts as nothing spent (it is a tally, not a record). */
export async function readSpend(files: LoopFiles, workspace: string): Promise<Spend> {
  const text = await files.readIfExists(join(workspace, SPEND_FILE));
  if (text === undefined) return emptySpend();
  try {
    const value = JSON.parse(text) as Partial<Spend>;
    const number = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
    return {
      cost_usd: number(value.cost_usd),
      input_tokens: number(value.input_tokens),
      output_tokens: number(value.output_tokens),
      runs: number(value.runs),
      scripted_runs: number(value.scripted_runs),
      by_role: typeof value.by_role === 'object' && value.by_role !== null ? value.by_role : {},
    };
  } catch {
    return emptySpend();
  }
}

/** Adds one agent run to the tally. Runs of one loop are sequential (one runner per epic). */
export async function recordSpend(
  files: LoopFiles,
  workspace: string,
  role: string,
  item: SpendItem,
): Promise<Spend> {
  const spend = await readSpend(files, workspace);
  const add = (target: { cost_usd: number; input_tokens: number; output_tokens: number; runs: number }) => {
    target.cost_usd += item.costUsd ?? 0;
    target.input_tokens += item.inputTokens ?? 0;
    target.output_tokens += item.outputTokens ?? 0;
    target.runs += 1;
  };
  add(spend);
  if (item.scripted === true) spend.scripted_runs += 1;
  const byRole = spend.by_role[role] ?? { cost_usd: 0, input_tokens: 0, output_tokens: 0, runs: 0 };
  add(byRole);
  spend.by_role[role] = byRole;
  await files.writeJson(join(workspace, SPEND_FILE), spend);
  return spend;
}
