// What one change costs the embedded store as a loop's beads pile up: it appends (and fsyncs) the
// changed bead to `.beads/issues.jsonl`, so the cost should not grow with the beads the loop has stamped.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createEmbeddedStore,
  serializeIssuesJsonl,
  type IssueRecord,
} from '../../src/beads/embedded/index.js';
import { summarize, type Summary } from './stats.js';

export interface StoreWriteProbe {
  beads: number;
  fileBytes: number;
  /** First read of the file (parse) by a fresh store. */
  coldReadMs: number;
  /** One change (create, claim, close), each appended and fsynced. */
  writeMs: Summary;
}

/**
 * Writes the first `size` records (creation order: the epic first) as an embedded store, then times a
 * cold read and a few changes on it, for each size.
 */
export async function probeEmbeddedWrites(
  records: readonly IssueRecord[],
  dir: string,
  sizes: readonly number[],
  rounds = 3,
): Promise<StoreWriteProbe[]> {
  const epic = records[0];
  if (epic === undefined || epic.issue_type !== 'epic')
    throw new Error('the records do not start with the epic');
  const probes: StoreWriteProbe[] = [];
  for (const size of sizes) {
    const cwd = join(dir, `store-${size}`);
    const issues = join(cwd, '.beads', 'issues.jsonl');
    await mkdir(join(cwd, '.beads'), { recursive: true });
    await writeFile(issues, serializeIssuesJsonl(records.slice(0, size)));
    const store = createEmbeddedStore({ cwd, actor: 'bench' });
    const t0 = performance.now();
    await store.ready(epic.id);
    const coldReadMs = performance.now() - t0;
    const writes: number[] = [];
    const timed = async <T>(change: () => Promise<T>): Promise<T> => {
      const start = performance.now();
      const result = await change();
      writes.push(performance.now() - start);
      return result;
    };
    for (let i = 0; i < rounds; i += 1) {
      const bead = await timed(() => store.create({ title: `probe ${i}`, parent: epic.id }));
      await timed(() => store.claim(bead.id));
      await timed(() => store.close(bead.id, 'probe'));
    }
    probes.push({
      beads: size,
      fileBytes: (await stat(issues)).size,
      coldReadMs,
      writeMs: summarize(writes),
    });
  }
  return probes;
}
