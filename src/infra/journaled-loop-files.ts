// The loop's files as the runner writes them while a seal guards them: every write is announced in
// the seal's journal (infra/file-vault.ts) before it happens, so a runner killed between a write and
// the next seal finds, on its next start, its own write and not a change by somebody else.
import { recordAppendIntent, recordIntent } from './seal-journal.js';
import type { LoopFiles } from './loop-files.js';

export interface JournalPlace {
  /** The seal's directory, where the journal lives. */
  dir: string;
  /** Names in the journal are relative to this directory, as they are in the seal. */
  repo: string;
}

/** `inner`, with each write, append, rename and removal announced in the journal at `place` first. */
export function journaledLoopFiles(inner: LoopFiles, place: JournalPlace): LoopFiles {
  const announce = (path: string, content: string | null) =>
    recordIntent(place.dir, place.repo, path, content);
  const writeText = async (path: string, text: string) => {
    await announce(path, text);
    await inner.writeText(path, text);
  };
  return {
    ...inner,
    writeText,
    // Written as the disk's `writeJson` writes it, so the announced content is the file's.
    writeJson: (path, value) => writeText(path, `${JSON.stringify(value, null, 2)}\n`),
    async appendJsonLine(path, value) {
      // Announced by its line alone: the cost stays the same however long the file grows.
      await recordAppendIntent(place.dir, place.repo, path, JSON.stringify(value));
      await inner.appendJsonLine(path, value);
    },
    async rename(from, to) {
      const content = await inner.readIfExists(from).catch(() => undefined); // a directory: not a file's text
      if (content !== undefined) await announce(to, content);
      await announce(from, null);
      await inner.rename(from, to);
    },
    async remove(path) {
      await announce(path, null);
      await inner.remove(path);
    },
  };
}
