// Turning a failed br call into a BeadStoreError a user can act on, with br's own code, message and hint.
import { BeadStoreError } from '../../infra/errors.js';
import type { BrErrorReport } from './output.js';
import { excerpt } from './output.js';

export interface BrErrorDetails {
  code: string;
  /** br's own message (or ours when br gave none). */
  brMessage: string;
  hint?: string | undefined;
  retryable?: boolean;
  /** The full argv, br first. Nothing secret goes on br's command line. */
  argv: readonly string[];
  brExitCode?: number | undefined;
  context?: unknown;
  cause?: unknown;
}

/** A BeadStoreError that also says which br command failed and how. */
export class BrError extends BeadStoreError {
  readonly argv: readonly string[];
  readonly brExitCode: number | undefined;
  readonly brMessage: string;
  readonly context: unknown;

  constructor(message: string, details: BrErrorDetails) {
    super(message, {
      code: details.code,
      retryable: details.retryable ?? false,
      hint: details.hint,
      cause: details.cause,
    });
    this.name = 'BrError';
    this.argv = details.argv;
    this.brExitCode = details.brExitCode;
    this.brMessage = details.brMessage;
    this.context = details.context;
  }
}

const HINTS: Record<string, string> = {
  NOT_INITIALIZED: 'Run `br init` (or `forge-pack beads init`) in the project first.',
  DATABASE_LOCKED: 'Another br process is holding the database; wait for it to finish and try again.',
  ISSUE_NOT_FOUND: 'Check the id with `br list -a`.',
};

/** Which call failed: its argv (br first) and the words that name it, e.g. `br update`. */
export interface BrCallInfo {
  argv: readonly string[];
  command: string;
}

export function fromReport(report: BrErrorReport, call: BrCallInfo, exitCode: number | undefined): BrError {
  return new BrError(`${call.command} failed: ${report.message}`, {
    code: report.code,
    brMessage: report.message,
    hint: report.hint ?? HINTS[report.code],
    retryable: report.retryable,
    argv: call.argv,
    brExitCode: exitCode,
    context: report.context,
  });
}

export function notFoundError({ argv }: BrCallInfo, detail: string): BrError {
  return new BrError(`br could not be started: ${argv[0] ?? 'br'} was not found on the PATH (${detail}).`, {
    code: 'BR_NOT_FOUND',
    brMessage: detail,
    hint: 'Install beads_rust (br) and put it on the PATH, or use `--store embedded`.',
    argv,
  });
}

export function spawnFailedError({ argv }: BrCallInfo, detail: string): BrError {
  return new BrError(`br could not be started: ${detail}.`, {
    code: 'BR_SPAWN_FAILED',
    brMessage: detail,
    hint: 'Check that the br on the PATH is an executable file, or use `--store embedded`.',
    argv,
  });
}

export function usageError({ argv, command }: BrCallInfo, stderr: string): BrError {
  const firstLine = stderr.split('\n').find((line) => line.trim() !== '') ?? '(no message)';
  return new BrError(`${command} was rejected by br as a usage error: ${excerpt(firstLine)}`, {
    code: 'BR_USAGE',
    brMessage: stderr.trim(),
    hint: 'This br may be older or newer than Forge expects; check `br version` and upgrade br if it is old.',
    argv,
    brExitCode: 2,
  });
}

export function badOutputError({ argv, command }: BrCallInfo, what: string, output: string): BrError {
  return new BrError(`${command} printed ${what} Forge cannot read: "${excerpt(output)}"`, {
    code: 'BR_BAD_OUTPUT',
    brMessage: output,
    hint: 'Check that `br` on the PATH is beads_rust, and that BR_OUTPUT_FORMAT is not forcing another format.',
    argv,
  });
}

export function failedError(
  { argv, command }: BrCallInfo,
  exitCode: number | undefined,
  signal: string | undefined,
  output: { stdout: string; stderr: string },
): BrError {
  const how =
    exitCode === undefined ? `was killed by ${signal ?? 'a signal'}` : `exited with code ${exitCode}`;
  const text = output.stderr.trim() !== '' ? output.stderr : output.stdout;
  return new BrError(`${command} ${how}: ${excerpt(text)}`, {
    code: 'BR_FAILED',
    brMessage: text.trim(),
    argv,
    brExitCode: exitCode,
  });
}

export function timeoutError({ argv, command }: BrCallInfo, timeoutMs: number): BrError {
  return new BrError(`${command} did not finish within ${Math.round(timeoutMs / 1000)} s and was stopped.`, {
    code: 'BR_TIMEOUT',
    brMessage: 'timed out',
    hint: 'br may be waiting on a lock held by a stuck process; check for other br processes.',
    retryable: true,
    argv,
  });
}

/** Its output could not be caught whole (runShortProcess's outputError): nothing of it is used. */
export function outputError({ argv, command }: BrCallInfo, detail: string): BrError {
  return new BrError(`${command} failed: ${detail}.`, {
    code: 'BR_OUTPUT',
    brMessage: detail,
    hint: 'Run the same br command by hand to see what it prints.',
    argv,
  });
}

/** Database contention: worth waiting out and retrying. */
export function isLockContention(report: BrErrorReport): boolean {
  if (report.code === 'DATABASE_LOCKED') return true;
  return report.code === 'DATABASE_ERROR' && /locked|busy/i.test(report.message);
}
