// The journal beside a seal: what the runner is about to write, recorded before it writes. A runner
// killed between a write and the next seal leaves files the seal does not know; the journal tells its
// own writes (whole, or an append torn by the kill) from a change by anybody else.
//
// A whole-file write is announced by the content's hash. An append is announced by its line alone, so
// announcing costs the same at a million ledger lines as at ten: the check strips announced lines off
// the end of the file and compares what is left with the content before them.
import { createHash } from 'node:crypto';
import { join, relative, sep } from 'node:path';
import { appendJsonLine, isCompleteJson, readFileIfExists } from './atomic-file.js';

/** One announced write: the file's content after it (sha256; null: removed), or one line appended. */
type Intent = { name: string; hash: string | null } | { name: string; append: string };

export function sha256(content: Buffer | string): string {
  return createHash('sha256').update(content).digest('hex');
}

export function relativeName(repo: string, path: string): string {
  return relative(repo, path).split(sep).join('/');
}

export function intentsPath(dir: string): string {
  return join(dir, 'intents.jsonl');
}

/** Announces that `path` will hold `content` (null: it is removed). */
export async function recordIntent(
  dir: string,
  repo: string,
  path: string,
  content: Buffer | string | null,
): Promise<void> {
  const intent: Intent = {
    name: relativeName(repo, path),
    hash: content === null ? null : sha256(content),
  };
  await appendJsonLine(intentsPath(dir), intent);
}

/** Announces that `line` (one JSON text, no newline) will be appended to `path` as a JSONL line. */
export async function recordAppendIntent(
  dir: string,
  repo: string,
  path: string,
  line: string,
): Promise<void> {
  const intent: Intent = { name: relativeName(repo, path), append: line };
  await appendJsonLine(intentsPath(dir), intent);
}

/** Every announcement since the last seal, by relative name, oldest first. */
export async function readJournal(dir: string): Promise<Map<string, Intent[]>> {
  const text = await readFileIfExists(intentsPath(dir));
  const byName = new Map<string, Intent[]>();
  for (const line of (text ?? '').split('\n')) {
    const intent = parseIntent(line);
    if (intent !== undefined) byName.set(intent.name, [...(byName.get(intent.name) ?? []), intent]);
  }
  return byName;
}

function parseIntent(line: string): Intent | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined; // a torn last line: the write it announced never started
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const { name, hash, append } = value as Record<string, unknown>;
  if (typeof name !== 'string') return undefined;
  if (typeof append === 'string') return { name, append };
  if (typeof hash === 'string' || hash === null) return { name, hash };
  return undefined;
}

/** What a file was before the announcements: the sealed content's hash, and the content when known. */
export interface SealedState {
  hash: string | undefined;
  /** The sealed copy, when it could be read: an append repairs a torn last line of it. */
  content?: Buffer | undefined;
}

/**
 * Whether `now` (null: absent) is what the runner's announced writes for `name` left, when the last of
 * them may not have happened or may have been cut short (an append torn by the kill).
 */
export function leftByRunner(
  journal: ReadonlyMap<string, readonly Intent[]>,
  name: string,
  now: Buffer | null,
  sealed: SealedState,
): boolean {
  const intents = journal.get(name) ?? [];
  if (intents.length > 0) {
    // After all the writes, or after all but the last (which was never made, or torn mid-append).
    if (matchesAfter(intents, intents.length, now, sealed, false)) return true;
    if (matchesAfter(intents, intents.length - 1, now, sealed, true)) return true;
  }
  if (now !== null) return false;
  // A directory the runner removed takes its files with it.
  for (const [dir, list] of journal) {
    const last = list[list.length - 1];
    if (name.startsWith(`${dir}/`) && last !== undefined && 'hash' in last && last.hash === null) return true;
  }
  return false;
}

/**
 * Whether `now` is the content after the first `count` intents; with `tornNext`, also that content
 * followed by the start of the next intent's line (an append the kill cut short).
 */
function matchesAfter(
  intents: readonly Intent[],
  count: number,
  now: Buffer | null,
  sealed: SealedState,
  tornNext: boolean,
): boolean {
  let text = now?.toString('utf8');
  const next = intents[count];
  if (tornNext && next !== undefined && 'append' in next && text !== undefined) {
    // A torn append left a prefix of `line\n`; cut it off (the file then ends in a newline, or is empty).
    const cut = text.endsWith('\n') ? text.length : text.lastIndexOf('\n') + 1;
    const tail = text.slice(cut);
    if (tail !== '' && !`${next.append}\n`.startsWith(tail)) return false;
    text = text.slice(0, cut);
  }
  // Peel the appends made after the last whole write off the end, newest first.
  let i = count - 1;
  for (; i >= 0; i -= 1) {
    const intent = intents[i];
    if (intent === undefined || !('append' in intent)) break;
    if (text === undefined || !text.endsWith(`${intent.append}\n`)) return false;
    text = text.slice(0, text.length - intent.append.length - 1);
  }
  const base = intents[i];
  if (base !== undefined && 'hash' in base) {
    if (base.hash === null) return text === undefined || text === '';
    return text !== undefined && sha256(text) === base.hash;
  }
  // Back at the sealed content; an append first drops (or completes) a torn last line of it.
  if (text === undefined) return sealed.hash === undefined;
  if (sha256(text) === sealed.hash) return true;
  return (
    i < count - 1 && sealed.content !== undefined && text === repairedTail(sealed.content.toString('utf8'))
  );
}

/** What `appendJsonLine` makes of a file ending in a torn line before it appends. */
function repairedTail(text: string): string {
  if (text === '' || text.endsWith('\n')) return text;
  const lastNewline = text.lastIndexOf('\n');
  const head = text.slice(0, lastNewline + 1);
  const tail = text.slice(lastNewline + 1);
  return isCompleteJson(tail) ? `${head}${tail}\n` : head;
}
