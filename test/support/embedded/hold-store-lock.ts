// Takes the embedded store's lock at argv[2] and holds it until stdin ends, saying "held" once it has
// it: a writer the test can place elsewhere (in a PID namespace of its own, as an agent's forge-pack).
import { acquireStoreLock } from '../../../src/beads/embedded/lock.js';

const lock = await acquireStoreLock(process.argv[2] ?? '', { waitMs: 5_000 });
process.stdout.write('held\n');
process.stdin.resume();
process.stdin.on('end', () => {
  void lock.release().then(() => process.exit(0));
});
