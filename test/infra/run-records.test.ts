// Records of processes that run agents under a mark: a new one ends what dead ones on this host left,
// and leaves live holders, other hosts' records and records it cannot read alone.
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { claimRunRecord } from '../../src/infra/run-records.js';

const DEAD = 4_000_001;

async function recordsDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-records-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const entry = (pid: number, mark: string, host = hostname()) =>
  JSON.stringify({ pid, host, started_at: '2026-11-29T00:00:00.000Z', epic: 'worker', run_id: mark });

describe('run records', () => {
  it('ends the marks of dead holders on this host, removes their records, and records itself', async () => {
    const dir = await recordsDir();
    await writeFile(join(dir, `${hostname()}-${DEAD}.json`), entry(DEAD, 'worker-dead'));
    await writeFile(join(dir, `${hostname()}-${process.ppid}.json`), entry(process.ppid, 'worker-live'));
    await writeFile(join(dir, `elsewhere-${DEAD}.json`), entry(DEAD, 'worker-far', 'other-host.example'));
    await writeFile(join(dir, `${hostname()}-7.json`), '{"pid": 7, "host"');
    const ended: string[] = [];
    const record = await claimRunRecord({
      dir,
      host: hostname(),
      pid: process.pid,
      mark: 'worker-new',
      startedAt: new Date().toISOString(),
      endRun: async (mark) => void ended.push(mark),
    });
    expect(ended).toEqual(['worker-dead']);
    expect(record.ended).toEqual([`${hostname()}:${DEAD}`]);
    const own = `${hostname()}-${process.pid}.json`;
    expect((await readdir(dir)).sort()).toEqual(
      [`${hostname()}-${process.ppid}.json`, `${hostname()}-7.json`, `elsewhere-${DEAD}.json`, own].sort(),
    );
    expect(JSON.parse(await readFile(join(dir, own), 'utf8'))).toMatchObject({
      pid: process.pid,
      host: hostname(),
      run_id: 'worker-new',
    });
    await record.release();
    expect(await readdir(dir)).not.toContain(own);
  });
});
