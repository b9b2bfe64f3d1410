// The fake br's database: one JSON file in BEADS_DIR, guarded by a lock file like SQLite's write lock.
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';

export const STATE_FILE = 'fake-br-state.json';
const LOCK_FILE = 'fake-br-state.lock';

export function sleepSync(ms) {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Takes the workspace lock, waiting up to `timeoutMs`; false when it stays taken (DATABASE_LOCKED). */
export function acquireLock(beadsDir, timeoutMs) {
  const path = join(beadsDir, LOCK_FILE);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const fd = openSync(path, 'wx');
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
    }
    let holder = NaN;
    try {
      holder = Number(readFileSync(path, 'utf8'));
    } catch {
      continue;
    }
    if (Number.isInteger(holder) && holder > 0 && !isAlive(holder)) {
      rmSync(path, { force: true });
      continue;
    }
    if (Date.now() >= deadline) return false;
    sleepSync(5);
  }
}

export function releaseLock(beadsDir) {
  rmSync(join(beadsDir, LOCK_FILE), { force: true });
}

export function isInitialised(beadsDir) {
  return existsSync(join(beadsDir, STATE_FILE));
}

export function emptyState(prefix) {
  return {
    prefix,
    issues: {},
    dependencies: [],
    comments: [],
    nextCommentId: 1,
    childCounters: {},
    lastTimeNs: '0',
  };
}

export function loadState(beadsDir) {
  return JSON.parse(readFileSync(join(beadsDir, STATE_FILE), 'utf8'));
}

export function saveState(beadsDir, state) {
  const path = join(beadsDir, STATE_FILE);
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(temp, path);
}

/** RFC 3339 with nanoseconds like br's, strictly increasing across calls so creation order is total. */
export function nextTimestamp(state) {
  let ns = BigInt(Date.now()) * 1_000_000n + BigInt(randomBytes(2).readUInt16BE(0) % 1000) * 1000n;
  const last = BigInt(state.lastTimeNs);
  if (ns <= last) ns = last + 1n;
  state.lastTimeNs = ns.toString();
  const seconds = new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19);
  return `${seconds}.${String(ns % 1_000_000_000n).padStart(9, '0')}Z`;
}

/** `<prefix>-<base36 hash>`, or `<parent>.<n>` for a child. */
export function nextId(state, parent) {
  if (parent !== undefined) {
    const n = (state.childCounters[parent] ?? 0) + 1;
    state.childCounters[parent] = n;
    return `${parent}.${n}`;
  }
  for (;;) {
    const hash = BigInt(`0x${randomBytes(4).toString('hex')}`)
      .toString(36)
      .slice(0, 4);
    const id = `${state.prefix}-${hash}`;
    if (state.issues[id] === undefined) return id;
  }
}
