// Hooks as a user sets them up: argv in .forge/config.json, run by the built ralph-loop when a run ends
// or fails, with what happened in their environment; a broken hook never changes the run's exit code.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import { makeRepo } from '../support/runner-repo.js';

beforeAll(assertBuilt);

const HOOK = `import { appendFileSync } from 'node:fs';
const e = process.env;
appendFileSync(process.argv[2], JSON.stringify({ hook: e.FORGE_HOOK, epic: e.FORGE_EPIC, reason: e.FORGE_REASON, code: e.FORGE_EXIT_CODE, bead: e.FORGE_BEAD ?? null }) + '\\n');
`;

describe('hooks', () => {
  it('tells the end of every run, and a failure, with the epic, reason and exit code', async () => {
    const repo = await makeRepo();
    const hook = join(repo.dir, '..', 'hook.mjs');
    const out = join(repo.dir, '..', 'hooks.jsonl');
    await writeFile(hook, HOOK);
    await mkdir(join(repo.dir, '.forge'), { recursive: true });
    await writeFile(
      join(repo.dir, '.forge', 'config.json'),
      JSON.stringify({
        hooks: {
          on_end: [process.execPath, hook, out],
          on_failure: [process.execPath, hook, out],
          on_needs_human: [process.execPath, '-e', 'process.exit(1)'],
        },
      }),
    );
    const { epic, ids } = await repo.epic(['works', 'fails']);
    await repo.script({ [ids[0]!]: [[{ exit: 0 }]], [ids[1]!]: [[{ exit: 1 }]] });
    const run = await repo.ralph([epic, '--agent', repo.agent, '--max-attempts', '1', '--backoff', '0']);
    expect(run.exitCode, run.stderr).toBe(5);
    const told = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, string | null>);
    expect(told).toEqual([
      { hook: 'failure', epic, reason: 'failed', code: '5', bead: ids[1] },
      { hook: 'end', epic, reason: 'failed', code: '5', bead: ids[1] },
    ]);
  });

  it('a hook that fails is a warning on stderr, and the run exits as it would have', async () => {
    const repo = await makeRepo();
    await mkdir(join(repo.dir, '.forge'), { recursive: true });
    await writeFile(
      join(repo.dir, '.forge', 'config.json'),
      JSON.stringify({
        hooks: { on_end: [process.execPath, '-e', 'console.error("webhook down"); process.exit(7)'] },
      }),
    );
    const { epic } = await repo.epic(['works']);
    await repo.script({ '*': [[{ exit: 0 }]] });
    const run = await repo.ralph([epic, '--agent', repo.agent]);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toContain('warning: the end hook');
    expect(run.stderr).toContain('exited 7: webhook down');
  });
});
