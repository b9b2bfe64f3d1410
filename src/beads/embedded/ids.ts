// Issue ids as br makes them: `<prefix>-<base36 hash>` sized to the store, and `<parent>.<n>` for children.
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { configError } from './errors.js';
import { indexOf } from './record-index.js';
import type { IssueMap } from './records.js';

export const DEFAULT_PREFIX = 'bd';
const PREFIX_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const MIN_HASH_LENGTH = 3;
const MAX_HASH_LENGTH = 8;
const NONCES_PER_LENGTH = 10;
/** Grow the hash while the birthday-bound chance of a collision among `count` ids is above this. */
const MAX_COLLISION_PROBABILITY = 0.25;

export interface IdSeed {
  title: string;
  description?: string | undefined;
  creator: string;
  createdAt: string;
}

export function assertValidPrefix(prefix: string): void {
  if (!PREFIX_PATTERN.test(prefix)) {
    throw configError(
      `Invalid issue id prefix "${prefix}"`,
      'Use lowercase letters, digits, `_` and `-` (up to 64 characters), starting with a letter or digit, e.g. "bd".',
    );
  }
}

/** Shortest hash length (3 to 8) at which `count` ids are unlikely to collide, as br sizes its ids. */
export function hashLengthFor(count: number): number {
  for (let length = MIN_HASH_LENGTH; length <= MAX_HASH_LENGTH; length += 1) {
    const space = 36 ** length;
    const probability = 1 - Math.exp((-count * count) / (2 * space));
    if (probability < MAX_COLLISION_PROBABILITY) return length;
  }
  return MAX_HASH_LENGTH;
}

// node:crypto is loaded by the first new id, not with the store: reading beads never needs it.
const requireBuiltin = createRequire(import.meta.url);

/** base36 of the first 64 bits of SHA-256(seed), its last `length` digits. */
export function hashId(seed: string, length: number): string {
  const { createHash } = requireBuiltin('node:crypto') as typeof Crypto;
  const digest = createHash('sha256').update(seed).digest();
  const digits = digest.readBigUInt64BE(0).toString(36).padStart(length, '0');
  return digits.slice(digits.length - length);
}

/**
 * A new top-level id: a content hash of the seed, sized to the store; on collision, other nonces,
 * then longer hashes, so it never returns an id for which `exists` is true.
 */
export function generateIssueId(
  prefix: string,
  seed: IdSeed,
  count: number,
  exists: (id: string) => boolean,
): string {
  const base = `${seed.title}|${seed.description ?? ''}|${seed.creator}|${seed.createdAt}`;
  for (let length = hashLengthFor(count); length <= MAX_HASH_LENGTH; length += 1) {
    for (let nonce = 0; nonce < NONCES_PER_LENGTH; nonce += 1) {
      const id = `${prefix}-${hashId(`${base}|${nonce}`, length)}`;
      if (!exists(id)) return id;
    }
  }
  for (let nonce = NONCES_PER_LENGTH; ; nonce += 1) {
    const id = `${prefix}-${hashId(`${base}|${nonce}`, 12)}`;
    if (!exists(id)) return id;
  }
}

/** `<parent>.<n>` with n one more than the highest child number in use under that parent. */
export function nextChildId(issues: IssueMap, parentId: string): string {
  return `${parentId}.${indexOf(issues).highestChildNumber(parentId) + 1}`;
}

/** The prefix most top-level ids in the store use (for a store br created), if any. */
export function inferPrefix(issues: IssueMap): string | undefined {
  const counts = new Map<string, number>();
  for (const id of issues.keys()) {
    const root = id.split('.')[0] ?? id;
    const dash = root.lastIndexOf('-');
    if (dash <= 0) continue;
    const prefix = root.slice(0, dash);
    counts.set(prefix, (counts.get(prefix) ?? 0) + 1);
  }
  let best: string | undefined;
  let bestCount = 0;
  for (const [prefix, count] of counts) {
    if (count > bestCount) [best, bestCount] = [prefix, count];
  }
  return best;
}
