// The build's warm-up of `ralph-loop status` (scripts/build.mjs runs writeStatusCache in a Node of its
// own): V8's code for dist/bundle/status-fast.cjs, taken after a few statuses of a small plain epic.
// V8 compiles a function when it is first called, and a cache holds what was compiled by then: taken
// before a status ran, it left the store's read, the epic's view and the printing to be compiled by
// every status. bin/run-built.js reads the cache (compileStatusFast says when it is taken); only the
// build writes it.
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Script } from 'node:vm';
import { createEmbeddedStore } from '../beads/embedded/index.js';
import { isolateEnv } from './program-warm-up.js';

/** What bin/run-built.js exports for the status path. */
interface RunBuilt {
  compileStatusFast(options?: { cache?: boolean }): {
    exports: { statusForWarmUp?: (args: readonly string[], cwd: string) => Promise<string> };
    script: Script;
    /** The text it compiled. */
    source: string;
  };
  STATUS_CACHE: string;
  CACHE_HEAD: string;
  FILE_TAIL: string;
}

export interface StatusCacheWritten {
  bytes: number;
  warmUp: { ok: boolean; detail: string };
}

/**
 * Compiles status-fast.cjs as a status does (without a cache), runs the warm-up, and writes V8's code
 * with the first line bin/run-built.js checks: the build named at the end of the file. Whole or not at
 * all (a temp file renamed). Throws when the file or the cache cannot be read or written.
 */
export async function writeStatusCache(): Promise<StatusCacheWritten> {
  const runBuilt = createRequire(import.meta.url)('../../bin/run-built.js') as RunBuilt;
  const { exports, script, source } = runBuilt.compileStatusFast({ cache: false });
  // The build named by the text compiled, not by the file as it is now: another build may have
  // written it since.
  const tail = source.lastIndexOf(runBuilt.FILE_TAIL);
  const build = tail < 0 ? '' : source.slice(tail + runBuilt.FILE_TAIL.length).trim();
  if (!/^[0-9a-f]{16}$/.test(build)) throw new Error('status-fast.cjs does not end with the build it is');
  const warmUp = await warmUpStatus(exports.statusForWarmUp);
  const data = script.createCachedData();
  const temp = `${runBuilt.STATUS_CACHE}.${process.pid}.tmp`;
  // Twice: a status compares the copies before V8 sees either (compileStatusFast says why).
  const head = Buffer.from(`${runBuilt.CACHE_HEAD}${build} ${data.length}\n`, 'latin1');
  writeFileSync(temp, Buffer.concat([head, data, data]));
  renameSync(temp, runBuilt.STATUS_CACHE);
  return { bytes: data.length, warmUp };
}

/**
 * Statuses of a small epic on the embedded store, in a temp directory with HOME and the config
 * directories inside it: text and JSON, with a closed, a blocked, a failed bead and a run's log. Never
 * throws: a warm-up that fails says why, and the cache holds what was compiled by then.
 */
async function warmUpStatus(
  status: ((args: readonly string[], cwd: string) => Promise<string>) | undefined,
): Promise<{ ok: boolean; detail: string }> {
  if (status === undefined) return { ok: false, detail: 'status-fast.cjs exports no statusForWarmUp' };
  let dir: string | undefined;
  let restoreEnv: (() => void) | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'forge-status-warm-up-'));
    restoreEnv = isolateEnv(dir);
    const repo = join(dir, 'repo');
    mkdirSync(repo, { recursive: true });
    const store = createEmbeddedStore({ cwd: repo, actor: 'warm-up' });
    await store.init({ prefix: 'wu' });
    const epic = (await store.create({ title: 'Warm-up', type: 'epic' })).id;
    const first = (await store.create({ title: 'First', parent: epic })).id;
    await store.create({ title: 'After the first', parent: epic, dependsOn: [first] });
    const done = (await store.create({ title: 'Done', parent: epic })).id;
    await store.close(done, 'done');
    const failed = (await store.create({ title: 'Failed', parent: epic, labels: ['ralph:failed'] })).id;
    await store.comment(failed, 'ralph-loop attempt 1 of 1 failed: the agent exited 1');
    const runs = join(repo, '.forge', 'epics', epic, 'runs');
    mkdirSync(runs, { recursive: true });
    const events = [
      { type: 'run_started', ts: '2026-01-01T00:00:00.000Z', run_id: 'warm', epic },
      { type: 'run_finished', ts: '2026-01-01T00:00:09.000Z', run_id: 'warm', reason: 'idle' },
    ];
    writeFileSync(
      join(runs, '2026-01-01T00-00-00-000Z-warm.jsonl'),
      events.map((event) => `${JSON.stringify(event)}\n`).join(''),
    );
    for (const args of [
      ['--store', 'embedded', 'status', epic],
      ['--store', 'embedded', 'status', epic, '--json'],
    ]) {
      const printed = await status(args, repo);
      if (!printed.includes(epic)) throw new Error(`status ${args.join(' ')} did not name ${epic}`);
    }
    return { ok: true, detail: `status of ${epic} (4 beads), as text and JSON` };
  } catch (error) {
    return { ok: false, detail: error instanceof Error ? error.message : String(error) };
  } finally {
    restoreEnv?.();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
  }
}
