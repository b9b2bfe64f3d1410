// Runs br: argv and environment per br's calling convention, one writer per workspace, retries on lock
// contention, and every outcome (result documents, error envelope, usage error, garbage) classified.
import { resolve } from 'node:path';
import type { Clock } from '../../infra/clock.js';
import { runShortProcess } from '../../infra/short-process.js';
import { fifoError } from '../../infra/fifo-wait.js';
import type { BrCallInfo, BrError } from './errors.js';
import {
  badOutputError,
  failedError,
  fromReport,
  isLockContention,
  notFoundError,
  outputError,
  spawnFailedError,
  timeoutError,
  usageError,
} from './errors.js';
import type { BrErrorReport } from './output.js';
import { classifyOutput } from './output.js';
import type { BrFeatures } from './version.js';
import { featuresOf, parseBrVersion } from './version.js';
import { runSerialised } from '../../infra/serial-queue.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface BrClientOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  actor: string;
  brPath: string;
  clock: Clock;
  /** Per call; br itself waits up to `lockTimeoutMs` for the database first. */
  timeoutMs: number;
  lockTimeoutMs: number;
  retry: RetryPolicy;
  /**
   * br's version when the caller asks it (a `br version` of its own): no probe then. Given as a promise,
   * calls whose argv is the same in every version start without waiting for it; an undefined answer
   * leaves the client to probe.
   */
  version?: string | Promise<string | undefined>;
}

export interface BrCall {
  /** The words naming the command, e.g. `['dep', 'add']`. */
  command: readonly string[];
  /** Arguments after the command words. */
  args?: readonly string[];
  /** Goes through the workspace's write queue. */
  write?: boolean;
  /** Passes `--json` and expects a JSON document on success (default true). */
  json?: boolean;
}

export type BrOutcome =
  | { ok: true; results: unknown[]; stderr: string; exitCode: number }
  | {
      ok: false;
      error: BrError;
      /** br's error envelope, when it printed one. */
      report: BrErrorReport | undefined;
      results: unknown[];
      stderr: string;
      exitCode: number | undefined;
    };

export interface BrClient {
  readonly beadsDir: string;
  /** The argv and name of a call, for error messages. */
  describe(call: BrCall): BrCallInfo;
  /** Runs a call (with retries on lock contention); a failure br reports comes back as `ok: false`. */
  run(call: BrCall): Promise<BrOutcome>;
  /** Runs a call and returns its result documents; throws the BrError on failure. */
  expect(call: BrCall): Promise<unknown[]>;
  /** `br version --json`, probed once per client unless the version was given. */
  features(): Promise<BrFeatures>;
  /** Whether any write call has been started through this client (it may have changed the database). */
  wrote(): boolean;
}

/** The environment br runs in: the caller's env, pinned to this workspace, quiet and uncoloured. */
export function brEnvironment(env: NodeJS.ProcessEnv, beadsDir: string): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env, BEADS_DIR: beadsDir, RUST_LOG: 'error', NO_COLOR: '1' };
  delete result.BR_OUTPUT_FORMAT;
  delete result.TOON_DEFAULT_FORMAT;
  return result;
}

export function createBrClient(options: BrClientOptions): BrClient {
  const cwd = resolve(options.cwd);
  const beadsDir = resolve(cwd, '.beads');
  const env = brEnvironment(options.env, beadsDir);
  let featuresPromise: Promise<BrFeatures> | undefined = featuresFrom(options.version, () =>
    probeFeatures(client),
  );

  function argvOf(call: BrCall): string[] {
    const globals = [`--actor=${options.actor}`, '--lock-timeout', String(options.lockTimeoutMs)];
    if (call.json !== false) globals.unshift('--json');
    return [options.brPath, ...globals, ...call.command, ...(call.args ?? [])];
  }

  async function once(call: BrCall, info: BrCallInfo): Promise<BrOutcome> {
    const [file, ...args] = info.argv as [string, ...string[]];
    const result = await runShortProcess({ file, args }, { cwd, env, timeoutMs: options.timeoutMs });
    if (result.spawnError !== undefined) {
      throw /ENOENT/.test(result.spawnError)
        ? notFoundError(info, result.spawnError)
        : spawnFailedError(info, result.spawnError);
    }
    if (result.fifoWait !== undefined) throw fifoError(info.command, cwd, result.fifoWait);
    if (result.outputError !== undefined) throw outputError(info, result.outputError);
    const { stdout, stderr } = result;
    const failure = (error: BrError, report?: BrErrorReport, results: unknown[] = []): BrOutcome => ({
      ok: false,
      error,
      report,
      results,
      stderr,
      exitCode: result.exitCode,
    });
    if (result.timedOut) return failure(timeoutError(info, options.timeoutMs));
    const { results, error } = classifyOutput(stdout, stderr);
    if (error !== undefined) return failure(fromReport(error, info, result.exitCode), error, results);
    if (result.exitCode === 0) {
      if (call.json !== false && results.length === 0) {
        return failure(badOutputError(info, stdout.trim() === '' ? 'no JSON' : 'output', stdout || stderr));
      }
      return { ok: true, results, stderr, exitCode: 0 };
    }
    if (result.exitCode === 2 && results.length === 0 && isClapUsageError(stderr)) {
      return failure(usageError(info, stderr));
    }
    return failure(failedError(info, result.exitCode, result.signal, { stdout, stderr }), undefined, results);
  }

  function describe(call: BrCall): BrCallInfo {
    return { argv: argvOf(call), command: ['br', ...call.command].join(' ') };
  }

  async function withRetries(call: BrCall): Promise<BrOutcome> {
    const info = describe(call);
    const { attempts, baseDelayMs, maxDelayMs } = options.retry;
    for (let attempt = 1; ; attempt += 1) {
      const outcome = await once(call, info);
      if (outcome.ok || outcome.report === undefined || !isLockContention(outcome.report)) return outcome;
      if (attempt >= attempts) {
        outcome.error.message = `${outcome.error.message} (gave up after ${attempts} attempts)`;
        return outcome;
      }
      await options.clock.sleep(Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)));
    }
  }

  let wrote = false;
  const client: BrClient = {
    beadsDir,
    describe,
    wrote: () => wrote,
    run(call) {
      if (call.write !== true) return withRetries(call);
      // Set before the call: a write that fails or times out may still have changed the database.
      wrote = true;
      return runSerialised(beadsDir, () => withRetries(call));
    },
    async expect(call) {
      const outcome = await client.run(call);
      if (!outcome.ok) throw outcome.error;
      return outcome.results;
    },
    features() {
      featuresPromise ??= probeFeatures(client).catch((error: unknown) => {
        featuresPromise = undefined;
        throw error;
      });
      return featuresPromise;
    },
  };
  return client;
}

/** The features of a version the caller knows or is asking; undefined (or no answer) means probe. */
function featuresFrom(
  version: string | Promise<string | undefined> | undefined,
  probe: () => Promise<BrFeatures>,
): Promise<BrFeatures> | undefined {
  if (version === undefined) return undefined;
  if (typeof version === 'string') {
    const parsed = parseBrVersion(version);
    return parsed === undefined ? undefined : Promise.resolve(featuresOf(parsed));
  }
  return version.then(
    (answer) => {
      const parsed = parseBrVersion(answer);
      return parsed === undefined ? probe() : featuresOf(parsed);
    },
    () => probe(),
  );
}

async function probeFeatures(client: BrClient): Promise<BrFeatures> {
  const outcome = await client.run({ command: ['version'] });
  if (outcome.ok) return featuresOf(parseBrVersion(outcome.results[0]));
  // A br whose `version` prints text still names its version; one without `version --json` gets the
  // oldest protocol, which works everywhere. Anything else is a real failure.
  if (outcome.error.code === 'BR_BAD_OUTPUT') return featuresOf(parseBrVersion(outcome.error.brMessage));
  if (outcome.error.code === 'BR_USAGE') return featuresOf(undefined);
  throw outcome.error;
}

/** clap's usage errors: plain text on stderr, exit 2, `error: …` then usage or a pointer to `--help`. */
function isClapUsageError(stderr: string): boolean {
  return /^error: /m.test(stderr) && /^Usage: |For more information, try '--help'/m.test(stderr);
}
