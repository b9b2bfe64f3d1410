// What a plain epic's status read from the store, kept beside the epic's runs so that the next status of
// a store that has not changed reads one small file instead of every bead of the store. The embedded
// store reads its whole file (all epics, every bead ever made) and checks each line: ~25 ms at 300 beads
// and ~300 ms at 10,000 here, and the file only grows as loops stamp beads. The cache is used only while
// the store's version (its file's identity, BeadStore.version) is the one it was made from.
//
// File times can be coarse: two changes close together may carry the same ones. So a store that
// changed less than SETTLE_MS before it was read is not cached: any later change then has later times.
import { dirname } from 'node:path';
import { readFileIfExists, writeJsonAtomicNow } from '../infra/atomic-file.js';
import { isJsonObject } from '../infra/json-object.js';
import { isOwnDir } from '../infra/own-log.js';
import type { BeadStatus, StoreVersion } from '../beads/types.js';
import type { BeadState, EpicBead } from './epic-status.js';

/** The cache's file in an epic's run folder. */
export const STATUS_CACHE_FILE = 'status-cache.json';

/** Bumped whenever what a view holds, or how status derives it, changes. */
const FORMAT = 1;

/** How long after its last change a store is taken to be settled (coarse file times stay apart). */
export const SETTLE_MS = 1000;

/** What status takes from the store for an epic: one read of its graph and of its ready beads. */
export interface StoreView {
  title: string;
  status: BeadStatus;
  beads: EpicBead[];
  /** Each failed bead's last comment from ralph-loop (what went wrong). */
  comments: { bead: string; text: string; created_at: string }[];
  /** When a deferred bead of the epic comes due (the store's clock, ms): the view holds until then. */
  validUntil: number | null;
}

/** The view cached at `path` for this epic and this version of the store; undefined when there is none. */
export async function readCachedView(
  path: string,
  epicId: string,
  version: StoreVersion,
  storeNow: number,
): Promise<StoreView | undefined> {
  const text = await readFileIfExists(path).catch(() => undefined);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isJsonObject(json) || json.format !== FORMAT || json.epic !== epicId || json.token !== version.token)
    return undefined;
  const view = viewOf(json.view);
  if (view === undefined || (view.validUntil !== null && storeNow >= view.validUntil)) return undefined;
  return view;
}

/**
 * Keeps `view`, read from the store at `version`, for the next status: only when the store had settled
 * when the read began (`readAt`, the file system's clock), and only in a folder of the epic's own below
 * `root` (a symlink there is not written through). A cache that cannot be written is no error.
 */
export function cacheView(
  path: string,
  root: string,
  epicId: string,
  version: StoreVersion,
  view: StoreView,
  readAt: number,
): void {
  if (version.changedAtMs > readAt - SETTLE_MS) return;
  try {
    if (!isOwnDir(root, dirname(path))) return;
    writeJsonAtomicNow(path, { format: FORMAT, epic: epicId, token: version.token, view });
  } catch {
    // A read-only folder, a full disk: the next status reads the store again.
  }
}

const STATES: ReadonlySet<string> = new Set<BeadState>(['done', 'open', 'in_progress', 'blocked', 'failed']);

/** The cached view, checked: anything not as written (a file someone edited) is no cache. */
function viewOf(value: unknown): StoreView | undefined {
  if (!isJsonObject(value)) return undefined;
  const { title, status, beads, comments, validUntil } = value;
  if (typeof title !== 'string' || typeof status !== 'string') return undefined;
  if (validUntil !== null && typeof validUntil !== 'number') return undefined;
  if (!Array.isArray(beads)) return undefined;
  const checked: EpicBead[] = [];
  for (const bead of beads) {
    if (!isJsonObject(bead)) return undefined;
    const { id, title: beadTitle, status: beadStatus, state } = bead;
    if (typeof id !== 'string' || typeof beadTitle !== 'string' || typeof beadStatus !== 'string')
      return undefined;
    if (typeof state !== 'string' || !STATES.has(state)) return undefined;
    checked.push({ id, title: beadTitle, status: beadStatus, state: state as BeadState });
  }
  const notes: StoreView['comments'] = [];
  if (!Array.isArray(comments)) return undefined;
  for (const note of comments) {
    if (!isJsonObject(note)) return undefined;
    const { bead, text, created_at: at } = note;
    if (typeof bead !== 'string' || typeof text !== 'string' || typeof at !== 'string') return undefined;
    notes.push({ bead, text, created_at: at });
  }
  return { title, status, beads: checked, comments: notes, validUntil };
}
