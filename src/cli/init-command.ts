// `forge-pack init`: checks the repo, writes `.forge/config.json` and `.forge/.gitignore`, creates the bead store.
//
// This module loads when `init` runs (see command-specs.ts); the work and its dependencies (zod, execa)
// are imported inside the action, so `init --help` stays light too.
import type { Command } from 'commander';
import { globals } from './common.js';
import type { InitDeps, InitFlags } from './init-run.js';
import { printJson } from './output.js';

export function defineInitCommand(command: Command, deps: InitDeps): void {
  command
    .option(
      '-y, --yes',
      'use the detected defaults without asking (the default when stdin is not a terminal)',
    )
    .option('--force', 'replace an existing .forge/config.json (the old file is kept next to it as a .bak)')
    .option('--prefix <prefix>', 'id prefix when the bead store is created (default: bd)')
    .addHelpText(
      'after',
      `
Examples:
  forge-pack init                    # asks before writing, when run in a terminal
  forge-pack init --yes              # detected defaults, no questions
  forge-pack init --store embedded   # keep beads in .beads/issues.jsonl even if br is installed
  forge-pack init --force --yes      # regenerate .forge/config.json from what is detected now

Writes .forge/config.json (store, agents per role, gates detected from package.json, pyproject.toml
or pytest.ini/tox.ini/setup.cfg/ruff.toml/mypy.ini, Cargo.toml, go.mod, else a Makefile's test)
unless one exists: an existing config is kept as it is unless --force.
The gates run after each code-writing bead of ralph-loop (a red one fails the attempt; --no-gates
skips them, a bead's gates:none label too); forge-pack doctor checks their programs exist.
The store is pinned to the one initialised, so installing br later does not hide existing beads.
Running it again changes nothing. Exit codes: 0 ok, 2 usage, 3 not a git repo / br missing, 4 config.`,
    )
    .action(async (flags: InitFlags, command: Command) => {
      const options = globals(command);
      const { runInit, printInitReport } = await import('./init-run.js');
      const report = await runInit(deps, options, flags);
      if (options.json) printJson(deps, report);
      else printInitReport(deps, report);
    });
}
