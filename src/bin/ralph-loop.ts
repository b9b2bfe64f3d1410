// The `ralph-loop` executable. `ralph-loop status <epic>` with plain arguments runs without building the
// commander program (it is polled while loops run); everything else, and a status the short path
// cannot finish, runs in full.
import { runStatusShortcut } from '../cli/status-shortcut.js';

if (!(await runStatusShortcut(process.argv))) {
  const { runRalphLoop } = await import('../cli/main.js');
  await runRalphLoop(process.argv);
}
