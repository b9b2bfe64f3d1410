// The read watch in the exit watch's preload (src/infra/node-read-watch.ts), run for real: a Node
// process started with the watch's env and the trees logs each `fs` read, listing or test of a path
// in git's, Forge's or br's folder or outside the trees, however the code imported `fs`; the tree's
// own files and the run's temp directory are not logged; the log cannot be rewritten; `fs` still
// behaves as it did.
import { spawnSync } from 'node:child_process';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExitWatch } from '../../src/infra/exit-watch.js';
import { loggedPaths, loggedReads, startedWatch } from '../support/run-watch.js';
import { tempTree } from '../support/temp-tree.js';

const watch = () => startedWatch('forge-nreadw-');
const logged = loggedReads;

async function node(exits: ExitWatch, repo: string, file: string, roots: string[] = [repo]) {
  const temp = await tempTree({}, 'forge-nreadw-run-');
  const { NODE_OPTIONS: _user, ...rest } = process.env;
  return spawnSync(process.execPath, [file], {
    cwd: repo,
    env: exits.env({ ...rest, TMPDIR: temp }, [], roots),
    encoding: 'utf8',
  });
}

/** `argv` run by node in `repo`, watched as a loop's run with `metric/` as the metric's own folder. */
async function measured(exits: ExitWatch, repo: string, argv: string[]) {
  const temp = await tempTree({}, 'forge-nreadw-run-');
  const { NODE_OPTIONS: _user, ...rest } = process.env;
  return spawnSync(process.execPath, argv, {
    cwd: repo,
    env: exits.env({ ...rest, TMPDIR: temp }, [], [repo], [join(repo, 'metric')]),
    encoding: 'utf8',
  });
}

describe("the Node preload's read watch", () => {
  it("logs git's folder reached by ES imports, require and promises, with the line that reached it", async () => {
    const exits = await watch();
    const repo = await tempTree({
      '.git/probe': '9',
      '.forge/flag': '',
      'lib.cjs': "const fs = require('fs');\nmodule.exports = () => fs.readdirSync('.be' + 'ads');\n",
      '.beads/x': '',
      'main.mjs': [
        "import { readFileSync, existsSync, promises } from 'node:fs';",
        "import { createRequire } from 'node:module';",
        "const a = readFileSync(['.g' + 'it', 'probe'].join('/'), 'utf8');",
        "const b = existsSync('.fo' + 'rge/flag');",
        "const c = await promises.readFile(new URL('.g' + 'it/probe', import.meta.url), 'utf8');",
        "const d = createRequire(import.meta.url)('./lib.cjs')();",
        "console.log(a, b, c, d.join(','), readFileSync('lib.cjs', 'utf8').length > 0);",
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.mjs');
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('9 true 9 x true\n');
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0]])).toEqual([
      ['readFileSync', join(repo, '.git', 'probe'), 'state', `${join(repo, 'main.mjs')}:3`],
      ['existsSync', join(repo, '.forge', 'flag'), 'state', `${join(repo, 'main.mjs')}:4`],
      ['readFile', join(repo, '.git', 'probe'), 'state', `${join(repo, 'main.mjs')}:5`],
      ['readdirSync', join(repo, '.beads'), 'state', `${join(repo, 'lib.cjs')}:2`],
    ]);
  });

  it("logs each read of a file in the metric's own folders, whoever reads it and by whatever path; not its name or size", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/input.txt': 'in',
      'src/solve.cjs': [
        "const fs = require('fs'), os = require('os'), path = require('path');",
        "const dir = path.join(__dirname, '..', 'met' + 'ric');",
        'for (const name of fs.readdirSync(dir)) fs.statSync(path.join(dir, name));',
        "const cases = fs.readFileSync(path.join(dir, 'cases.json'), 'utf8');",
        "const link = path.join(os.tmpdir(), 'c');",
        "fs.symlinkSync(path.join(dir, 'cases.json'), link);",
        "fs.readFileSync(link); fs.readFileSync(process.argv[2]); fs.existsSync(path.join(dir, 'cases.json'));",
        "fs.promises.readFile(path.join(dir, 'cases.json')).then(() => console.log(cases));",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/solve.cjs', 'metric/input.txt']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('[["a", "b"]]\n');
    const cases = join(repo, 'metric', 'cases.json');
    const solve = join(repo, 'src', 'solve.cjs');
    const records = await loggedPaths(exits);
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0], r.handed ?? false])).toEqual([
      ['readFileSync', cases, 'key', `${solve}:4`, false],
      ['readFileSync', cases, 'key', `${solve}:7`, false],
      // Named on the command line: the metric handed it.
      ['readFileSync', join(repo, 'metric', 'input.txt'), 'key', `${solve}:7`, true],
      ['readFile', cases, 'key', `${solve}:8`, false],
    ]);
  });

  it("logs the metric's files read by a process the doer's code started, or named on its command line, as the doer's", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/score.cjs': [
        "const { execFileSync } = require('child_process');",
        "execFileSync(process.execPath, ['-e', \"require('fs').readFileSync('metric/cases.json')\"]);",
        "require('../src/solve.cjs');",
        '',
      ].join('\n'),
      'src/solve.cjs': [
        "const { execFileSync, execSync, spawn } = require('child_process');",
        "const inline = \"require('fs').readFileSync('metric/' + 'cases.json')\";",
        "execFileSync(process.execPath, ['-e', inline], { env: { PATH: process.env.PATH, ...process.env } });",
        "execSync('cat ' + 'met' + 'ric/cases.json');",
        "execFileSync('python3', ['-c', \"open('metric/' + 'cases.json').read()\"]);",
        "spawn('cat', ['metric'], { stdio: 'ignore' }).on('exit', () => execFileSync(process.execPath, ['-e', '0']));",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.cjs']);
    expect(ran.stderr).toBe('');
    const solve = (line: number) => `${join(repo, 'src', 'solve.cjs')}:${line}`;
    const records = await logged(exits);
    // Each with the doer's frame that started it, if any (the child's own frames have no file).
    const doers = (frames: string[]) => frames.find((frame) => frame.includes('/src/')) ?? null;
    expect(records.map((r) => [r.event, relative(repo, r.path), doers(r.frames)])).toEqual([
      // The metric's own script and child, which reads its cases: the metric's reads, no stack.
      ['readFileSync', 'metric/score.cjs', null],
      ['readFileSync', 'metric/cases.json', null],
      // The folder named in the child's code (`'metric/' + …`); then the child's read.
      ['spawn', 'metric', solve(3)],
      ['readFileSync', 'metric/cases.json', solve(3)],
      ['spawn', 'metric/cases.json', solve(4)],
      ['spawn', 'metric', solve(5)],
      ['open', 'metric/cases.json', solve(5)],
      ['spawn', 'metric', solve(6)],
    ]);
  });

  it('watches a child started with an environment of its own, or with the watch moved, as any other', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/score.cjs':
        "require('fs').readFileSync(__dirname + '/cases.json');\nrequire('../src/solve.cjs');\n",
      'src/solve.cjs': [
        "const { execFileSync } = require('child_process');",
        "const read = \"require('fs').readFileSync('met' + 'ric/cases.json')\";",
        "execFileSync(process.execPath, ['-e', read], { env: { PATH: process.env.PATH } });",
        "const moved = { ...process.env, ['FORGE_' + 'READ_LOG']: require('os').tmpdir() + '/log', NODE_OPTIONS: '' };",
        "execFileSync(process.execPath, ['-e', read], { env: moved });",
        "execFileSync('python3', ['-c', \"open('met' + 'ric/cases.json').read()\"], { env: {} });",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.cjs']);
    expect(ran.stderr).toBe('');
    const solve = (line: number) => `${join(repo, 'src', 'solve.cjs')}:${line}`;
    expect(
      (await logged(exits)).map((r) => [r.event, relative(repo, r.path), r.frames.at(-1) ?? null]),
    ).toEqual([
      ['readFileSync', 'metric/score.cjs', null],
      ['readFileSync', 'metric/cases.json', null],
      ['readFileSync', 'metric/cases.json', solve(3)],
      ['readFileSync', 'metric/cases.json', solve(5)],
      ['open', 'metric/cases.json', solve(6)],
    ]);
  });

  it("leaves a child that another watch's preload watches to that watch (Forge run under Forge)", async () => {
    const exits = await watch();
    const inner = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[]',
      'src/run.cjs': [
        "const { execFileSync } = require('child_process');",
        "execFileSync(process.execPath, ['-e', \"require('fs').readFileSync('.git/x')\"], { env: JSON.parse(process.argv[2]) });",
        '',
      ].join('\n'),
      '.git/x': '',
    });
    const { NODE_OPTIONS: _user, ...rest } = process.env;
    const innerEnv = inner.env(rest, [], [repo]);
    const ran = await measured(exits, repo, ['src/run.cjs', JSON.stringify(innerEnv)]);
    expect(ran.stderr).toBe('');
    expect(await loggedPaths(exits)).toEqual([]);
    expect((await logged(inner)).map((r) => [r.event, relative(repo, r.path)])).toEqual([
      ['readFileSync', '.git/x'],
    ]);
  });

  it("logs the metric's own reads of its files once a file, with no stack, however many", async () => {
    const exits = await watch();
    const fixtures = Object.fromEntries(
      Array.from({ length: 2_100 }, (_, n) => [`metric/fixtures/${n}.txt`, `${n}`]),
    );
    const repo = await tempTree({
      ...fixtures,
      'metric/score.cjs': [
        "const fs = require('fs'), path = require('path');",
        "const dir = path.join(__dirname, 'fixtures');",
        'for (const name of fs.readdirSync(dir)) fs.readFileSync(path.join(dir, name));',
        "fs.readFileSync(path.join(dir, '0.txt'));",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.cjs']);
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    // 2,000 files at most, each once, and no stack: a doer's read of one is what needs the stack.
    expect(records).toHaveLength(2_000);
    expect(new Set(records.map((r) => r.path)).size).toBe(2_000);
    expect(records.every((r) => r.kind === 'key' && r.frames.length === 0)).toBe(true);
  });

  it("logs the metric's files read past fs through its binding, with the line that read them", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'src/solve.cjs': [
        "const raw = process.binding('fs'), path = require('path');",
        "const cases = path.join(__dirname, '..', 'met' + 'ric', 'cases.json');",
        'raw.readFileUtf8(cases, 0);',
        'raw.close(raw.open(cases, 0, 0));',
        "raw.readdir(path.dirname(cases), 'utf8', false);",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/solve.cjs']);
    expect(ran.stderr).toBe('');
    const cases = join(repo, 'metric', 'cases.json');
    const solve = (line: number) => `${join(repo, 'src', 'solve.cjs')}:${line}`;
    // (A listing of the metric's folder says nothing of its answers: not logged.)
    expect((await logged(exits)).map((r) => [r.event, r.path, r.kind, r.frames[0]])).toEqual([
      ['readFile', cases, 'key', solve(3)],
      ['open', cases, 'key', solve(4)],
    ]);
  });

  it("leaves Node's own calls of the binding, with no file on their stack (node --test's walk for tests)", async () => {
    const exits = await watch();
    const repo = await tempTree({
      '.git/HEAD': 'ref: refs/heads/main\n',
      '.git/refs/heads/main': '',
      'test/a.test.mjs': "import { test } from 'node:test';\ntest('adds', () => {});\n",
    });
    const ran = await measured(exits, repo, ['--test', '--test-reporter=tap']);
    expect(ran.stdout).toContain('# pass 1');
    expect((await logged(exits)).filter((r) => r.kind !== 'key')).toEqual([]);
  });

  it("says a program of the doer's read the metric's files, whatever in it read them", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/more.json': '[]',
      // The metric reads its cases, then runs the doer's program as a command of its own.
      'metric/score.cjs': [
        "const fs = require('fs'), { execFileSync } = require('child_process');",
        "fs.readFileSync(__dirname + '/cases.json');",
        "execFileSync(process.execPath, ['src/cli.mjs'], { stdio: 'inherit' });",
        '',
      ].join('\n'),
      // Node's module loader reads one (an import of a path it made), a timer the other: no line of
      // the program is on either stack.
      'src/cli.mjs': [
        "import { readFileSync } from 'node:fs';",
        "const dir = new URL('../' + 'met' + 'ric/', import.meta.url);",
        "const one = await import(new URL('cases.json', dir), { with: { type: 'json' } });",
        "setTimeout(readFileSync, 0, new URL('more.json', dir));",
        'console.log(one.default.length);',
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.cjs']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('1\n');
    const cli = `${join(repo, 'src', 'cli.mjs')}:0`;
    expect((await logged(exits)).map((r) => [r.event, relative(repo, r.path), r.frames])).toEqual([
      ['readFileSync', 'metric/score.cjs', []],
      ['readFileSync', 'metric/cases.json', []],
      ['readFile', 'metric/cases.json', [cli]],
      ['readFileSync', 'metric/more.json', [cli]],
    ]);
  });

  it("logs a read no file calls (a timer, a worker's eval) as no one's; the module loader's as the metric's", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/more.json': '[]',
      'metric/score.mjs': [
        "import cases from './cases.json' with { type: 'json' };",
        "import { createRequire } from 'node:module';",
        "createRequire(import.meta.url)('../src/solve.cjs');",
        '',
      ].join('\n'),
      'src/solve.cjs': [
        "const fs = require('fs'), path = require('path'), { Worker } = require('worker_threads');",
        "const dir = path.join(__dirname, '..', 'met' + 'ric');",
        "setImmediate(fs.readFileSync, path.join(dir, 'cases.json'));",
        "new Worker(`require('fs').readFileSync(${JSON.stringify(path.join(dir, 'more.json'))})`, { eval: true });",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.mjs']);
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    expect(records.map((r) => [relative(repo, r.path), r.frames, r.orphan ?? false]).sort()).toEqual([
      ['metric/cases.json', [], false],
      ['metric/cases.json', [], true],
      ['metric/more.json', [], true],
      ['metric/score.mjs', [], false],
    ]);
  });

  it('logs a look at what tells the code who runs it: its command line, another process, the list of them, what it has spent; not its limits', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/who.cjs': [
        "const fs = require('fs');",
        "fs.readFileSync('/proc/self/cmdline');",
        'fs.readFileSync(`/proc/${process.ppid}/cmdline`);',
        "fs.readdirSync('/proc');",
        "fs.readFileSync('/proc/self/limits'); fs.readFileSync('/proc/self/cgroup'); fs.readFileSync('/proc/cpuinfo');",
        "setImmediate(fs.readFileSync, '/proc/thread-self/environ');",
        "fs.readFileSync(['', 'proc', 'self', 'st' + 'atus'].join('/')); fs.readdirSync('/proc/self/task');",
        "fs.readFileSync('/proc/thread-self/stat');",
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'src/who.cjs');
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    const self = (rest: string) => `/proc/${records[0]?.pid}${rest}`;
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0], r.orphan ?? false])).toEqual([
      ['readFileSync', self('/cmdline'), 'who', `${join(repo, 'src/who.cjs')}:2`, false],
      [
        'readFileSync',
        expect.stringMatching(/^\/proc\/\d+\/cmdline$/),
        'who',
        `${join(repo, 'src/who.cjs')}:3`,
        false,
      ],
      ['readdirSync', '/proc', 'who', `${join(repo, 'src/who.cjs')}:4`, false],
      // Its memory and CPU time (a test runner's imports are in them), and its threads.
      ['readFileSync', self('/status'), 'who', `${join(repo, 'src/who.cjs')}:7`, false],
      ['readdirSync', self('/task'), 'who', `${join(repo, 'src/who.cjs')}:7`, false],
      [
        'readFileSync',
        expect.stringMatching(/^\/proc\/\d+\/task\/\d+\/stat$/),
        'who',
        `${join(repo, 'src/who.cjs')}:8`,
        false,
      ],
      ['readFileSync', expect.stringMatching(/^\/proc\/\d+\/task\/\d+\/environ$/), 'who', undefined, true],
    ]);
    expect(records[1]?.path).not.toBe(self('/cmdline'));
  });

  it("logs an error's stack read by a line of the scope, by whatever name; not Node's own reading, nor a line out of the scope", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/who.cjs': [
        "const util = require('util');",
        "const a = new Error('x')['st' + 'ack'];",
        "const b = Reflect.get(new Error('y'), 'stack');",
        "const c = util.inspect(new Error('z'));",
        "module.exports = () => new Error('w');",
        '',
      ].join('\n'),
      'tools/read.cjs': "require('../src/who.cjs')().stack;\n",
    });
    const ran = await node(exits, repo, 'tools/read.cjs');
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0]])).toEqual([
      ['stack', '', 'who', `${join(repo, 'src/who.cjs')}:2`],
      ['stack', '', 'who', `${join(repo, 'src/who.cjs')}:3`],
      ['stack', '', 'who', `${join(repo, 'tools/read.cjs')}:1`],
    ]);
    // Each with the process's main script: a program of the doer's reads only its own stack.
    expect(new Set(records.map((r) => r.entry))).toEqual(new Set([join(repo, 'tools/read.cjs')]));
  });

  it("logs its process's command line read by a line of the scope, by whatever route (Node's own parser too); not Node's own reading for its ends", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/who.cjs': [
        'const a = process.argv;',
        "const b = Reflect.get(globalThis['pro' + 'cess'], 'ar' + 'gv');",
        'const { execArgv } = process;',
        "const c = require('util').inspect(process);",
        // What Node's own code reads to hand back: the line that asked it is the reader.
        "const d = require('util')['parse' + 'Args']({ strict: false, allowPositionals: true }).positionals;",
        // The modules loaded so far (a test runner's among them).
        "const e = Reflect.get(process, 'module' + 'LoadList').length;",
        'module.exports = () => process.argv.slice(2);',
        '',
      ].join('\n'),
      // The metric's script, which may read its own command line, requires it.
      'metric/run.cjs':
        "console.log(require('../src/who.cjs')(), process.argv.length, Object.getOwnPropertyDescriptor(process, 'argv').enumerable);\n",
      // A program of the doer's reads its own command line (its input): logged with it as the entry.
      'src/cli.cjs': 'console.log(process.argv.slice(2));\n',
    });
    const program = await watch();
    expect((await measured(program, repo, ['src/cli.cjs'])).stdout).toBe('[]\n');
    expect((await logged(program)).map((r) => [r.event, r.frames[0], r.entry])).toEqual([
      ['process.argv', `${join(repo, 'src/cli.cjs')}:1`, join(repo, 'src/cli.cjs')],
    ]);
    const ran = await measured(exits, repo, ['metric/run.cjs']);
    expect(ran.stderr).toBe('');
    // The value as it was, to whatever code reads it.
    expect(ran.stdout).toBe('[] 2 true\n');
    // (The metric reading its own script is logged too: a file of its folder.)
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0]])).toEqual([
      ['process.argv', '', 'who', `${join(repo, 'src/who.cjs')}:1`],
      ['process.argv', '', 'who', `${join(repo, 'src/who.cjs')}:2`],
      ['process.execArgv', '', 'who', `${join(repo, 'src/who.cjs')}:3`],
      // (The parser asks which of the two its arguments are in.)
      ['process.execArgv through util.parseArgs', '', 'who', `${join(repo, 'src/who.cjs')}:5`],
      ['process.argv through util.parseArgs', '', 'who', `${join(repo, 'src/who.cjs')}:5`],
      ['process.moduleLoadList', '', 'who', `${join(repo, 'src/who.cjs')}:6`],
      ['process.argv', '', 'who', `${join(repo, 'src/who.cjs')}:7`],
    ]);
    expect(new Set(records.map((r) => r.entry))).toEqual(new Set([join(repo, 'metric/run.cjs')]));
  });

  it("logs a test runner's variable asked of its environment by a line of the scope, however it reached it, set or not; not a copy of the whole environment", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/env.cjs': [
        "const env = require('node:module').createRequire(__filename)('pro' + 'cess').env;",
        "const a = env['NODE_TEST_' + 'CONTEXT'];",
        "const b = ('PYTEST_' + 'CURRENT_TEST') in env;",
        "const c = Object.hasOwn(env, 'FORGE_' + 'EXIT_PARENT');",
        'const d = { ...process.env };',
        'const e = Object.entries(process.env);',
        'const f = Object.assign({}, process.env);',
        "require('node:child_process').execFileSync('true', { env: process.env });",
        "const g = process.env['HO' + 'ME'];",
        "process.env.WORK_MODE = 'fast';",
        // A name already there is set as ever (npm sets HOME).
        "process.env.HOME = '/elsewhere';",
        "console.log(a, b, c, 'FORGE_READ_LOG' in d, e.length === Object.keys(f).length, process.env.WORK_MODE, typeof g, process.env.HOME);",
        '',
      ].join('\n'),
      'metric/run.cjs': "require('../src/env.cjs');\n",
    });
    const ran = await measured(exits, repo, ['metric/run.cjs']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('undefined false true true true fast string /elsewhere\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/env.cjs')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ['process.env.NODE_TEST_CONTEXT', '', at(2)],
      ['process.env.PYTEST_CURRENT_TEST', '', at(3)],
      ['process.env.FORGE_EXIT_PARENT', '', at(4)],
    ]);
  });

  it('logs what the process has spent so far and its asynchronous context, asked by a line of the scope however it reached them; not its limits', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/spend.cjs': [
        "const p = require('node:module').createRequire(__filename)('pro' + 'cess');",
        "const heap = p['memory' + 'Usage']().heapUsed;",
        "const rss = Reflect.get(p.memoryUsage, 'rss')();",
        'const used = p.resourceUsage().maxRSS; const cpu = p.cpuUsage(); const up = p.uptime();',
        'const limit = p.constrainedMemory(); const total = require("node:os").totalmem();',
        "const id = require('async' + '_hooks')['execution' + 'AsyncId']();",
        'console.log(heap > 0, rss > 0, used > 0, typeof cpu.user, up > 0, typeof limit, total > 0, p.memoryUsage.name);',
        '',
      ].join('\n'),
      'metric/run.cjs': "const up = process.uptime();\nrequire('../src/spend.cjs');\n",
    });
    const ran = await measured(exits, repo, ['metric/run.cjs']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('true true true number true number true memoryUsage\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/spend.cjs')}:${line}`;
    // The metric's own ask (metric/run.cjs:1) is not the code's.
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ['process.memoryUsage()', '', at(2)],
      ['process.memoryUsage.rss()', '', at(3)],
      ['process.resourceUsage()', '', at(4)],
      ['process.cpuUsage()', '', at(4)],
      ['process.uptime()', '', at(4)],
      ['async_hooks.executionAsyncId()', '', at(6)],
    ]);
  });

  it('formats every stack as Node does: its own errors with their code, a stack with no frames, an object given one', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'stacks.cjs': [
        'const out = [];',
        'const stack = (f) => { try { f(); } catch (e) { out.push(e.stack); } };',
        "stack(() => new URL('not a url'));",
        'stack(() => Buffer.alloc(-1));',
        "stack(() => { throw new TypeError('plain'); });",
        "stack(() => { class Mine extends Error { constructor() { super('mine'); this.name = 'Mine'; this.code = 'ERR_MINE'; } } throw new Mine(); });",
        "stack(() => { const limit = Error.stackTraceLimit; Error.stackTraceLimit = 0; const e = new Error('bare'); Error.stackTraceLimit = limit; throw e; });",
        "const holder = { name: 'Holder', message: 'held' }; Error.captureStackTrace(holder); out.push(holder.stack);",
        'console.log(JSON.stringify(out));',
        '',
      ].join('\n'),
    });
    const watched = await node(exits, repo, 'stacks.cjs');
    const { NODE_OPTIONS: _user, ...rest } = process.env;
    const plain = spawnSync(process.execPath, ['stacks.cjs'], { cwd: repo, env: rest, encoding: 'utf8' });
    expect(watched.stderr).toBe('');
    expect(JSON.parse(watched.stdout)).toHaveLength(6);
    expect(watched.stdout).toBe(plain.stdout);
    expect(watched.stdout).toContain('RangeError [ERR_OUT_OF_RANGE]');
  });

  it('reads a path given as `--flag=path`, or in a folder named on the command line, as handed', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/in.txt': 'in',
      'metric/fixtures/a.md': '# a',
      'metric/cases.json': '[]',
      'src/cli.cjs': [
        "const fs = require('fs'), path = require('path');",
        "fs.readFileSync(process.argv[2].split('=')[1]);",
        "fs.readFileSync(path.join(process.argv[3], 'a.md'));",
        "fs.readFileSync(path.join(process.argv[3], '..', 'cases.json'));",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/cli.cjs', '--input=metric/in.txt', 'metric/fixtures']);
    expect(ran.stderr).toBe('');
    expect((await loggedPaths(exits)).map((r) => [relative(repo, r.path), r.handed ?? false])).toEqual([
      ['metric/in.txt', true],
      ['metric/fixtures/a.md', true],
      ['metric/cases.json', false],
    ]);
  });

  it('logs a file outside the trees, a module required from there; not the run temp directory', async () => {
    const exits = await watch();
    const elsewhere = await tempTree(
      { 'plant.txt': '5', 'planted.cjs': 'module.exports = 5;\n' },
      'forge-nreadw-out-',
    );
    const repo = await tempTree({
      'main.cjs': [
        "const fs = require('fs'), os = require('os'), path = require('path');",
        "fs.writeFileSync(path.join(os.tmpdir(), 'own'), '1'); fs.readFileSync(path.join(os.tmpdir(), 'own'));",
        `fs.statSync(${JSON.stringify(join(elsewhere, 'plant.txt'))}).size;`,
        `require(${JSON.stringify(join(elsewhere, 'planted.cjs'))});`,
        "fs.readFileSync('/dev/null');",
        `fs.createReadStream(${JSON.stringify(join(elsewhere, 'plant.txt'))}).on('data', () => {});`,
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.cjs');
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind])).toEqual([
      ['statSync', join(elsewhere, 'plant.txt'), 'outside'],
      // require resolves the module's real path, then reads it: two calls, both from main.cjs:4.
      ['realpathSync', join(elsewhere, 'planted.cjs'), 'outside'],
      ['readFileSync', join(elsewhere, 'planted.cjs'), 'outside'],
      // Once: the stream's own open, later, is fs's and not logged again as a read no code made.
      ['createReadStream', join(elsewhere, 'plant.txt'), 'outside'],
    ]);
    expect(records[1]?.frames).toContain(`${join(repo, 'main.cjs')}:4`);
    expect(records[2]?.frames).toContain(`${join(repo, 'main.cjs')}:4`);
  });

  it('logs a file outside the trees reached through /proc/self/root or /proc/self/cwd', async () => {
    // Red team: ../flag read as '/proc/self/root' + its path passed for a read of /proc.
    const exits = await watch();
    const elsewhere = await tempTree({ flag: 'on' }, 'forge-nreadw-proc-');
    const repo = await tempTree({
      'main.cjs': [
        "const fs = require('fs'), path = require('path');",
        `fs.readFileSync('/proc/self/root' + ${JSON.stringify(join(elsewhere, 'flag'))});`,
        `fs.existsSync('/proc/thread-self/root' + ${JSON.stringify(join(elsewhere, 'flag'))});`,
        `fs.readFileSync('/proc/self/cwd/' + path.relative(process.cwd(), ${JSON.stringify(join(elsewhere, 'flag'))}));`,
        "fs.readFileSync('/proc/self/limits');",
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.cjs');
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind])).toEqual([
      ['readFileSync', join(elsewhere, 'flag'), 'outside'],
      ['existsSync', join(elsewhere, 'flag'), 'outside'],
      ['readFileSync', join(elsewhere, 'flag'), 'outside'],
    ]);
  });

  it('logs a path outside the trees that code only resolves, or asks the file system of', async () => {
    // Red team: a doer-left ../flag tested with fs.realpathSync passed unseen; its other forms say as much.
    const exits = await watch();
    const elsewhere = await tempTree({ flag: 'on' }, 'forge-nreadw-real-');
    const flag = JSON.stringify(join(elsewhere, 'flag'));
    const repo = await tempTree({
      'main.cjs': [
        "const fs = require('fs');",
        `fs.realpathSync(${flag});`,
        `fs.realpathSync.native(${flag});`,
        `fs.statfsSync(${flag});`,
        `fs.watch(${flag}).close();`,
        `fs.realpath.native(${flag}, () => fs.promises.realpath(${flag}).then(() => console.log(typeof fs.realpathSync.native)));`,
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.cjs');
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('function\n');
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind])).toEqual([
      ['realpathSync', join(elsewhere, 'flag'), 'outside'],
      ['realpathSync.native', join(elsewhere, 'flag'), 'outside'],
      ['statfsSync', join(elsewhere, 'flag'), 'outside'],
      ['watch', join(elsewhere, 'flag'), 'outside'],
      ['realpath.native', join(elsewhere, 'flag'), 'outside'],
      ['realpath', join(elsewhere, 'flag'), 'outside'],
    ]);
  });

  it('refuses the watched code a write to its own log, and leaves fs working as it did', async () => {
    const exits = await watch();
    const repo = await tempTree({
      '.git/x': '1',
      'main.cjs': [
        "const fs = require('fs'), util = require('util');",
        "fs.readFileSync('.git/x');",
        'const log = process.env.FORGE_READ_LOG;',
        "const raw = process.binding('fs'), elsewhere = require('os').tmpdir() + '/log';",
        'for (const attempt of [',
        '  () => fs.writeFileSync(log, ""), () => fs.rmSync(log), () => fs.truncateSync(log),',
        // Past fs itself, and by another name made for the log.
        '  () => raw.writeFileUtf8(log, "", fs.constants.O_WRONLY | fs.constants.O_TRUNC, 0o666),',
        '  () => raw.open(log, fs.constants.O_WRONLY | fs.constants.O_TRUNC, 0o666), () => fs.linkSync(log, elsewhere),',
        ']) {',
        "  try { attempt(); console.log('allowed'); } catch (error) { console.log(error.code); }",
        '}',
        "util.promisify(fs.exists)('.git/x').then((there) => console.log(there, fs.readFileSync.name));",
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.cjs');
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe(`${'EACCES\n'.repeat(6)}true readFileSync\n`);
    // (Its read of Forge's variable is logged too, as who, path-less: the environment test's.)
    expect((await loggedPaths(exits)).map((r) => r.event)).toEqual(['readFileSync', 'exists']);
  });

  it('logs a hot loop over one path once per stack, and a few stacks at most', async () => {
    const exits = await watch();
    const repo = await tempTree({
      '.git/x': '1',
      'main.cjs': [
        "const fs = require('fs');",
        "for (let i = 0; i < 1000; i += 1) fs.existsSync('.git/x');",
        "const readers = Array.from({ length: 20 }, () => new Function('fs', 'return fs.existsSync(\".git/x\")'));",
        'for (const read of readers) read(fs);',
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.cjs');
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    expect(records[0]?.frames[0]).toBe(`${join(repo, 'main.cjs')}:2`);
    // Code made by new Function has no file of its own: its caller's line, the same each time.
    expect(records.map((r) => r.frames[0])).toEqual([
      `${join(repo, 'main.cjs')}:2`,
      `${join(repo, 'main.cjs')}:4`,
    ]);
  });

  it('leaves code that looks for .git to find its repository, or at the folders above, but not a listing of .git', async () => {
    const exits = await watch();
    const repo = await tempTree({
      '.git/HEAD': 'ref: refs/heads/main\n',
      'main.cjs': [
        "const fs = require('fs'), path = require('path');",
        "let dir = path.join(process.cwd(), 'src');",
        "while (!fs.existsSync(path.join(dir, '.git'))) dir = path.dirname(dir);",
        "fs.statSync(path.join(dir, '.git'));",
        "fs.readdirSync(path.join(dir, '.git'));",
        'for (let up = process.cwd(); up !== path.dirname(up); up = path.dirname(up)) fs.statSync(up);',
        '',
      ].join('\n'),
    });
    const ran = await node(exits, repo, 'main.cjs');
    expect(ran.stderr).toBe('');
    expect((await logged(exits)).map((r) => [r.event, r.path])).toEqual([
      ['readdirSync', join(repo, '.git')],
    ]);
  });

  it('is not loaded when the env was given no trees', async () => {
    const exits = await watch();
    const repo = await tempTree({ '.git/x': '1', 'main.cjs': "require('fs').readFileSync('.git/x');\n" });
    const ran = await node(exits, repo, 'main.cjs', []);
    expect(ran.status).toBe(0);
    expect(await logged(exits)).toEqual([]);
  });
});
