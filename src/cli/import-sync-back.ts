// --sync-back at run time: when an imported bead closes, mark its item done in the file it came from.
// A write-back that fails is a warning; the bead stays closed.
import { join, resolve } from 'node:path';
import { pathExists, readFileIfExists, writeFileAtomic } from '../infra/atomic-file.js';
import type { TextSink } from '../infra/text-sink.js';
import type { LoopEvent } from '../loop/types.js';
import { IMPORTS_PATH } from './import-paths.js';

export interface SyncBackListener {
  onEvent(event: LoopEvent): void;
  /** Waits for the write-backs started so far. */
  settle(): Promise<void>;
  /** Says what was written back, once the run's live output has stopped. */
  report(sink: TextSink): void;
}

export function createSyncBack(options: {
  repo: string;
  epicId: string;
  now: () => number;
  /** Where a failed write-back goes, as a warning event. */
  emit(event: LoopEvent): void;
}): SyncBackListener {
  const done: string[] = [];
  let chain: Promise<void> = Promise.resolve();
  return {
    onEvent(event) {
      if (event.type !== 'bead_closed') return;
      // One write at a time: two beads of one file must not overwrite each other's change.
      chain = chain.then(() =>
        syncBead(options.repo, event.bead).then(
          (message) => {
            if (message !== undefined) done.push(message);
          },
          (error: unknown) =>
            options.emit({
              type: 'warning',
              ts: new Date(options.now()).toISOString(),
              epic: options.epicId,
              bead: event.bead,
              message: `could not mark ${event.bead}'s source item done: ${error instanceof Error ? error.message : String(error)}`,
            }),
        ),
      );
    },
    settle: () => chain,
    report(sink) {
      for (const message of done) sink.write(`sync-back: ${message}\n`);
    },
  };
}

/** What was written back, or undefined when the bead was not imported with --sync-back. */
async function syncBead(repo: string, bead: string): Promise<string | undefined> {
  // Most runs import nothing: without the registry, no reader (nor its schema) is loaded.
  if (!(await pathExists(join(repo, IMPORTS_PATH)))) return undefined;
  const [{ readImportsRegistry }, { markDone }] = await Promise.all([
    import('./import-registry.js'),
    import('../beads/import/mark-done.js'),
  ]);
  const entry = (await readImportsRegistry(repo)).sync_back[bead];
  if (entry === undefined) return undefined;
  const path = resolve(repo, entry.file);
  const text = await readFileIfExists(path);
  if (text === undefined) throw new Error(`${entry.file} is gone`);
  const result = markDone(entry.format, text, entry.item);
  if (!result.ok) throw new Error(`${entry.file}: ${result.reason}`);
  if (result.text === undefined) return undefined;
  await writeFileAtomic(path, result.text);
  return `marked ${entry.file} (${entry.item}) done for ${bead}`;
}
