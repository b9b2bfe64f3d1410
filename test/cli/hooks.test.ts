// Hooks: which run for which end, what they are told, and that a slow or failing hook never stops Forge.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { hooksFor, runHooks } from '../../src/cli/hooks.js';
import type { RunSummary } from '../../src/loop/types.js';

const summary = (reason: RunSummary['reason']): RunSummary => ({
  reason,
  message: `ended: ${reason}`,
  beadsRun: 3,
  beadsClosed: 2,
  costUsd: 0.5,
  beadId: 'bd-e.2',
});

async function dir(): Promise<string> {
  const path = await mkdtemp(join(tmpdir(), 'forge-hooks-'));
  onTestFinished(() => rm(path, { recursive: true, force: true }));
  return path;
}

describe('hooksFor', () => {
  it.each([
    ['done', ['end']],
    ['terminal', ['end']],
    ['needs_human', ['needs_human', 'end']],
    ['failed', ['failure', 'end']],
    ['auth', ['failure', 'end']],
    ['stalled', ['failure', 'end']],
    ['refused', ['failure', 'end']],
    ['environment', ['failure', 'end']],
    ['interrupted', ['end']],
    ['dry_run', []],
  ] as const)('%s calls %j', (reason, events) => {
    expect(hooksFor(reason)).toEqual(events);
  });
});

describe('runHooks', () => {
  it('runs the hooks as argv with the epic, reason and exit code in FORGE_* variables', async () => {
    const cwd = await dir();
    const script = join(cwd, 'hook.mjs');
    await writeFile(
      script,
      `import { appendFileSync } from 'node:fs';
appendFileSync(process.argv[2], JSON.stringify({ hook: process.env.FORGE_HOOK, epic: process.env.FORGE_EPIC, reason: process.env.FORGE_REASON, code: process.env.FORGE_EXIT_CODE, bead: process.env.FORGE_BEAD, arg: process.argv[3] }) + '\\n');
`,
    );
    const out = join(cwd, 'out.jsonl');
    const ran = await runHooks({
      hooks: {
        on_end: [process.execPath, script, out, 'a b; $(rm -rf /)'],
        on_failure: [process.execPath, script, out, 'fail'],
      },
      summary: summary('failed'),
      epicId: 'bd-e',
      runId: 'r1',
      exitCode: 5,
      cwd,
      env: { PATH: process.env.PATH },
    });
    expect(ran.map((r) => [r.event, r.ok])).toEqual([
      ['failure', true],
      ['end', true],
    ]);
    const lines = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string>);
    expect(lines).toEqual([
      { hook: 'failure', epic: 'bd-e', reason: 'failed', code: '5', bead: 'bd-e.2', arg: 'fail' },
      // The argument arrives verbatim: no shell ever sees it.
      { hook: 'end', epic: 'bd-e', reason: 'failed', code: '5', bead: 'bd-e.2', arg: 'a b; $(rm -rf /)' },
    ]);
  });

  it('with no bead in the summary, leaves an inherited FORGE_BEAD as it was instead of unsetting it', async () => {
    const cwd = await dir();
    const out = join(cwd, 'bead.txt');
    const write = `require('node:fs').writeFileSync(process.argv[1], String(process.env.FORGE_BEAD))`;
    const { beadId: _dropped, ...noBead } = summary('done');
    await runHooks({
      hooks: { on_end: [process.execPath, '-e', write, out] },
      summary: noBead,
      epicId: 'bd-e',
      runId: 'r1',
      exitCode: 0,
      cwd,
      env: { PATH: process.env.PATH, FORGE_BEAD: 'bd-outer.1' },
    });
    expect(await readFile(out, 'utf8')).toBe('bd-outer.1');
  });

  it('reports a hook that fails, cannot start or runs too long, and never throws', async () => {
    const cwd = await dir();
    // The end hook sleeps past the test's timeout: only the hook timeout can end it in time.
    const ran = await runHooks({
      hooks: {
        on_needs_human: [process.execPath, '-e', 'process.stderr.write("no webhook\\n"); process.exit(3)'],
        on_end: [process.execPath, '-e', 'setTimeout(() => {}, 600000)'],
        // Long enough that the first hook's node has started and exited 3 on a loaded machine.
        timeout_seconds: 3,
      },
      summary: summary('needs_human'),
      epicId: 'bd-e',
      runId: 'r1',
      exitCode: 6,
      cwd,
      env: { PATH: process.env.PATH },
    });
    expect(ran).toEqual([
      expect.objectContaining({ event: 'needs_human', ok: false, problem: 'exited 3: no webhook' }),
      expect.objectContaining({ event: 'end', ok: false, problem: 'stopped after 3 s' }),
    ]);
    const missing = await runHooks({
      hooks: { on_end: ['/nonexistent/forge-hook'] },
      summary: summary('done'),
      epicId: 'bd-e',
      runId: 'r1',
      exitCode: 0,
      cwd,
      env: { PATH: process.env.PATH },
    });
    expect(missing[0]?.problem).toMatch(/^could not start/);
  });

  // Seen (fault injection): a hook that ignores SIGTERM and leaves a setsid child holding its output
  // kept ralph-loop from exiting for as long as the child lived. The child sleeps past the test's own
  // timeout: only the end of the hook's processes lets runHooks return in time.
  it('a hook past its timeout is ended with what it left holding its output', async () => {
    const cwd = await dir();
    const script = join(cwd, 'hook.sh');
    await writeFile(script, "trap '' TERM\nsetsid sleep 600 &\nsleep 600\n");
    const ran = await runHooks({
      hooks: { on_end: ['/bin/bash', script], timeout_seconds: 1 },
      summary: summary('done'),
      epicId: 'bd-e',
      runId: 'r1',
      exitCode: 0,
      cwd,
      env: { PATH: process.env.PATH },
    });
    expect(ran).toEqual([expect.objectContaining({ event: 'end', ok: false, problem: 'stopped after 1 s' })]);
  }, 30_000);
});
