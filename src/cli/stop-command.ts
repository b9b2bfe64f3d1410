// `ralph-loop stop`: ask the live runner of an epic to stop after its current bead.
import type { Command } from 'commander';
import { isLockHolderLive, readLockFile } from '../infra/lock-file.js';
import { globals, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { runDirFor } from './epic-dirs.js';
import { printJson, say } from './output.js';

export function defineStopCommand(command: Command, deps: CliDeps): void {
  command.argument('<epic-id>', 'the epic').action(async (epicId: string, _flags: unknown, cmd: Command) => {
    const options = globals(cmd);
    const runDir = await runDirFor(workingDir(deps, options), epicId);
    const holder = await readLockFile(runDir.lockPath);
    // A request is for the live runner only: left for no one, it would halt the next run unasked.
    const running = holder !== undefined && (await isLockHolderLive(runDir.lockPath, holder, deps.host));
    if (running) await runDir.requestStop(`pid ${deps.pid}`, holder.run_id);
    if (options.json)
      printJson(deps, { epic: epicId, stop_requested: running, running, holder: holder ?? null });
    else if (running)
      say(deps, `Asked the loop of ${epicId} (pid ${holder.pid}) to stop after its current bead.`);
    else say(deps, `No runner is live for ${epicId}; nothing to stop.`);
  });
}
