// Temp entries named by the Forge process that made them (src/infra/left-temp.ts): those of a process of
// this host that is gone are removed, files and directories alike; a live process's, another host's and
// anything else are kept.
import { mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  ownTempPrefix,
  removeLeftTemps,
  removeLeftTempsOnce,
  tempPrefixFor,
} from '../../src/infra/left-temp.js';
import { deadPid } from '../support/pids.js';

async function base(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-left-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

describe('temp entries a killed Forge left', () => {
  it('are removed when their maker is gone; this process’s, a live one’s, another host’s and other names are kept', async () => {
    const dir = await base();
    const gone = deadPid();
    const left = [`${tempPrefixFor('forge-x-', gone)}a1B2c3`, `${tempPrefixFor('forge-x-', gone)}0f3e9a1b`];
    const host = tempPrefixFor('', 0).split('-')[0];
    const otherHost = host === '00000000' ? '11111111' : '00000000';
    const kept = [
      `${ownTempPrefix('forge-x-')}d4E5f6`,
      `${tempPrefixFor('forge-x-', process.ppid)}g7H8i9`,
      `forge-x-${otherHost}-${gone}-a1B2c3`,
      // Another prefix, no host, no pid, a name that only starts alike.
      `${tempPrefixFor('forge-y-', gone)}a1B2c3`,
      `forge-x-${gone}-a1B2c3`,
      'forge-x-notes',
      `${tempPrefixFor('forge-x-', gone)}a_b`,
    ];
    await mkdir(join(dir, left[0]!));
    await writeFile(join(dir, left[0]!, 'lib.so'), 'x');
    await writeFile(join(dir, left[1]!), 'index');
    for (const name of kept) await mkdir(join(dir, name));
    expect((await removeLeftTemps(dir, 'forge-x-')).sort()).toEqual(
      left.map((name) => join(dir, name)).sort(),
    );
    expect((await readdir(dir)).sort()).toEqual([...kept].sort());
  });

  it('that are links: the link goes, what it points at stays', async () => {
    const dir = await base();
    const target = await base();
    await writeFile(join(target, 'work.txt'), 'keep me');
    const link = `${tempPrefixFor('forge-x-', deadPid())}a1B2c3`;
    await symlink(target, join(dir, link));
    expect(await removeLeftTemps(dir, 'forge-x-')).toEqual([join(dir, link)]);
    expect(await readdir(dir)).toEqual([]);
    expect(await readFile(join(target, 'work.txt'), 'utf8')).toBe('keep me');
  });

  it('are looked for once per temp directory and prefix in a process', async () => {
    const dir = await base();
    const first = `${tempPrefixFor('forge-once-', deadPid())}a1B2c3`;
    await mkdir(join(dir, first));
    await removeLeftTempsOnce(dir, 'forge-once-');
    expect(await readdir(dir)).toEqual([]);
    const second = `${tempPrefixFor('forge-once-', deadPid())}d4E5f6`;
    await mkdir(join(dir, second));
    await removeLeftTempsOnce(dir, 'forge-once-');
    expect(await readdir(dir)).toEqual([second]);
    // Another prefix in the same directory is its own first time.
    await removeLeftTempsOnce(dir, 'forge-other-');
    expect(await readdir(dir)).toEqual([second]);
  });

  it('in a directory that does not exist: nothing to remove, no error', async () => {
    expect(await removeLeftTemps(join(await base(), 'missing'), 'forge-x-')).toEqual([]);
  });
});
