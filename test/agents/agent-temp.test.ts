// Each agent run has a temp directory of its own (src/agents/agent-temp.ts): what the agent leaves in
// TMPDIR is gone when the run ends, however it ends, and a killed Forge's leftovers go on the next run.
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommandRunner } from '../../src/agents/command.js';
import { parseAgentSpec } from '../../src/agents/spec.js';
import type { AgentRequest } from '../../src/agents/types.js';
import { ownTempPrefix, tempPrefixFor } from '../../src/infra/left-temp.js';
import { setUpFakeAgents, type FakeAction } from '../support/fake-agents/harness.js';
import { deadPid } from '../support/pids.js';

/** Fake agents and an empty temp directory, `base`, given to each run as its TMPDIR unless told. */
async function tempWorld() {
  const fakes = await setUpFakeAgents();
  const base = join(fakes.dir, 'tmp');
  await mkdir(base);
  const parsed = parseAgentSpec('my-agent', { allowCommand: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  const runner = createCommandRunner(parsed.spec, { killGraceMs: 200 });
  const transcriptPath = join(fakes.dir, 'transcript.jsonl');
  const run = async (
    actions: FakeAction[],
    env: Record<string, string> = {},
    request: Partial<AgentRequest> = {},
  ) => {
    const result = await runner.run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env(actions, { TMPDIR: base, ...env }),
      mode: 'full',
      timeoutMs: 20_000,
      transcriptPath,
      ...request,
    });
    const calls = await fakes.calls();
    return { result, env: calls.at(-1)!.env, transcript: await readFile(transcriptPath, 'utf8') };
  };
  return { dir: fakes.dir, base, run };
}

describe('an agent run’s temp directory', () => {
  it('is its own, under the TMPDIR it was given, and is gone with what the agent left there when it ends', async () => {
    const world = await tempWorld();
    const { result, env } = await world.run([
      { writeTempFile: { name: 'native-lib.so', content: 'x'.repeat(4096) } },
      { line: 'done' },
    ]);
    expect(result.outcome).toBe('ok');
    expect(env.TMPDIR!.startsWith(join(world.base, ownTempPrefix('forge-agent-'))), env.TMPDIR).toBe(true);
    // Set only where the env had them.
    expect(env.TMP).toBeUndefined();
    expect(env.TEMP).toBeUndefined();
    expect(await readdir(world.base)).toEqual([]);
  });

  it('is named by TMP and TEMP too, where the env sets them; each run gets a new one', async () => {
    const world = await tempWorld();
    const first = (await world.run([{ line: 'done' }], { TMP: '/tmp', TEMP: '/tmp' })).env;
    const second = (await world.run([{ line: 'done' }], { TMP: '/tmp', TEMP: '/tmp' })).env;
    expect(first.TMP).toBe(first.TMPDIR);
    expect(first.TEMP).toBe(first.TMPDIR);
    expect(second.TMPDIR).not.toBe(first.TMPDIR);
    expect(await readdir(world.base)).toEqual([]);
  });

  it('replaced by the agent with a link elsewhere: the link goes, what it points at stays', async () => {
    const world = await tempWorld();
    const precious = join(world.dir, 'precious');
    await mkdir(precious);
    await writeFile(join(precious, 'work.txt'), 'keep me');
    const { result } = await world.run([{ linkTemp: precious }, { line: 'done' }]);
    expect(result.outcome).toBe('ok');
    expect(await readdir(world.base)).toEqual([]);
    expect(await readFile(join(precious, 'work.txt'), 'utf8')).toBe('keep me');
  });

  it('is removed when the run times out and its process group is killed', async () => {
    const world = await tempWorld();
    const { result } = await world.run(
      [{ writeTempFile: { name: 'scratch', content: 'half done' } }, { hang: true }],
      {},
      // Long enough that the agent has written its file and is hanging when the timeout strikes.
      { timeoutMs: 5000 },
    );
    expect(result.outcome).toBe('timeout');
    expect(await readdir(world.base)).toEqual([]);
  });

  it('is an absolute path when the TMPDIR given is relative (the agent works in another directory)', async () => {
    const world = await tempWorld();
    const { result, env } = await world.run([{ line: 'done' }], {
      TMPDIR: relative(process.cwd(), world.base),
    });
    expect(result.outcome).toBe('ok');
    expect(env.TMPDIR!.startsWith(join(world.base, ownTempPrefix('forge-agent-'))), env.TMPDIR).toBe(true);
  });

  it('cannot be made under a TMPDIR that is missing: the run goes on with the env it was given, and the transcript says so', async () => {
    const world = await tempWorld();
    const missing = join(world.dir, 'no-such-dir');
    const { result, env, transcript } = await world.run([{ line: 'done' }], { TMPDIR: missing });
    expect(result.outcome).toBe('ok');
    expect(env.TMPDIR).toBe(missing);
    expect(transcript).toMatch(/"forge":"temp".*no temp directory of its own under .*no-such-dir/);
  });

  it('a killed Forge’s leftovers go with the first run in that temp directory', async () => {
    const world = await tempWorld();
    const dead = `${tempPrefixFor('forge-agent-', deadPid())}a1B2c3`;
    await mkdir(join(world.base, dead));
    await writeFile(join(world.base, dead, '.bcfd-00000000.so'), 'x'.repeat(4096));
    const { result } = await world.run([{ line: 'done' }]);
    expect(result.outcome).toBe('ok');
    expect(await readdir(world.base)).toEqual([]);
  });
});
