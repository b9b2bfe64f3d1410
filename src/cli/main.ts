// Entry points for the two executables: the only code that touches process.argv and process.exitCode.
import { createDeps, type CliDeps } from './deps.js';
import { createForgePackProgram } from './forge-pack.js';
import { configureTree } from './common.js';
import { reportError } from './output.js';
import { createRalphLoopProgram } from './ralph-loop.js';
import type { Command } from 'commander';

export async function runForgePack(argv: string[], overrides: Partial<CliDeps> = {}): Promise<void> {
  process.exitCode = await runProgram('forge-pack', createForgePackProgram, argv, overrides);
}

export async function runRalphLoop(argv: string[], overrides: Partial<CliDeps> = {}): Promise<void> {
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
  configureTree(program, deps);
  const debug = argv.includes('--debug');
  try {
    await program.parseAsync(argv);
    return 0;
  } catch (error) {
    return reportError(deps, name, error, debug);
  }
}
