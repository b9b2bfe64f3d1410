#!/usr/bin/env node
// A fake `br` (beads_rust) for tests: real state in BEADS_DIR, the JSON shapes of the version in
// FAKE_BR_VERSION (default 0.2.19), faults from FAKE_BR_SCENARIO, and every call logged to FAKE_BR_LOG.
import { appendFileSync, closeSync, openSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgv, UsageError, WRITE_COMMANDS } from './cli.mjs';
import { BrFailure, COMMAND_HANDLERS } from './commands.mjs';
import { generationOf } from './generation.mjs';
import { pickFault } from './scenario.mjs';
import { acquireLock, isInitialised, loadState, releaseLock, saveState, sleepSync } from './state.mjs';

const EXIT_CODES = {
  DATABASE_LOCKED: 2,
  DATABASE_ERROR: 2,
  NOT_INITIALIZED: 2,
  ALREADY_INITIALIZED: 2,
  ISSUE_NOT_FOUND: 3,
  NOTHING_TO_DO: 3,
  VALIDATION_FAILED: 4,
  INVALID_STATUS: 4,
  INVALID_TYPE: 4,
  INVALID_PRIORITY: 4,
  CYCLE_DETECTED: 5,
  SELF_DEPENDENCY: 5,
  DEPENDENCY_NOT_FOUND: 5,
};
const RETRYABLE = new Set([
  'DATABASE_LOCKED',
  'VALIDATION_FAILED',
  'INVALID_STATUS',
  'INVALID_TYPE',
  'INVALID_PRIORITY',
]);

const argv = process.argv.slice(2);
const version = process.env.FAKE_BR_VERSION ?? '0.2.19';
const gen = generationOf(version);
const beadsDir = resolve(process.env.BEADS_DIR || join(process.cwd(), '.beads'));
const out = { stdout: '', stderr: '' };
let exitCode = 0;

let parsed;
let usageFailure;
try {
  parsed = parseArgv(argv, version);
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  usageFailure = error;
}
const json = parsed?.options.json === true;
const command = parsed?.command;

/** A second writer in the same workspace while this one runs: the adapter's queue should prevent it. */
const marker = join(beadsDir, '.fake-br-writing');
let ownsMarker = false;
let overlap = false;
if (command !== undefined && WRITE_COMMANDS.has(command) && command !== 'init') {
  try {
    closeSync(openSync(marker, 'wx'));
    ownsMarker = true;
  } catch (error) {
    overlap = error.code === 'EEXIST';
  }
}
const cleanUp = () => {
  if (ownsMarker) rmSync(marker, { force: true });
};
process.on('exit', cleanUp);
process.on('SIGTERM', () => process.exit(143));

if (process.env.FAKE_BR_LOG) {
  const env = {};
  for (const key of ['BEADS_DIR', 'RUST_LOG', 'NO_COLOR', 'BR_OUTPUT_FORMAT', 'TOON_DEFAULT_FORMAT']) {
    if (process.env[key] !== undefined) env[key] = process.env[key];
  }
  appendFileSync(
    process.env.FAKE_BR_LOG,
    `${JSON.stringify({ argv, cwd: process.cwd(), env, command, overlap, pid: process.pid })}\n`,
  );
}

function emitError(code, message, hint = null, context = null, overrides = {}) {
  const document = overrides.bd
    ? { error: message, hint }
    : { error: { code, message, hint, retryable: RETRYABLE.has(code), context } };
  const text = `${JSON.stringify(document, null, 2)}\n`;
  const stream = overrides.stream ?? (gen.errorsOnStdout && json ? 'stdout' : 'stderr');
  out[stream] += text;
  exitCode = overrides.exitCode ?? EXIT_CODES[code] ?? 1;
}

/** Returns false when the call must not go on (a fault that ends it, or one that hangs). */
function applyFault(fault) {
  switch (fault.action) {
    case 'hang':
      setInterval(() => undefined, 1 << 30);
      return 'hang';
    case 'flood': {
      // Output without end (a br gone wrong), in batches, so that a SIGTERM is still taken between them.
      const chunk = Buffer.from('x'.repeat(64 * 1024));
      const flood = () => {
        for (let i = 0; i < 64; i += 1) writeSync(1, chunk);
        setTimeout(flood, 0);
      };
      flood();
      return 'hang';
    }
    case 'delay':
      sleepSync(fault.ms ?? 100);
      return true;
    case 'logs':
      out.stdout += fault.stdout ?? '';
      out.stderr += fault.stderr ?? '';
      return true;
    case 'locked':
      emitError(
        'DATABASE_LOCKED',
        `Database is locked: ${join(beadsDir, 'beads.db')}`,
        'Another br process is writing; retry.',
      );
      return false;
    case 'busy':
      emitError('DATABASE_ERROR', 'Database error: database is busy', null);
      return false;
    case 'error':
      emitError(
        fault.code ?? 'INTERNAL_ERROR',
        fault.message ?? 'injected failure',
        fault.hint ?? null,
        null,
        fault,
      );
      return false;
    case 'garbage':
      out.stdout += fault.stdout ?? '<html><body>502 Bad Gateway</body></html>\n';
      exitCode = fault.exitCode ?? 0;
      return false;
    case 'usage':
      out.stderr +=
        fault.stderr ?? `error: unexpected argument '--injected' found\n\nUsage: br ${command} [OPTIONS]\n`;
      exitCode = 2;
      return false;
    case 'raw':
      out.stdout += fault.stdout ?? '';
      out.stderr += fault.stderr ?? '';
      exitCode = fault.exitCode ?? 0;
      return false;
    default:
      throw new Error(`fake br: unknown fault action ${fault.action}`);
  }
}

function run() {
  if (gen.infoLogs)
    out.stderr += `${new Date().toISOString()}  INFO beads_rust::storage::sqlite: opening database path="${join(beadsDir, 'beads.db')}"\n`;
  if (usageFailure !== undefined) {
    out.stderr += usageFailure.message;
    exitCode = 2;
    return true;
  }
  const fault = pickFault(process.env.FAKE_BR_SCENARIO, command, argv);
  if (fault !== undefined) {
    const goOn = applyFault(fault);
    if (goOn !== true) return goOn !== 'hang';
  }
  const actor = parsed.options.actor ?? process.env.USER ?? 'unknown';
  const ctx = { gen, options: parsed.options, positionals: parsed.positionals, actor, beadsDir, out };
  try {
    if (command === 'version' || command === 'init') {
      print(COMMAND_HANDLERS[command](ctx));
      return true;
    }
    if (!isInitialised(beadsDir))
      throw new BrFailure('NOT_INITIALIZED', "Beads not initialized: run 'br init' first", 'Run: br init');
    const timeout = Math.min(Number(parsed.options['lock-timeout'] ?? 5000), 5000);
    if (!acquireLock(beadsDir, timeout)) {
      throw new BrFailure('DATABASE_LOCKED', `Database is locked: ${join(beadsDir, 'beads.db')}`, null);
    }
    try {
      ctx.state = loadState(beadsDir);
      const result = COMMAND_HANDLERS[command](ctx);
      if (WRITE_COMMANDS.has(command)) saveState(beadsDir, ctx.state);
      print(result);
    } finally {
      releaseLock(beadsDir);
    }
  } catch (error) {
    if (!(error instanceof BrFailure)) throw error;
    emitError(error.code, error.message, error.hint, error.context);
  }
  return true;
}

function print(result) {
  if (result === undefined) return;
  if (json) out.stdout += `${JSON.stringify(result, null, 2)}\n`;
  else out.stdout += command === 'version' ? `br ${version}\n` : `${JSON.stringify(result)}\n`;
}

if (run()) {
  process.stderr.write(out.stderr);
  process.stdout.write(out.stdout);
  process.exitCode = exitCode;
}
