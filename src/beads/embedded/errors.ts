// The embedded store's errors, with br's own machine-readable codes so callers handle both stores alike.
import { BeadStoreError } from '../../infra/errors.js';

/** br's error codes (beads_rust `ErrorCode::as_str`) that the embedded store raises. */
export const EmbeddedErrorCode = {
  issueNotFound: 'ISSUE_NOT_FOUND',
  validation: 'VALIDATION_FAILED',
  cycle: 'CYCLE_DETECTED',
  selfDependency: 'SELF_DEPENDENCY',
  corrupt: 'JSONL_PARSE_ERROR',
  locked: 'DATABASE_LOCKED',
  notInitialized: 'NOT_INITIALIZED',
  config: 'CONFIG_ERROR',
} as const;

export function issueNotFound(id: string): BeadStoreError {
  return new BeadStoreError(`Issue not found: ${id}`, {
    code: EmbeddedErrorCode.issueNotFound,
    hint: 'Check the id; listing the beads shows which ones exist.',
  });
}

export function validationFailed(message: string, hint?: string): BeadStoreError {
  return new BeadStoreError(`Validation failed: ${message}`, {
    code: EmbeddedErrorCode.validation,
    hint,
  });
}

export function selfDependency(id: string): BeadStoreError {
  return new BeadStoreError(`Issue cannot depend on itself: ${id}`, {
    code: EmbeddedErrorCode.selfDependency,
    hint: 'A dependency needs two different beads.',
  });
}

export function cycleDetected(path: readonly string[]): BeadStoreError {
  return new BeadStoreError(`Cycle detected in dependencies: ${path.join(' -> ')}`, {
    code: EmbeddedErrorCode.cycle,
    hint: 'Remove one dependency to break the cycle, or add the dependency the other way round.',
  });
}

export function corruptLine(path: string, line: number, reason: string): BeadStoreError {
  const conflict = /^(<{7}|={7}|>{7})/.test(reason);
  return new BeadStoreError(`${path}:${line}: not a valid issue line: ${reason}`, {
    code: EmbeddedErrorCode.corrupt,
    hint: conflict
      ? `Resolve the git merge conflict in ${path} (keep one complete JSON object per line); nothing was changed.`
      : `Repair or delete line ${line} of ${path} (each line must be one complete JSON issue object), or restore the file from git; nothing was changed.`,
  });
}

export function storeLocked(lockPath: string, holder: string): BeadStoreError {
  return new BeadStoreError(`The bead store is locked by ${holder} (${lockPath})`, {
    code: EmbeddedErrorCode.locked,
    retryable: true,
    hint: `Retry in a moment; if no Forge process is running, delete ${lockPath}.`,
  });
}

/** A lock judged abandoned that still could not be taken before the deadline: waiting longer will not help. */
export function storeLockStuck(lockPath: string, why: string, guardPath: string): BeadStoreError {
  return new BeadStoreError(`The bead store lock ${lockPath} could not be taken (${why})`, {
    code: EmbeddedErrorCode.locked,
    hint: `If no Forge process is running, delete ${lockPath} and ${guardPath}, then retry.`,
  });
}

export function notInitialized(beadsDir: string): BeadStoreError {
  return new BeadStoreError(`No bead store in ${beadsDir}`, {
    code: EmbeddedErrorCode.notInitialized,
    hint: 'Create it with `forge-pack beads init` in the project root.',
  });
}

export function configError(message: string, hint: string): BeadStoreError {
  return new BeadStoreError(message, { code: EmbeddedErrorCode.config, hint });
}
