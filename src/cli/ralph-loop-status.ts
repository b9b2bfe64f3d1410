// `ralph-loop status` on its own: the same command and global options, without building the runner's program.
import { Command } from 'commander';
import { STATUS_COMMAND } from './command-specs.js';
import { configureProgram } from './common.js';
import type { CliDeps } from './deps.js';
import { addLazyCommand } from './lazy-command.js';

export function createStatusOnlyProgram(deps: CliDeps): Command {
  const program = configureProgram(new Command('ralph-loop'), deps, 'ralph-loop');
  addLazyCommand(program, STATUS_COMMAND, deps);
  return program;
}
