// Test helper process: prints "ready", waits for a line on stdin, then creates beads in an embedded store.
// argv: <cwd> <count> <tag> <epic-id>; even-numbered beads are children of the epic, odd ones top-level.
import { createEmbeddedStore } from '../../../src/beads/embedded/index.js';

const [cwd, countText, tag, epicId] = process.argv.slice(2);
if (cwd === undefined || countText === undefined || tag === undefined || epicId === undefined) {
  throw new Error('usage: create-many <cwd> <count> <tag> <epic-id>');
}
const store = createEmbeddedStore({ cwd, actor: tag });
process.stdout.write('ready\n');
await new Promise<void>((resolve) => process.stdin.once('data', () => resolve()));
process.stdin.destroy();
for (let i = 0; i < Number(countText); i += 1) {
  await store.create({
    title: `${tag}-${i}`,
    labels: [`proc:${tag}`],
    ...(i % 2 === 0 ? { parent: epicId } : {}),
  });
}
process.stdout.write('done\n');
