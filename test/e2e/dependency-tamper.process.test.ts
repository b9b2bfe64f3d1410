// A doer that patches an installed dependency the metric loads: ignored by git, so no scope check or
// revert sees it. As a user runs a loop, with the built CLI, the scripted agent and the embedded store.
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../support/cli.js';
import {
  createValueLoop,
  oneDoerLoopRules,
  scriptedLoopRepo,
  type ScriptedLoopRepo,
} from '../support/loop-script.js';

// The metric scores src/value.txt through a package from node_modules.
const METRIC = `import { readFileSync } from 'node:fs';
import { adjust } from 'scorer';
console.log(JSON.stringify({ value: adjust(Number(readFileSync('src/value.txt', 'utf8').trim())) }));
`;
const SCORER = 'export const adjust = (v) => v;\n';

/** What the doer runs: node_modules removed and written again with the same bytes, as `npm ci` does. */
const REINSTALL = `const fs = require('node:fs');
const saved = ['package.json', 'index.js'].map((name) => [name, fs.readFileSync('node_modules/scorer/' + name)]);
fs.rmSync('node_modules', { recursive: true });
fs.mkdirSync('node_modules/scorer', { recursive: true });
for (const [name, bytes] of saved) fs.writeFileSync('node_modules/scorer/' + name, bytes);
`;

beforeAll(assertBuilt);

async function loopRepo(doerSteps: unknown[]): Promise<{ repo: ScriptedLoopRepo; epic: string }> {
  const repo = await scriptedLoopRepo(
    {
      '.gitignore': '.forge/\n.beads/\n.autoresearch/\nnode_modules/\n',
      'src/value.txt': '10\n',
      'metric/score.mjs': METRIC,
      'package.json': '{"type":"module"}\n',
      'node_modules/scorer/package.json': '{"name":"scorer","type":"module","exports":"./index.js"}\n',
      'node_modules/scorer/index.js': SCORER,
    },
    [],
    'forge-deps-',
  );
  await oneDoerLoopRules(repo, doerSteps);
  return { repo, epic: await createValueLoop(repo) };
}

type Line = {
  iter: number;
  decision: string;
  score_after: number | null;
  tamper?: { role: string; paths: string[] }[];
};

describe('a doer that changes the installed dependencies', () => {
  it('gets tamper, not the score it forged, and the loop waits for a reinstall', async () => {
    const { repo, epic } = await loopRepo([
      { write: 'src/value.txt', content: '5\n' },
      { write: 'node_modules/scorer/index.js', content: 'export const adjust = (v) => v * 10;\n' },
      { say: 'HYPOTHESIS: 5 is better' },
    ]);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/The doer changed installed dependencies \(node_modules\/scorer\/index\.js\)/);
    expect(run.stderr).toMatch(/Reinstall them/);
    const ledger = await repo.ledger<Line>();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'tamper', null],
    ]);
    expect(ledger[1]?.tamper).toEqual([
      {
        role: 'doer',
        paths: ['node_modules/scorer/index.js'],
        what: 'changed a file later agent or metric runs load',
      },
    ]);
    expect(await readFile(join(repo.dir, 'src', 'value.txt'), 'utf8')).toBe('10\n');

    // Run again as it is: refused again, nothing run.
    const again = await repo.ralph([epic, '--agent', 'scripted']);
    expect(again.exitCode, again.stderr).toBe(3);
    expect(again.stderr).toMatch(/changed installed dependencies/);
    expect((await repo.ledger<Line>()).length).toBe(2);

    // Reinstalled (the package written anew, as npm ci would): the loop goes on to its end.
    await writeFile(join(repo.dir, 'node_modules', 'scorer', 'index.js'), SCORER);
    const resumed = await repo.ralph([epic, '--agent', 'scripted']);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
  });

  it('may reinstall them as they were: the same bytes in new files are no change', async () => {
    const { repo, epic } = await loopRepo([
      { write: 'src/value.txt', content: '12\n' },
      { run: ['node', '-e', REINSTALL] },
      { say: 'HYPOTHESIS: 12 is better' },
    ]);
    const before = await stat(join(repo.dir, 'node_modules/scorer/index.js'));
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/installed dependencies|tamper/);
    expect((await stat(join(repo.dir, 'node_modules/scorer/index.js'))).ino).not.toBe(before.ino);
    const ledger = await repo.ledger<Line>();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 12],
    ]);
  });

  it('is no tamper when what it changes there is a tool’s cache: the caches it wrote are removed', async () => {
    const { repo, epic } = await loopRepo([
      { write: 'src/value.txt', content: '12\n' },
      { write: 'node_modules/.cache/tool/results.json', content: '{}\n' },
      { write: 'node_modules/.vite/vitest/results.json', content: '{}\n' },
      { say: 'HYPOTHESIS: 12 is better' },
    ]);
    const run = await repo.ralph([epic, '--agent', 'scripted']);
    expect(run.exitCode, run.stderr).toBe(0);
    const ledger = await repo.ledger<Line>();
    expect(ledger.map((l) => [l.iter, l.decision, l.score_after])).toEqual([
      [0, 'baseline', 10],
      [1, 'keep', 12],
    ]);
    // Each tool's cache apart: the package installed beside them is left as it was.
    expect(run.stderr).toMatch(
      /removed the caches the doer wrote to \(node_modules\/\.cache\/tool, node_modules\/\.vite\)/,
    );
    await expect(stat(join(repo.dir, 'node_modules/.cache/tool'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(repo.dir, 'node_modules/.vite'))).rejects.toThrow(/ENOENT/);
    expect(await readFile(join(repo.dir, 'node_modules/scorer/index.js'), 'utf8')).toBe(SCORER);
  });
});
