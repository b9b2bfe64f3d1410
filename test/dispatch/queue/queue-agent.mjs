// A stand-in agent for the queue tests: writes <bead>.txt in its cwd. A bead whose id holds "slow"
// records each start in $QUEUE_AGENT_DIR/<bead>.starts (pid and cwd); on its first start it sleeps
// until killed, on a later one it finishes at once. One whose id holds "fail" says why and exits 1.
// Others take a moment, so two workers share them.
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const bead = process.env.FORGE_BEAD ?? 'unknown';
const marks = process.env.QUEUE_AGENT_DIR ?? '';
const write = () => writeFileSync(join(process.cwd(), `${bead}.txt`), `done by ${bead}\n`);
if (bead.includes('fail')) {
  process.stdout.write(`${bead}: the build broke on line 12\n`);
  process.exit(1);
}
// One whose id holds "stubborn" ignores SIGTERM (only SIGKILL ends it).
if (bead.includes('stubborn')) process.on('SIGTERM', () => undefined);
if (bead.includes('slow')) {
  const file = join(marks, `${bead}.starts`);
  const before = existsSync(file) ? readFileSync(file, 'utf8') : '';
  appendFileSync(file, `${process.pid} ${process.cwd()}\n`);
  if (before === '') await new Promise((resolve) => setTimeout(resolve, 600_000));
  write();
} else {
  await new Promise((resolve) => setTimeout(resolve, 700));
  write();
}
process.stdout.write('done\n');
