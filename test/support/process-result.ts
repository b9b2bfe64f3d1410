// A finished process's result for tests of what reads one (scorers, guards, the metric's measure):
// exit 0, empty streams, 5 ms, with `overrides` on top.
import type { ProcessResult } from '../../src/infra/process.js';

export function processResult(overrides: Partial<ProcessResult> = {}): ProcessResult {
  return {
    exitCode: 0,
    signal: undefined,
    stdout: '',
    stderr: '',
    timedOut: false,
    aborted: false,
    spawnError: undefined,
    durationMs: 5,
    ...overrides,
  };
}
