// Commands run over an agent's work get a temp directory of their own per run, removed afterwards.
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateProcess } from '../../src/cli/gate-process.js';
import { runWithOwnTemp } from '../../src/cli/own-temp-process.js';

let base = '';
beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'forge-own-temp-'));
});
afterAll(() => rm(base, { recursive: true, force: true }));

const env = () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin', TMPDIR: base, TEMP: base });
const SHOW = ['-c', 'echo "$TMPDIR $TEMP"; ls -A "$TMPDIR" | wc -l; touch "$TMPDIR/left"'];

describe('runWithOwnTemp', () => {
  it('gives each run a fresh, empty TMPDIR (and TEMP) under the one it was given, removed after it', async () => {
    const seen: string[] = [];
    for (let run = 0; run < 2; run += 1) {
      const result = await runWithOwnTemp({ file: 'sh', args: SHOW }, { cwd: base, env: env() });
      const [dirs = '', count = ''] = result.stdout.trim().split('\n');
      const [tmp, temp] = dirs.split(' ');
      expect(tmp).toBe(temp);
      expect(tmp?.startsWith(join(base, 'forge-agent-'))).toBe(true);
      expect(count.trim()).toBe('0');
      seen.push(tmp ?? '');
    }
    expect(seen[0]).not.toBe(seen[1]);
    expect(await readdir(base)).toEqual([]);
  });

  it('is what a gate runs with', async () => {
    const gate = await createGateProcess(env()).run(['sh', ...SHOW], {
      cwd: base,
      timeoutMs: 10_000,
      signal: new AbortController().signal,
    });
    expect(gate.exitCode).toBe(0);
    expect(gate.tail).toMatch(new RegExp(`^${join(base, 'forge-agent-')}\\S+ \\S+\\n0$`));
    expect(await readdir(base)).toEqual([]);
  });
});
