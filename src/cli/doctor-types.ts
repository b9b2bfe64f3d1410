// What a `forge-pack doctor` check reports and what every check is given (shared by the machine and repo checks).
import type { StoreChoice } from '../beads/open-store.js';
import type { CliDeps } from './deps.js';

export type CheckStatus = 'ok' | 'info' | 'warn' | 'fail';

export interface DoctorCheck {
  name: string;
  status: CheckStatus;
  summary: string;
  /** One line saying what to do; present on every warn and fail. */
  fix?: string;
  /** What a failure means for the exit code: something missing on the machine, or a bad config. */
  kind?: 'environment' | 'config';
  details?: Record<string, unknown>;
}

export interface DoctorContext {
  deps: CliDeps;
  cwd: string;
  nodeVersion: string;
  /** `--store` from the command line, over the config's. */
  store?: StoreChoice | undefined;
  actor?: string | undefined;
  timeoutMs: number;
  isAlive(pid: number): boolean;
}
