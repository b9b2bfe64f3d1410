// `forge-pack`: set a repo up, stamp loops, and touch beads when br is absent.
import { Command } from 'commander';
import { addCompletionCommand } from './completion.js';
import {
  BEADS_COMMAND,
  DOCTOR_COMMAND,
  INIT_COMMAND,
  LOOP_COMMAND,
  PIPELINE_COMMAND,
  SKILLS_COMMAND,
  SPEC_COMMAND,
  STAMP_COMMAND,
  VALIDATE_COMMAND,
  WORKER_COMMAND,
} from './command-specs.js';
import { configureProgram } from './common.js';
import type { CliDeps } from './deps.js';
import { addHelpCommand, addLazyCommand } from './lazy-command.js';

export function createForgePackProgram(deps: CliDeps): Command {
  const program = configureProgram(new Command('forge-pack'), deps, 'forge').description(
    'Set a repo up for Forge, stamp autoresearch loops, and work with beads.',
  );

  // Each command's module loads only when it runs (see lazy-command.ts); --help lists them all.
  for (const spec of [
    INIT_COMMAND,
    DOCTOR_COMMAND,
    LOOP_COMMAND,
    PIPELINE_COMMAND,
    STAMP_COMMAND,
    VALIDATE_COMMAND,
    BEADS_COMMAND,
    SKILLS_COMMAND,
    SPEC_COMMAND,
    WORKER_COMMAND,
  ]) {
    addLazyCommand(program, spec, deps);
  }

  program.addHelpText(
    'after',
    `
Getting started:
  forge-pack init                                               # .forge/config.json and the bead store
  forge-pack doctor                                             # what is installed, what is missing
  forge-pack loop "faster parser" --program-file program.md --scope src/ \\
    --metric-command "node bench.js --json" --score json:ops --target 5000   # prints the epic id
  ralph-loop <epic>                                             # then run it (see ralph-loop --help)

Examples:
  forge-pack beads create "Ship the parser" -t epic -p 1        # prints the new id
  forge-pack beads create "Write tests" --parent bd-a1b -l role:doer
  forge-pack beads dep add bd-a1b.2 bd-a1b.1                    # .2 waits for .1
  forge-pack beads ready --parent bd-a1b --json                 # what ralph-loop would take next
  forge-pack validate bd-a1b                                    # check the epic's graph before a night's run
  forge-pack spec status rate-limiter                           # where a spec stands; what its gate needs

Store: br when it is on PATH, else the embedded store in .beads/issues.jsonl
(--store or "store" in .forge/config.json to choose).
Exit codes: 0 ok, 1 failed, 2 usage, 3 environment (br, git, agent missing), 4 config.`,
  );
  // Last, so the script it prints knows every command above.
  addCompletionCommand(program, (text) => deps.stdout.write(text));
  addHelpCommand(program);
  return program;
}
