// A doer whose code, loaded by the metric into its own process, rewrites what the metric measures or
// prints: the clock patched, the printed score rewritten. No file around the metric changes, so only
// the code says it. As a user runs a loop, with the built CLI, the scripted agent and the embedded store.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  ledgerDecisions,
  oneDoerLoopRules,
  scriptedLoopRepo,
} from '../support/loop-script.js';

/** Times the artifact's `work()`: the faster, the higher the score. */
const BENCH = `import { work } from '../src/lib.mjs';
const start = performance.now();
for (let i = 0; i < 20; i += 1) work();
console.log(JSON.stringify({ value: Math.round(100000 / (1 + performance.now() - start)) }));
`;
const LIB =
  'export function work() {\n  let s = 0;\n  for (let i = 0; i < 300000; i += 1) s += i % 7;\n  return s;\n}\n';
const CLOCK = `performance.now = () => 0;\n${LIB}`;
const PRINTED = `const log = console.log;\nconsole.log = (text) => log(String(text).replace(/\\d+/, '99999'));\n${LIB}`;
const FASTER = 'export function work() {\n  return 0;\n}\n';

beforeAll(assertBuilt);

async function benchIteration(code: string, extraArgs: string[] = []) {
  const repo = await scriptedLoopRepo({ 'src/lib.mjs': LIB, 'metric/bench.mjs': BENCH }, [], 'forge-reach-');
  await oneDoerLoopRules(repo, [
    { write: 'src/lib.mjs', content: code },
    { say: 'HYPOTHESIS: faster work()' },
  ]);
  const epic = await createValueLoop(repo, 'src/lib.mjs', 'node metric/bench.mjs', extraArgs);
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  const lines = await repo.ledger<{ decision: string; reason?: string }>();
  return { repo, decisions: await ledgerDecisions(repo), reason: lines[1]?.reason ?? '' };
}

describe('code that reaches into the process measuring it', () => {
  // Seen before this was read from the code: both kept, at 100000 and at 99999 (a baseline near 7000).
  it.each([
    ['patches the clock', CLOCK, 'performance.now ='],
    ['rewrites the score the metric prints', PRINTED, 'console.log ='],
  ])('%s: tamper, and the code is put back', async (_what, code, found) => {
    const { repo, decisions, reason } = await benchIteration(code);
    expect(decisions.map(([iter, decision]) => [iter, decision])).toEqual([
      [0, 'baseline'],
      [1, 'tamper'],
    ]);
    expect(reason).toContain(`src/lib.mjs (${found})`);
    expect(await readFile(join(repo.dir, 'src', 'lib.mjs'), 'utf8')).toBe(LIB);
  });

  it('a real speed-up is kept; a patch is kept where the loop allows it (--doer-may-patch-runtime)', async () => {
    const honest = await benchIteration(FASTER);
    expect(honest.decisions[1]?.[1]).toBe('keep');
    const allowed = await benchIteration(CLOCK, ['--doer-may-patch-runtime']);
    expect(allowed.decisions[1]).toEqual([1, 'keep', 100000]);
  });
});
