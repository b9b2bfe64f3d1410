// `ralph-loop status`: where an epic stands, a loop's or a plain epic's.
//
// It is run over and over while a loop works, so at load time this module needs only commander and
// status-run.ts (light itself); the executable skips even commander for plain arguments
// (status-shortcut.ts). Both run the same runStatus.
import { Command } from 'commander';
import { STATUS_COMMAND } from './command-specs.js';
import { globals } from './common.js';
import type { CliDeps } from './deps.js';
import { runStatus, type StatusFlags } from './status-run.js';

export { prefersUnicode } from './status-run.js';

/** The command on its own, outside a program's lazy registration. */
export function createStatusCommand(deps: CliDeps): Command {
  const command = new Command(STATUS_COMMAND.name).description(STATUS_COMMAND.description);
  defineStatusCommand(command, deps);
  return command;
}

export function defineStatusCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<epic-id>', 'the epic (an autoresearch loop or any other)')
    .option('--beads', "also count the epic's beads by status (asks the bead store)")
    .option('--ascii', 'draw the score trend with ASCII characters')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .action(async (epicId: string, flags: StatusFlags, cmd: Command) => {
      await runStatus(deps, globals(cmd), epicId, flags);
    });
  command.addHelpText(
    'after',
    `
Examples:
  ralph-loop status bd-a1b
  ralph-loop status bd-a1b --json | jq .scores
  watch -n 5 ralph-loop status bd-a1b
  ralph-loop status bd-c2d --json | jq .failures     # a plain epic: what failed, with its last message

A plain epic (not a loop) shows its beads done/open/in progress/blocked/failed (blocked: open with
unmet dependencies; failed: labelled ralph:failed), the live bead with its agent and how long it has
run, the last run (id, start, end, why it stopped) and each failed bead's last attempt message.

A pipeline's parent shows every stage: its bead, its loop or epic, its cycle, its phase (passed,
accepted, stopped, not started, or the loop's own phase) and its score line or beads closed.

For a loop, phase: running (the live bead and how long it has run, from the loop's lock), waiting for a human
(needs-human.md), terminated (terminal-signal.json, with its reason), or idle. Scores read
"baseline → best → last"; the trend shows the recent iterations, a dot where one crashed.`,
  );
}
