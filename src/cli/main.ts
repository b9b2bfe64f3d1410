// Entry points for the two executables: the only code that touches process.argv and process.exitCode.
import type { Command } from 'commander';
import { configureCommand } from './common.js';
import { exitQuietlyOnClosedPipe } from './closed-pipe.js';
import { createDeps, type CliDeps } from './deps.js';
import { reportError } from './output.js';

export async function runForgePack(argv: string[], overrides: Partial<CliDeps> = {}): Promise<void> {
  exitQuietlyOnClosedPipe();
  const { createForgePackProgram } = await import('./forge-pack.js');
  process.exitCode = await runProgram('forge-pack', createForgePackProgram, argv, overrides);
}

export async function runRalphLoop(argv: string[], overrides: Partial<CliDeps> = {}): Promise<void> {
  exitQuietlyOnClosedPipe();
  // `status` is polled while loops run (and by scripts): it gets a program holding only itself.
  if (argv.slice(2).find((arg) => !arg.startsWith('-')) === 'status') {
    const { createStatusOnlyProgram } = await import('./ralph-loop-status.js');
    process.exitCode = await runProgram('ralph-loop', createStatusOnlyProgram, argv, overrides);
    return;
  }
  const { createRalphLoopProgram } = await import('./ralph-loop.js');
  process.exitCode = await runProgram('ralph-loop', createRalphLoopProgram, argv, overrides);
}

/**
 * Runs a program to completion and returns its exit code; testable without touching process.
 * Commands signal a non-zero outcome by throwing an AppError carrying the exit code.
 */
export async function runProgram(
  name: string,
  create: (deps: CliDeps) => Command,
  argv: string[],
  overrides: Partial<CliDeps> = {},
): Promise<number> {
  const deps = createDeps(overrides);
  const program = create(deps);
  configureCommand(program, deps);
  const debug = argv.includes('--debug');
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return reportError(deps, name, error, debug);
  }
}
