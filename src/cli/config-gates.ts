// The gates `.forge/config.json` names, as the commands a run gives them to. Apart from forge-config.ts,
// whose schemas bring zod: a run imports this before its first br call, and zod loads while br answers.
import type { ForgeConfig } from './forge-config.js';

/** A gate's timeout when neither it nor `runner.gate_timeout_seconds` sets one. */
export const DEFAULT_GATE_TIMEOUT_SECONDS = 600;

/** Each configured gate, in config order, with its argv and the timeout it runs under. */
export function configuredGates(
  config: Pick<ForgeConfig, 'gates' | 'runner'>,
): { name: string; argv: string[]; timeoutMs: number }[] {
  const fallback = config.runner.gate_timeout_seconds ?? DEFAULT_GATE_TIMEOUT_SECONDS;
  return Object.entries(config.gates).map(([name, gate]) => {
    const argv = Array.isArray(gate) ? gate : gate.argv;
    const seconds = Array.isArray(gate) ? fallback : (gate.timeout_seconds ?? fallback);
    return { name, argv, timeoutMs: seconds * 1000 };
  });
}
