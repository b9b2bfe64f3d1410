// `ralph-loop status` on its own: the same command and global options, without building the runner's program.
import { Command } from 'commander';
import { configureProgram, storeOption } from './common.js';
import type { CliDeps } from './deps.js';
import { createStatusCommand } from './loop-commands.js';

export function createStatusOnlyProgram(deps: CliDeps): Command {
  const program = configureProgram(new Command('ralph-loop'), deps)
    .version(deps.version, '-V, --version', 'print the version')
    .addOption(storeOption())
    .option('--actor <name>', 'name recorded on bead changes (default: ralph-loop)');
  program.addCommand(createStatusCommand(deps));
  return program;
}
