// Test helper process: comments on the given beads one after another until it is killed, printing
// "ack <n>" once each comment has resolved (is on disk). argv: <cwd> <tag> <compact-after> <id>...
import { createEmbeddedStore } from '../../../src/beads/embedded/index.js';

const [cwd, tag, compactAfterText, ...ids] = process.argv.slice(2);
if (cwd === undefined || tag === undefined || compactAfterText === undefined || ids.length === 0) {
  throw new Error('usage: change-forever <cwd> <tag> <compact-after> <id>...');
}
const store = createEmbeddedStore({ cwd, actor: tag, compactAfter: Number(compactAfterText) });
for (let n = 0; ; n += 1) {
  const id = ids[n % ids.length] as string;
  await store.comment(id, `${tag}-${n}`);
  process.stdout.write(`ack ${n}\n`);
}
