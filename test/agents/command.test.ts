// The generic adapter: the user's own command, prompt on stdin, outcome by exit code.
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createCommandRunner } from '../../src/agents/command.js';
import { parseAgentSpec } from '../../src/agents/spec.js';
import type { AgentRequest } from '../../src/agents/types.js';
import { eventually, isGone, setUpFakeAgents } from '../support/fake-agents/harness.js';
import type { FakeAction } from '../support/fake-agents/harness.js';

async function runCommand(text: string, actions: FakeAction[], request: Partial<AgentRequest> = {}) {
  const fakes = await setUpFakeAgents();
  const parsed = parseAgentSpec(text, { allowCommand: true });
  if (!parsed.ok) throw new Error(parsed.reason);
  const result = await createCommandRunner(parsed.spec, { killGraceMs: 200 }).run({
    prompt: 'Do it; `rm -rf /` $HOME',
    cwd: fakes.work,
    env: fakes.env(actions),
    mode: 'full',
    timeoutMs: 20_000,
    ...request,
  });
  return { result, calls: await fakes.calls(), fakes };
}

describe('command adapter', () => {
  it('runs the argv as split, without a shell, with the prompt on stdin', async () => {
    const { result, calls } = await runCommand(
      `my-agent --flag "two words" '$HOME' '\`id\`'`,
      [{ line: 'working' }, { line: 'all done' }],
      {
        bead: { id: 'bd-1', title: 't', labels: [] },
        model: 'big',
      },
    );
    expect(calls[0]!.argv).toEqual(['--flag', 'two words', '$HOME', '`id`']);
    expect(calls[0]!.stdin).toBe('Do it; `rm -rf /` $HOME');
    expect(calls[0]!.env).toMatchObject({
      FORGE_AGENT_MODE: 'full',
      FORGE_AGENT_MODEL: 'big',
      FORGE_BEAD_ID: 'bd-1',
    });
    expect(result).toMatchObject({
      outcome: 'ok',
      exitCode: 0,
      finalText: 'working\nall done',
      agent: 'command',
      scripted: false,
    });
    expect(result.readOnly).toBeUndefined();
  });

  it('fails on a non-zero exit, quoting stderr', async () => {
    const { result } = await runCommand('my-agent', [{ stderr: 'no API key configured' }, { exit: 3 }]);
    expect(result).toMatchObject({ outcome: 'error', exitCode: 3 });
    expect(result.message).toBe('`my-agent` exited 3: no API key configured.');
  });

  it('says read-only cannot be enforced, and tells the command the mode', async () => {
    const { result, calls } = await runCommand('my-agent', [{ line: '{"score": 1}' }], { mode: 'read-only' });
    expect(result.outcome).toBe('ok');
    expect(result.readOnly).toEqual({ enforcement: 'none', attempts: [] });
    expect(result.message).toContain('read-only was not enforced');
    expect(calls[0]!.env.FORGE_AGENT_MODE).toBe('read-only');
  });

  it('keeps only the tail of a long output as final text', async () => {
    const long = 'x'.repeat(3000);
    const { result } = await runCommand(
      'my-agent',
      [1, 2, 3, 4, 5].map((n) => ({ line: `${n}${long}` })),
    );
    expect(result.finalText.length).toBeLessThanOrEqual(8000);
    expect(result.finalText.endsWith(`5${long}`)).toBe(true);
  });

  it('keeps the first 100 MiB of an agent that floods its output, then its end, and says how much it left out', async () => {
    const fakes = await setUpFakeAgents();
    const transcriptPath = join(fakes.dir, 'logs', 'bd-1.log');
    const { result } = await runCommand('my-agent', [{ flood: { mib: 104 } }], {
      transcriptPath,
      transcriptRoot: fakes.dir,
      timeoutMs: 120_000,
    });
    expect(result.outcome).toBe('ok');
    expect(result.finalText.endsWith('flood done')).toBe(true);
    const { size } = await stat(transcriptPath);
    expect(size).toBeGreaterThan(100 * 1024 * 1024);
    expect(size).toBeLessThan(102 * 1024 * 1024);
    const lines = (await readFile(transcriptPath, 'utf8')).trimEnd().split('\n');
    const notes = lines
      .filter((line) => line.startsWith('{"forge"'))
      .map((line) => JSON.parse(line) as { forge: string; lines?: number; reason?: string });
    const truncated = notes.filter((note) => note.forge === 'truncated');
    expect(truncated).toHaveLength(1);
    expect(truncated[0]!.reason).toMatch(
      /passed the 100 MiB a transcript keeps; the last \d+ line\(s\) follow/,
    );
    // Its end follows the note, before Forge's own last lines: the flood's last lines and the one after.
    const tail = lines
      .slice(lines.findIndex((line) => line.includes('"truncated"')) + 1)
      .filter((line) => !line.startsWith('{"forge"'));
    expect(tail.at(-1)).toBe('flood done');
    expect(tail.at(-2)!.slice(0, 8)).toBe(String(104 * 1024 - 1).padStart(8, '0'));
    expect(lines.at(-1)).toMatch(/^\{"forge":"end",/);
    // Every line is accounted for: kept, or counted in a note (left out past the bound, or dropped while
    // the disk lagged behind the flood).
    const kept = lines.filter((line) => !line.startsWith('{"forge"')).length;
    const counted = notes
      .filter((note) => note.forge === 'truncated' || note.forge === 'dropped')
      .reduce((sum, note) => sum + (note.lines ?? 0), 0);
    expect(kept + counted).toBe(104 * 1024 + 1);
  }, 180_000);

  it('times out and kills the whole group', async () => {
    const fakes = await setUpFakeAgents();
    const pidFile = join(fakes.dir, 'gc.pid');
    const parsed = parseAgentSpec('my-agent', { allowCommand: true });
    if (!parsed.ok) throw new Error(parsed.reason);
    const result = await createCommandRunner(parsed.spec, { killGraceMs: 200 }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ grandchild: pidFile }, { hang: true }]),
      mode: 'full',
      // The grandchild's pid is written before the timeout, however loaded the machine.
      timeoutMs: 5000,
    });
    expect(result.outcome).toBe('timeout');
    expect(await eventually(async () => isGone(Number(await readFile(pidFile, 'utf8'))))).toBe(true);
  });

  it('returns when the command exits even if it left a process holding stdout, and ends that process', async () => {
    const fakes = await setUpFakeAgents();
    const pidFile = join(fakes.dir, 'leftover.pid');
    const parsed = parseAgentSpec('my-agent', { allowCommand: true });
    if (!parsed.ok) throw new Error(parsed.reason);
    const result = await createCommandRunner(parsed.spec, { killGraceMs: 200 }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ grandchild: pidFile }, { line: 'finished' }, { exit: 0 }]),
      mode: 'full',
      timeoutMs: 20_000,
    });
    expect(result).toMatchObject({ outcome: 'ok', finalText: 'finished' });
    expect(await eventually(async () => isGone(Number(await readFile(pidFile, 'utf8'))))).toBe(true);
  });

  it('aborts', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const { result } = await runCommand('my-agent', [{ hang: true }], { signal: controller.signal });
    expect(result.outcome).toBe('aborted');
  });

  it('ends what the command started in a session of its own (setsid) when it is aborted', async () => {
    const fakes = await setUpFakeAgents();
    const pidFile = join(fakes.dir, 'escaped.pid');
    const parsed = parseAgentSpec('my-agent', { allowCommand: true });
    if (!parsed.ok) throw new Error(parsed.reason);
    const controller = new AbortController();
    const running = createCommandRunner(parsed.spec, { killGraceMs: 200 }).run({
      prompt: 'x',
      cwd: fakes.work,
      env: fakes.env([{ escape: pidFile }, { line: 'serving' }, { hang: true }]),
      mode: 'full',
      signal: controller.signal,
    });
    expect(await eventually(async () => (await readFile(pidFile, 'utf8').catch(() => '')) !== '')).toBe(true);
    controller.abort();
    const result = await running;
    const escaped = Number(await readFile(pidFile, 'utf8'));
    expect(result.outcome).toBe('aborted');
    expect(await isGone(escaped)).toBe(true);
  });

  it('reports a missing command as fatal', async () => {
    const { result } = await runCommand('no-such-agent --x', []);
    expect(result).toMatchObject({ outcome: 'error', fatal: true });
    expect(result.message).toContain('`no-such-agent` was not found');
  });
});
