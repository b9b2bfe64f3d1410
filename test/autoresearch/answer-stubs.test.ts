// The answer probe's stubs (src/autoresearch/answer-stubs.ts), run as the metric would run them: a
// size-gated module answers as the real code does while a call is no larger than the smallest so far,
// and nothing at once for a larger one, noting that it left one unanswered; an answerless one answers
// nothing. Each notes that it was loaded.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  answerlessModule,
  callFloors,
  LOADED_MARK,
  realCodePath,
  SIZES_MARK,
  sizeGatedModule,
  SKIPPED_MARK,
} from '../../src/autoresearch/answer-stubs.js';

/** A checkout holding `files`, with `path` (of `files`) replaced by its size-gated stub. */
async function gatedTree(
  files: Record<string, string>,
  path: string,
  floors: Record<string, number> = {},
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-stubs-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const texts: Record<string, string> = { ...files, [realCodePath(path)]: files[path] ?? '' };
  texts[path] = sizeGatedModule(path, files[path] ?? '', floors) ?? '';
  for (const [name, text] of Object.entries(texts)) {
    await mkdir(dirname(join(dir, name)), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

async function mark(dir: string, name: string): Promise<string[]> {
  return (await readFile(join(dir, name), 'utf8').catch(() => '')).split('\n').filter(Boolean);
}

const SUM_JS = 'function work(n) { let s = 0; for (let i = 0; i < n; i++) s += i; return s; }\n';
const CALLS = '[10, 5, 100, 5, [1, 2, 3], { items: [1, 2, 3, 4, 5, 6] }]';

describe('a size-gated module', () => {
  it('answers a CommonJS function while no call is larger than the smallest before it', async () => {
    const dir = await gatedTree(
      {
        'src/work.js': `${SUM_JS}module.exports = work;\nmodule.exports.twice = (n) => 2 * work(n);\n`,
        'bench.js': `const work = require('./src/work.js');
console.log(JSON.stringify([10, 5, 100, 5].map((n) => work(n)).concat([work.twice(3), work.twice(4)])));
// A call left unanswered is noted when the process ends, not in the calls the metric may be timing.
if (require('node:fs').existsSync('${SKIPPED_MARK}')) process.exit(3);
`,
      },
      'src/work.js',
    );
    const out = execFileSync(process.execPath, ['bench.js'], { cwd: dir, encoding: 'utf8' });
    // 100 is larger than 5, the smallest so far; twice has a gate of its own (4 > 3).
    expect(JSON.parse(out)).toEqual([45, 10, null, 10, 6, null]);
    expect(await mark(dir, LOADED_MARK)).toEqual(['src/work.js']);
    expect(await mark(dir, SKIPPED_MARK)).toEqual(['src/work.js']);
  });

  it('sizes strings, arrays and an object’s values; passes classes and values of an ES module on', async () => {
    const dir = await gatedTree(
      {
        'src/lib.mjs': `export function size(x) { return JSON.stringify(x).length; }
export class Box { constructor(v) { this.v = v; } }
export const LIMIT = 7;
export default function first(list) { return list[0]; }
`,
        'bench.mjs': `import first, { size, Box, LIMIT } from './src/lib.mjs';
const answers = ${CALLS}.map((x) => size(x) ?? null);
console.log(JSON.stringify({ answers, box: new Box(3).v, LIMIT, first: [first([9]), first([1, 2]) ?? null] }));
`,
      },
      'src/lib.mjs',
    );
    const out = JSON.parse(execFileSync(process.execPath, ['bench.mjs'], { cwd: dir, encoding: 'utf8' }));
    // Sizes 10, 5, 100, 5, 3, 6: the 100 and the 6 (larger than 3 then) go unanswered.
    expect(out).toEqual({ answers: [2, 1, null, 1, 7, null], box: 3, LIMIT: 7, first: [9, null] });
    expect(await mark(dir, SKIPPED_MARK)).toEqual(['src/lib.mjs']);
  });

  it('answers a Python module’s functions the same way, imported from a package or by path', async () => {
    const dir = await gatedTree(
      {
        'pkg/__init__.py': '',
        'pkg/work.py': 'from .helpers import double\n\ndef work(n):\n    return double(sum(range(n)))\n',
        'pkg/helpers.py': 'def double(x):\n    return 2 * x\n',
        'bench.py': `import json
from pkg.work import work
print(json.dumps([work(10), work(5), work(100), work(5)]))
`,
      },
      'pkg/work.py',
    );
    const out = execFileSync('python3', ['-B', 'bench.py'], { cwd: dir, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([90, 20, null, 20]);
    expect(await mark(dir, LOADED_MARK)).toEqual(['pkg/work.py']);
    expect(await mark(dir, SKIPPED_MARK)).toEqual(['pkg/work.py']);
  });

  it('leaves nothing unanswered, and says so, when no call is larger than the first', async () => {
    const dir = await gatedTree(
      {
        'src/work.py': 'def work(n):\n    return sum(range(n))\n',
        'bench.py': `import json, sys
sys.path.insert(0, 'src')
import work
print(json.dumps([work.work(50) for _ in range(3)]))
`,
      },
      'src/work.py',
    );
    const out = execFileSync('python3', ['-B', 'bench.py'], { cwd: dir, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([1225, 1225, 1225]);
    expect(await mark(dir, SKIPPED_MARK)).toEqual([]);
  });
});

describe('the smallest calls the answerless round saw', () => {
  it('are noted by each stub, a function by its name, and bound the size-gated round', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-stubs-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const stubs = {
      'src/a.js': answerlessModule('src/a.js', 'module.exports = (n) => n;\n') ?? '',
      'src/b.mjs': answerlessModule('src/b.mjs', 'export function twice(s) { return s + s; }\n') ?? '',
      'src/c.py': answerlessModule('src/c.py', 'def work(n):\n    return n\n') ?? '',
    };
    for (const [name, text] of Object.entries(stubs)) {
      await mkdir(dirname(join(dir, name)), { recursive: true });
      await writeFile(join(dir, name), text);
    }
    await writeFile(
      join(dir, 'bench.mjs'),
      `import { existsSync } from 'node:fs';
import a from './src/a.js';
import { twice } from './src/b.mjs';
for (const n of [100, 10, 50, 5]) a(n);
a.part(7); a.part(3, 1);
twice('abcdef'); twice('ab');
// Nothing is written while the calls run (the metric may be timing them): only when the process ends.
if (existsSync('${SIZES_MARK}')) process.exit(3);
`,
    );
    execFileSync(process.execPath, ['bench.mjs'], { cwd: dir });
    execFileSync(
      'python3',
      [
        '-B',
        '-c',
        `import os, sys; sys.path.insert(0, "src"); import c; c.work(9); c.work(30); c.work([1, 2]); "src/c.py" in open("${SIZES_MARK}").read() and sys.exit(3)`,
      ],
      {
        cwd: dir,
      },
    );
    const floors = callFloors(await readFile(join(dir, SIZES_MARK), 'utf8'));
    expect(Object.fromEntries(floors)).toEqual({
      'src/a.js': { '': 5, part: 4 },
      'src/b.mjs': { twice: 2 },
      'src/c.py': { work: 2 },
    });
    // A line no stub wrote counts for nothing.
    expect(callFloors('not json\n["src/a.js", "x"]\n[1, 2, 3]\n')).toEqual(new Map());

    // The gated round answers no call larger than that floor, the first one included.
    const gated = await gatedTree(
      {
        'src/work.js': `${SUM_JS}module.exports = work;\n`,
        'bench.js':
          "const work = require('./src/work.js');\nconsole.log(JSON.stringify([100, 10, 5].map((n) => work(n) ?? null)));\n",
      },
      'src/work.js',
      { '': 10 },
    );
    const out = execFileSync(process.execPath, ['bench.js'], { cwd: gated, encoding: 'utf8' });
    expect(JSON.parse(out)).toEqual([null, 45, 10]);
  });
});

describe('an answerless module', () => {
  it('answers nothing, and notes that it was loaded', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-stubs-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    await mkdir(join(dir, 'src'));
    await writeFile(
      join(dir, 'src/work.js'),
      answerlessModule('src/work.js', `${SUM_JS}module.exports = work;\n`) ?? '',
    );
    const out = execFileSync(process.execPath, ['-p', "String(require('./src/work.js')(10))"], {
      cwd: dir,
      encoding: 'utf8',
    });
    expect(out.trim()).toBe('undefined');
    expect(await mark(dir, LOADED_MARK)).toEqual(['src/work.js']);
  });
});
