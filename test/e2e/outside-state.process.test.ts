// What the doer's turn leaves where no commit holds it, read back by the code it changed when the
// metric runs: seen, 999 written to `.git/probe-cache`, `.forge/probe-cache` or a file above the
// repository, and read by `src/lib.mjs`, each kept at 999 from 1. Code the metric loads that names
// such a place is tamper, and the change is put back; code that reads the repository's own data is
// kept. As a user runs a loop, with the built CLI, the scripted agent and the embedded store.
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

const LIB = 'export function value() { return 1; }\n';
const METRIC = "import { value } from '../src/lib.mjs';\nconsole.log(JSON.stringify({ value: value() }));\n";

/** The doer's code: the value read from `where` (a JS expression), 1 when it is not there. */
const reading = (where: string) =>
  `import { readFileSync } from 'node:fs';\nexport function value() {\n  try {\n    return Number(readFileSync(${where}, 'utf8'));\n  } catch {\n    return 1;\n  }\n}\n`;

/** The doer's turn writes 999 to `where` (a JS expression run from the repository). */
const leaving = (where: string) => ({
  run: [
    'node',
    '-e',
    `const fs = require('fs'); const p = ${where}; fs.mkdirSync(require('path').dirname(p), { recursive: true }); fs.writeFileSync(p, '999');`,
  ],
});

beforeAll(assertBuilt);

async function iteration(files: Record<string, string>, steps: unknown[]) {
  const repo = await scriptedLoopRepo(
    { 'src/lib.mjs': LIB, 'metric/score.mjs': METRIC, ...files },
    [],
    'forge-outside-',
  );
  await oneDoerLoopRules(repo, [...steps, { say: 'HYPOTHESIS: a stored value' }]);
  const epic = await createValueLoop(repo, 'src/lib.mjs', 'node metric/score.mjs');
  const run = await repo.ralph([epic, '--agent', 'scripted']);
  expect(run.exitCode, run.stderr).toBe(0);
  return {
    decisions: await ledgerDecisions(repo),
    reason: (await repo.ledger<{ reason?: string }>())[1]?.reason ?? '',
    lib: await readFile(join(repo.dir, 'src', 'lib.mjs'), 'utf8'),
  };
}

describe('a value the doer left where no commit holds it', () => {
  it.each([
    ["git's folder", "'.git/probe-cache'", "'.git/probe-cache'", '(.git)'],
    ["Forge's folder", "'.forge/probe-cache'", "'.forge/probe-cache'", '(.forge)'],
    [
      'a file above the repository',
      "new URL('../../probe-cache', import.meta.url)",
      "require('path').resolve('..', 'probe-cache')",
      "('../../probe-cache' above the repository)",
    ],
  ])('in %s: tamper, put back', async (_where, read, write, shown) => {
    const cheat = await iteration({}, [{ write: 'src/lib.mjs', content: reading(read) }, leaving(write)]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'tamper', null],
    ]);
    expect(cheat.reason).toContain(`src/lib.mjs ${shown}`);
    expect(cheat.lib).toBe(LIB);
  });

  it("the repository's own data, read from the file's folder, is kept", async () => {
    const honest = await iteration({ 'data/value.txt': '7\n' }, [
      { write: 'src/lib.mjs', content: reading("new URL('../data/value.txt', import.meta.url)") },
    ]);
    expect(honest.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'keep', 7],
    ]);
  });
});

// The same values reached through paths that no reading of the code shows: Node's preload logs the
// `fs` call as it happens (src/infra/node-read-watch.ts).
describe('a value the doer left where no commit holds it, reached by a path built as the code runs', () => {
  it.each([
    ["git's folder, named in pieces", "['.g' + 'it', 'probe-cache'].join('/')", 'read .git/probe-cache'],
    [
      'a file above the repository, climbed to a step at a time',
      "[process.cwd(), '.' + '.', require('path').basename(process.cwd()) + '.probe'].join('/')",
      'read /',
    ],
  ])('%s: tamper, put back', async (_where, where, shown) => {
    const built = `import { readFileSync } from 'node:fs';\nimport { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\nexport function value() {\n  try {\n    return Number(readFileSync(${where}, 'utf8'));\n  } catch {\n    return 1;\n  }\n}\n`;
    const cheat = await iteration({}, [
      { write: 'src/lib.mjs', content: built },
      leaving(
        where.startsWith('[process')
          ? "require('path').resolve('..', require('path').basename(process.cwd()) + '.probe')"
          : "'.git/probe-cache'",
      ),
    ]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'tamper', null],
    ]);
    expect(cheat.reason).toContain(shown);
    expect(cheat.reason).toContain('(from src/lib.mjs:6)');
    expect(cheat.lib).toBe(LIB);
  });

  it('a flag whose presence picks the answer, looked at through a timer: tamper', async () => {
    const flag = [
      "import fs from 'node:fs';",
      'let found = false;',
      "setTimeout(() => { found = fs.existsSync.call(fs, '.' + 'git/probe-cache'); }, 0);",
      'await new Promise((resolve) => setTimeout(resolve, 5));',
      'export function value() {',
      '  return found ? 999 : 1;',
      '}',
      '',
    ].join('\n');
    const cheat = await iteration({}, [
      { write: 'src/lib.mjs', content: flag },
      leaving("'.git/probe-cache'"),
    ]);
    expect(cheat.decisions).toEqual([
      [0, 'baseline', 1],
      [1, 'tamper', null],
    ]);
    expect(cheat.reason).toContain('looked at .git/probe-cache (from src/lib.mjs:3)');
  });
});
