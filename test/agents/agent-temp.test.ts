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

async function runWithTemp(
  actions: FakeAction[],
  extra: Record<string, string> = {},
  request: Partial<AgentRequest> = {},
) {
  const fakes = await setUpFakeAgents();
  const base = join(fakes.dir, 'tmp');
  await mkdir(base);
  const parsed = parseAgentSpec('my-agent', { allowCommand: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  const transcriptPath = join(fakes.dir, 'transcript.jsonl');
  const result = await createCommandRunner(parsed.spec, { killGraceMs: 200 }).run({
    prompt: 'x',
    cwd: fakes.work,
    env: fakes.env(actions, { TMPDIR: base, ...extra }),
    mode: 'full',
    timeoutMs: 20_000,
    transcriptPath,
    ...request,
  });
  const transcript = await readFile(transcriptPath, 'utf8').catch(() => '');
  return { result, calls: await fakes.calls(), base, fakes, transcript };
}

describe('an agent run’s temp directory', () => {
  it('is its own, under the TMPDIR it was given, and is gone with what the agent left there when it ends', async () => {
    const { result, calls, base } = await runWithTemp([
      { writeTempFile: { name: 'native-lib.so', content: 'x'.repeat(4096) } },
      { line: 'done' },
    ]);
    expect(result.outcome).toBe('ok');
    const tmp = calls[0]!.env.TMPDIR!;
    expect(tmp.startsWith(join(base, ownTempPrefix('forge-agent-'))), tmp).toBe(true);
    // Set only where the env had them.
    expect(calls[0]!.env.TMP).toBeUndefined();
    expect(calls[0]!.env.TEMP).toBeUndefined();
    expect(await readdir(base)).toEqual([]);
  });

  it('is named by TMP and TEMP too, where the env sets them; each run gets a new one', async () => {
    const fakes = await setUpFakeAgents();
    const base = join(fakes.dir, 'tmp');
    await mkdir(base);
    const parsed = parseAgentSpec('my-agent', { allowCommand: true });
    if (!parsed.ok) throw new Error(parsed.reason);
    const runner = createCommandRunner(parsed.spec, { killGraceMs: 200 });
    const env = fakes.env([{ line: 'done' }], { TMPDIR: base, TMP: '/tmp', TEMP: '/tmp' });
    for (let i = 0; i < 2; i += 1)
      await runner.run({ prompt: 'x', cwd: fakes.work, env, mode: 'full', timeoutMs: 20_000 });
    const [first, second] = await fakes.calls();
    expect(first!.env.TMP).toBe(first!.env.TMPDIR);
    expect(first!.env.TEMP).toBe(first!.env.TMPDIR);
    expect(second!.env.TMPDIR).not.toBe(first!.env.TMPDIR);
    expect(await readdir(base)).toEqual([]);
  });

  it('replaced by the agent with a link elsewhere: the link goes, what it points at stays', async () => {
    const fakes = await setUpFakeAgents();
    const precious = join(fakes.dir, 'precious');
    await mkdir(precious);
    await writeFile(join(precious, 'work.txt'), 'keep me');
    const { result, base } = await runWithTemp([{ linkTemp: precious }, { line: 'done' }]);
    expect(result.outcome).toBe('ok');
    expect(await readdir(base)).toEqual([]);
    expect(await readFile(join(precious, 'work.txt'), 'utf8')).toBe('keep me');
  });

  it('is removed when the run times out and its process group is killed', async () => {
    const { result, base } = await runWithTemp(
      [{ writeTempFile: { name: 'scratch', content: 'half done' } }, { hang: true }],
      {},
      { timeoutMs: 800 },
    );
    expect(result.outcome).toBe('timeout');
    expect(await readdir(base)).toEqual([]);
  });

  it('is an absolute path when the TMPDIR given is relative (the agent works in another directory)', async () => {
    const fakes = await setUpFakeAgents();
    const base = join(fakes.dir, 'tmp');
    await mkdir(base);
    const parsed = parseAgentSpec('my-agent', { allowCommand: true });
    if (!parsed.ok) throw new Error(parsed.reason);
    const result = await createCommandRunner(parsed.spec).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ line: 'done' }], { TMPDIR: relative(process.cwd(), base) }),
      mode: 'full',
      timeoutMs: 20_000,
    });
    expect(result.outcome).toBe('ok');
    const tmp = (await fakes.calls())[0]!.env.TMPDIR!;
    expect(tmp.startsWith(join(base, ownTempPrefix('forge-agent-'))), tmp).toBe(true);
  });

  it('cannot be made under a TMPDIR that is missing: the run goes on with the env it was given, and the transcript says so', async () => {
    const fakes = await setUpFakeAgents();
    const missing = join(fakes.dir, 'no-such-dir');
    const { result, calls, transcript } = await runWithTemp([{ line: 'done' }], { TMPDIR: missing });
    expect(result.outcome).toBe('ok');
    expect(calls[0]!.env.TMPDIR).toBe(missing);
    expect(transcript).toMatch(/"forge":"temp".*no temp directory of its own under .*no-such-dir/);
  });

  it('a killed Forge’s leftovers go with the first run in that temp directory', async () => {
    const fakes = await setUpFakeAgents();
    const base = join(fakes.dir, 'tmp');
    const dead = `${tempPrefixFor('forge-agent-', deadPid())}a1B2c3`;
    await mkdir(join(base, dead), { recursive: true });
    await writeFile(join(base, dead, '.bcfd-00000000.so'), 'x'.repeat(4096));
    const parsed = parseAgentSpec('my-agent', { allowCommand: true });
    if (!parsed.ok) throw new Error(parsed.reason);
    const result = await createCommandRunner(parsed.spec, { killGraceMs: 200 }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ line: 'done' }], { TMPDIR: base }),
      mode: 'full',
      timeoutMs: 20_000,
    });
    expect(result.outcome).toBe('ok');
    expect(await readdir(base)).toEqual([]);
  });
});
