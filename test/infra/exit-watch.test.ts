// The exit watch's preload (src/infra/exit-watch.ts), run for real: Node processes started with its
// env log each exit call with their entry, whether they run tests, and the stack; the user's own
// NODE_OPTIONS still apply; nothing it meets makes the process fail.
import { spawn, spawnSync } from 'node:child_process';
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  parseExitLog,
  startExitWatch,
  withRequire,
  type ExitRecord,
  type ExitWatch,
} from '../../src/infra/exit-watch.js';
import { tempTree } from '../support/temp-tree.js';

/** The records logged; the log must still be there. */
async function logged(exits: ExitWatch): Promise<ExitRecord[]> {
  const records = await exits.read();
  if (records === undefined) throw new Error('the exit log is gone');
  return records;
}

async function watch(): Promise<ExitWatch> {
  const base = await tempTree({}, 'forge-exitw-');
  const started = await startExitWatch(base);
  if (started === undefined) throw new Error('no exit watch');
  onTestFinished(() => started.remove());
  return started;
}

function node(
  exits: ExitWatch,
  args: string[],
  cwd: string,
  env: Record<string, string> = {},
  log?: string,
): ReturnType<typeof spawnSync> {
  const { NODE_OPTIONS: _user, ...rest } = process.env;
  return spawnSync(process.execPath, args, {
    cwd,
    env: { ...exits.env({ ...rest, ...env }), ...(log === undefined ? {} : { FORGE_EXIT_LOG: log }) },
    encoding: 'utf8',
  });
}

describe('the exit watch', () => {
  it('logs an exit called from an imported module, with the entry and the frames that led to it', async () => {
    const exits = await watch();
    const dir = await tempTree({
      'main.mjs': "import './lib.mjs';\nconsole.log('not reached');\n",
      'lib.mjs': '\n\nprocess.exit(7);\n',
    });
    const ran = node(exits, ['main.mjs'], dir);
    expect(ran.status).toBe(7);
    expect(ran.stdout).toBe('');
    const [record, ...more] = await logged(exits);
    expect(more).toEqual([]);
    expect(record).toMatchObject({ entry: join(dir, 'main.mjs'), test: false, via: 'exit', code: 7 });
    expect(record?.frames[0]).toBe(`${join(dir, 'lib.mjs')}:3`);
  });

  it('logs an exit when the read watch runs beside it, whose wrappers its own write passes', async () => {
    const exits = await watch();
    const dir = await tempTree({ 'main.cjs': 'process.exit(3);\n' });
    const { NODE_OPTIONS: _user, ...rest } = process.env;
    const ran = spawnSync(process.execPath, ['main.cjs'], {
      cwd: dir,
      env: exits.env(rest, [], [dir]),
      encoding: 'utf8',
    });
    expect(ran.status).toBe(3);
    expect(await logged(exits)).toMatchObject([{ entry: join(dir, 'main.cjs'), via: 'exit', code: 3 }]);
  });

  it('reads its logs as cut when a process it does not watch cut them short, with what it saw of them', async () => {
    const exits = await watch();
    const dir = await tempTree({
      '.git/x': '1',
      // Reads in git's folder (logged), waits for the test to have seen that, then has a shell (which
      // no watch sees) empty both logs.
      'main.cjs': [
        "const fs = require('fs'), { execFileSync } = require('child_process');",
        "fs.readFileSync('.git/x');",
        "const go = () => fs.existsSync('go') ? execFileSync('sh', ['-c', ': > \"$FORGE_READ_LOG\"; : > \"$FORGE_EXIT_LOG\"']) : setTimeout(go, 10);",
        'go();',
        '',
      ].join('\n'),
    });
    const { NODE_OPTIONS: _user, ...rest } = process.env;
    const child = spawn(process.execPath, ['main.cjs'], {
      cwd: dir,
      env: exits.env(rest, [], [dir]),
      stdio: 'ignore',
    });
    const ended = new Promise((done) => child.on('exit', done));
    await vi.waitFor(async () => expect((await exits.reads())?.records).toHaveLength(1), { timeout: 20_000 });
    await writeFile(join(dir, 'go'), '');
    await ended;
    const log = await exits.reads();
    expect(log?.cut).toBe(true);
    expect(log?.records.map((r) => [r.event, r.path])).toEqual([['readFileSync', join(dir, '.git', 'x')]]);
  });

  it('reads its logs as whole when nothing cut them', async () => {
    const exits = await watch();
    const dir = await tempTree({ '.git/x': '1', 'main.cjs': "require('fs').readFileSync('.git/x');\n" });
    const { NODE_OPTIONS: _user, ...rest } = process.env;
    const child = spawn(process.execPath, ['main.cjs'], {
      cwd: dir,
      env: exits.env(rest, [], [dir]),
      stdio: 'ignore',
    });
    await new Promise((done) => child.on('exit', done));
    expect(await exits.reads()).toMatchObject({ complete: true, records: [{ event: 'readFileSync' }] });
    expect((await exits.reads())?.cut).toBeUndefined();
  });

  it('logs a test file’s process under node --test as a test process, and the runner as one', async () => {
    const exits = await watch();
    const dir = await tempTree({
      'a.test.mjs':
        "import test from 'node:test';\nimport './lib.mjs';\ntest('fails', () => { throw new Error('no'); });\n",
      'lib.mjs': 'process.exit(0);\n',
    });
    const ran = node(exits, ['--test', 'a.test.mjs'], dir);
    // What the watch is for: the runner counts the file as passed.
    expect(ran.status).toBe(0);
    const records = await logged(exits);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({ entry: join(dir, 'a.test.mjs'), test: true, code: 0 });
    expect(records[0]?.frames[0]).toBe(`${join(dir, 'lib.mjs')}:1`);
  });

  it('a process a test starts is no test process', async () => {
    const exits = await watch();
    const dir = await tempTree({
      'a.test.mjs': `import test from 'node:test';
import assert from 'node:assert';
import { spawnSync } from 'node:child_process';
test('the cli says hi', () => {
  const ran = spawnSync(process.execPath, ['cli.mjs'], { encoding: 'utf8' });
  assert.equal(ran.stdout, 'hi\\n');
});
`,
      'cli.mjs': "console.log('hi');\nprocess.exit(0);\n",
    });
    expect(node(exits, ['--test', 'a.test.mjs'], dir).status).toBe(0);
    expect(await logged(exits)).toMatchObject([{ entry: join(dir, 'cli.mjs'), test: false }]);
  });

  it('a known test runner’s CLI is a test process', async () => {
    const exits = await watch();
    const dir = await tempTree({ 'node_modules/mocha/bin/mocha.js': 'process.exit(2);\n' });
    expect(node(exits, ['node_modules/mocha/bin/mocha.js'], dir).status).toBe(2);
    expect(await logged(exits)).toMatchObject([{ test: true, code: 2 }]);
  });

  it('an exit handed to a timer has only Node’s frames; code run by eval is its caller’s', async () => {
    const exits = await watch();
    const dir = await tempTree({
      'timer.mjs': 'setTimeout(process.exit, 0, 4);\n',
      'eval.mjs': "\neval('process.exit(5)');\n",
      'really.cjs': 'process.reallyExit(6);\n',
    });
    expect(node(exits, ['timer.mjs'], dir).status).toBe(4);
    expect(node(exits, ['eval.mjs'], dir).status).toBe(5);
    expect(node(exits, ['really.cjs'], dir).status).toBe(6);
    const [timer, evaluated, really] = await logged(exits);
    expect(timer?.code).toBe(4);
    expect(timer?.frames.every((frame) => frame.startsWith('node:'))).toBe(true);
    expect(evaluated?.frames[0]).toBe(`${join(dir, 'eval.mjs')}:2`);
    expect(really).toMatchObject({ via: 'reallyExit', code: 6 });
    expect(really?.frames[0]).toBe(`${join(dir, 'really.cjs')}:1`);
  });

  it('logs an exit called as the process ends, which sets the code it ends with', async () => {
    const exits = await watch();
    const dir = await tempTree({ 'a.cjs': "process.on('exit', () => process.exit(0));\nprocess.exit(1);\n" });
    expect(node(exits, ['a.cjs'], dir).status).toBe(0);
    expect(await logged(exits)).toMatchObject([
      { via: 'exit', code: 1 },
      { via: 'exit', code: 0 },
    ]);
  });

  it('one record per process: process.exit’s own call of reallyExit is not a second', async () => {
    const exits = await watch();
    const dir = await tempTree({
      'a.cjs': "process.on('exit', () => {});\nprocess.exitCode = 3;\nprocess.exit();\n",
    });
    expect(node(exits, ['a.cjs'], dir).status).toBe(3);
    expect(await logged(exits)).toMatchObject([{ via: 'exit', code: 3 }]);
  });

  it('keeps the user’s NODE_OPTIONS, and a process that never calls exit logs nothing', async () => {
    const exits = await watch();
    const dir = await tempTree({
      'user hook.cjs': "process.env.USER_HOOK_RAN = 'yes';\n",
      'main.cjs': 'console.log(process.env.USER_HOOK_RAN);\n',
    });
    const ran = node(exits, ['main.cjs'], dir, {
      NODE_OPTIONS: withRequire(undefined, join(dir, 'user hook.cjs')),
    });
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('yes\n');
    expect(await logged(exits)).toEqual([]);
  });

  it('a log that cannot be written costs the process nothing: it ends as it would have', async () => {
    const exits = await watch();
    const dir = await tempTree({ 'a.cjs': "console.log('out');\nprocess.exit(9);\n" });
    const ran = node(exits, ['a.cjs'], dir, {}, join(dir, 'missing', 'exits.jsonl'));
    expect(ran.status).toBe(9);
    expect(ran.stdout).toBe('out\n');
    expect(ran.stderr).toBe('');
  });

  it('says when the log is gone, which only the run can have done', async () => {
    const exits = await watch();
    const dir = await tempTree({ 'a.cjs': "require('fs').rmSync(process.env.FORGE_EXIT_LOG);\n" });
    expect(node(exits, ['a.cjs'], dir).status).toBe(0);
    expect(await exits.read()).toBeUndefined();
  });

  it('freezes node:assert in a test process and a script the loop names, and nowhere else', async () => {
    const exits = await watch();
    const patch =
      "const a = require('assert');\ntry { a.equal = () => {}; } catch {}\nconsole.log(a.equal.name, Object.isFrozen(require('assert/strict')));\n";
    const dir = await tempTree({
      'node_modules/mocha/bin/mocha.js': patch,
      'metric/score.cjs': patch,
      'cli.cjs': patch,
    });
    const { NODE_OPTIONS: _user, ...rest } = process.env;
    const entries = [join(dir, 'metric', 'score.cjs')];
    const run = (script: string) =>
      spawnSync(process.execPath, [script], { cwd: dir, env: exits.env(rest, entries), encoding: 'utf8' })
        .stdout;
    expect(run('node_modules/mocha/bin/mocha.js')).toBe('equal true\n');
    expect(run('metric/score.cjs')).toBe('equal true\n');
    expect(run('cli.cjs')).toBe(' false\n');
  });

  it('removes its directory, and the runs of a Forge that was killed leave none behind', async () => {
    const base = await tempTree({}, 'forge-exitw-');
    const exits = await startExitWatch(base);
    expect(await readdir(base)).toHaveLength(1);
    await exits?.remove();
    expect(await readdir(base)).toEqual([]);
  });
});

describe('the exit log', () => {
  it('keeps the lines that are records and leaves out the rest', () => {
    const good = { pid: 1, entry: '/a.mjs', test: true, via: 'exit', code: 0, frames: ['/b.mjs:1'] };
    const text = [
      JSON.stringify(good),
      '{"pid": 2, "test": true, "via": "abort", "frames": []}',
      'not json',
      '{"pid": 3, "test": "yes", "via": "exit", "frames": []}',
      '{"pid": 4, "test": false, "via": "exit", "frames": [1]}',
      JSON.stringify({ ...good, pid: 5, entry: 3, code: {} }),
      '',
    ].join('\n');
    expect(parseExitLog(text)).toEqual([good, { ...good, pid: 5, entry: null, code: null }]);
  });

  it('names the preload after what NODE_OPTIONS held, quoted as Node reads it', () => {
    expect(withRequire(undefined, '/t/a b/h.cjs')).toBe('--require "/t/a b/h.cjs"');
    expect(withRequire(' --max-old-space-size=64 ', '/t/"x"\\h.cjs')).toBe(
      '--max-old-space-size=64 --require "/t/\\"x\\"\\\\h.cjs"',
    );
  });
});
