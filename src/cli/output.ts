// Rendering helpers: JSON to stdout, messages and errors to stderr, colour only where it belongs.
import pc from 'picocolors';
import { CommanderError } from 'commander';
import {
  AppError,
  diskFullFault,
  ExitCode,
  pathShapeFault,
  readOnlyFault,
  type ExitCodeValue,
} from '../infra/errors.js';
import { terminalText } from '../infra/terminal-text.js';
import type { CliDeps } from './deps.js';

export function printJson(deps: Pick<CliDeps, 'stdout'>, value: unknown): void {
  deps.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}

export function say(deps: Pick<CliDeps, 'stderr'>, message: string): void {
  deps.stderr.write(`${message}\n`);
}

export function useColor(deps: Pick<CliDeps, 'env' | 'stderrIsTTY'>): boolean {
  return deps.stderrIsTTY && deps.env.NO_COLOR === undefined && deps.env.TERM !== 'dumb';
}

/** Turns any thrown value into one message on stderr and the exit code to use. */
export function reportError(
  deps: Pick<CliDeps, 'stderr' | 'env' | 'stderrIsTTY'>,
  program: string,
  error: unknown,
  debug: boolean,
): ExitCodeValue {
  const colors = pc.createColors(useColor(deps));
  if (error instanceof CommanderError) {
    // Commander has already printed its own message (through the stderr sink).
    if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return ExitCode.ok;
    if (error.code === 'commander.help') return ExitCode.ok;
    return ExitCode.usage;
  }
  const full = diskFullFault(error);
  if (full !== undefined) {
    say(deps, `${colors.red(`${program}:`)} ${full}; free some space, then run again.`);
    say(
      deps,
      `${colors.dim('hint:')} Forge writes its files whole or not at all: the bead store and a loop's ledger are as they were before the failed write.`,
    );
    if (debug && error instanceof Error && error.stack !== undefined) say(deps, error.stack);
    return ExitCode.environment;
  }
  const readOnly = error instanceof AppError ? undefined : readOnlyFault(error);
  if (readOnly !== undefined) {
    say(deps, `${colors.red(`${program}:`)} ${readOnly}.`);
    say(
      deps,
      `${colors.dim('hint:')} Make it writable again (chmod, chattr -i, a read-write mount), then run again: the bead is left open, and Forge's files are as they were before the failed write.`,
    );
    if (debug && error instanceof Error && error.stack !== undefined) say(deps, error.stack);
    return ExitCode.environment;
  }
  const shape = error instanceof AppError ? undefined : pathShapeFault(error);
  if (shape !== undefined) {
    say(deps, `${colors.red(`${program}:`)} ${terminalText(shape)}.`);
    say(
      deps,
      `${colors.dim('hint:')} Forge makes that path itself: move what is in the way aside (look at it first: it is not Forge's), then run again.`,
    );
    if (debug && error instanceof Error && error.stack !== undefined) say(deps, terminalText(error.stack));
    return ExitCode.environment;
  }
  if (error instanceof AppError) {
    // A message can carry a bead's title or an agent's words: shown, never obeyed (terminal-text.ts).
    say(deps, `${colors.red(`${program}:`)} ${terminalText(error.message)}`);
    if (error.hint !== undefined) say(deps, `${colors.dim('hint:')} ${terminalText(error.hint)}`);
    if (debug && error.stack !== undefined) say(deps, terminalText(error.stack));
    return error.exitCode;
  }
  const message = terminalText(error instanceof Error ? error.message : String(error));
  say(deps, `${colors.red(`${program}:`)} unexpected error: ${message}`);
  if (debug && error instanceof Error && error.stack !== undefined) say(deps, terminalText(error.stack));
  else
    say(
      deps,
      `${colors.dim('hint:')} run again with --debug to see the stack, and report it if it persists.`,
    );
  return ExitCode.failure;
}
