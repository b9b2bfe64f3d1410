// `ralph-loop once`: run exactly one bead through the runner's own machinery, then stop.
import type { Command } from 'commander';
import { globals, openStoreFor, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import type { RunFlags } from './run-flags.js';

export function defineOnceCommand(command: Command, deps: CliDeps): void {
  // The run options are the program's own: optsWithGlobals sees them after `once` too.
  command
    .argument('<bead-id>', 'the bead to run')
    .option('--epic <id>', "the lock and logs to use (default: the bead's parent)")
    // Its help lists them too: `once --help` is where a user looks for how to give the bead its agent.
    .configureHelp({ ...command.configureHelp(), showGlobalOptions: true })
    .action(async (beadId: string, _local: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<RunFlags & { epic?: string }>();
      const options = globals(cmd);
      let epicId = flags.epic;
      if (epicId === undefined) {
        const { opened } = await openStoreFor(deps, options);
        const { showRunTarget } = await import('./run-target.js');
        const dir = workingDir(deps, options);
        const inGitRepo = (await deps.createRunnerGit(dir)) !== undefined;
        epicId = (await showRunTarget(opened.store, beadId, 'bead', { dir, inGitRepo })).parent ?? beadId;
      }
      const { runLoopCommand } = await import('./run-command.js');
      await runLoopCommand(deps, options, epicId, flags, beadId);
    });
}
