// The `ralph-loop` executable. `ralph-loop status <epic>` with plain arguments runs without building the
// commander program (it is polled while loops run); everything else, and a status the short path
// cannot finish, runs in full (see program.ts for how the program loads).
import { runStatusShortcut } from '../cli/status-shortcut.js';

if (!(await runStatusShortcut(process.argv))) {
  const { loadProgram } = await import('../cli/program.js');
  const { runRalphLoop } = await loadProgram();
  await runRalphLoop(process.argv);
}
