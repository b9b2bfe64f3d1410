// The read watch's `sitecustomize.py` (src/infra/python-watch.ts), run for real by python3: a process
// started with the watch's env logs what it opens or lists in git's, Forge's and br's folders and
// outside the trees, with the files on the stack; the tree's own files, the run's temp directory and
// Python's own install are not logged; the log cannot be rewritten by the code it watches; another
// `sitecustomize` still runs, and the process's sys.path is the user's.
import { spawnSync } from 'node:child_process';
import { stat } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ExitWatch } from '../../src/infra/exit-watch.js';
import { withPythonPath } from '../../src/infra/python-watch.js';
import { parseReadLog } from '../../src/infra/read-log.js';
import { loggedPaths, loggedReads, startedWatch } from '../support/run-watch.js';
import { tempTree } from '../support/temp-tree.js';

const watch = () => startedWatch('forge-readw-');
const logged = loggedReads;

async function python(exits: ExitWatch, repo: string, script: string, env: Record<string, string> = {}) {
  const temp = await tempTree({}, 'forge-readw-run-');
  return spawnSync('python3', ['-c', script], {
    cwd: repo,
    env: exits.env({ ...process.env, TMPDIR: temp, ...env }, [], [repo]),
    encoding: 'utf8',
  });
}

/** `argv` run by python3 in `repo`, watched as a loop's run with `metric/` as the metric's own folder. */
async function measured(exits: ExitWatch, repo: string, argv: string[]) {
  const temp = await tempTree({}, 'forge-readw-run-');
  const { NODE_OPTIONS: _user, ...rest } = process.env;
  return spawnSync('python3', argv, {
    cwd: repo,
    env: exits.env({ ...rest, TMPDIR: temp }, [], [repo], [join(repo, 'metric')]),
    encoding: 'utf8',
  });
}

describe('the read watch', () => {
  it("logs a read of git's folder by a path built as the code runs, with the file and line that read it", async () => {
    const exits = await watch();
    const repo = await tempTree({
      '.git/probe': '9\n',
      'src/lib.py':
        "from pathlib import Path\n\ndef value():\n    return Path('.g' + 'it', 'probe').read_text()\n",
    });
    const ran = await python(
      exits,
      repo,
      "import sys; sys.path.insert(0, 'src'); import lib; print(lib.value())",
    );
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('9\n\n');
    const records = await logged(exits);
    expect(records).toHaveLength(1);
    expect(records[0]).toMatchObject({
      event: 'open',
      path: join(repo, '.git', 'probe'),
      kind: 'state',
      write: false,
    });
    // pathlib's frames are Python's own and left out; the string the process ran from is too.
    expect(records[0]?.frames).toEqual([`${join(repo, 'src', 'lib.py')}:4`]);
    expect(records[0]?.ctimeMs).toBe(Math.floor((await stat(join(repo, '.git', 'probe'))).ctimeMs));
  });

  it("logs each read of a file in the metric's own folders, by whatever path; not its name, size or a write", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/input.txt': 'in',
      'src/solve.py': [
        'import os, sys, tempfile',
        "here = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'met' + 'ric')",
        'for name in os.listdir(here): os.stat(os.path.join(here, name))',
        "cases = open(os.path.join(here, 'cases.json')).read()",
        "link = os.path.join(tempfile.gettempdir(), 'c')",
        "os.symlink(os.path.join(here, 'cases.json'), link)",
        'open(link).read(); open(sys.argv[1]).read()',
        "open(os.path.join(here, 'out.txt'), 'w').write('x')",
        'print(cases)',
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/solve.py', 'metric/input.txt']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('[["a", "b"]]\n');
    const cases = join(repo, 'metric', 'cases.json');
    const solve = join(repo, 'src', 'solve.py');
    const records = await loggedPaths(exits);
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0], r.handed ?? false])).toEqual([
      ['open', cases, 'key', `${solve}:4`, false],
      ['open', cases, 'key', `${solve}:7`, false],
      // Named on the command line: the metric handed it.
      ['open', join(repo, 'metric', 'input.txt'), 'key', `${solve}:7`, true],
    ]);
  });

  it("logs the metric's files read by a process the doer's code started, or named on its command line, as the doer's", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/score.py': [
        'import subprocess, sys',
        "subprocess.run([sys.executable, '-c', \"open('metric/cases.json').read()\"], check=True)",
        "sys.path.insert(0, 'src')",
        'import solve',
        '',
      ].join('\n'),
      'src/solve.py': [
        'import os, subprocess, sys',
        "subprocess.run([sys.executable, '-c', \"open('met' + 'ric/cases.json').read()\"], check=True)",
        "subprocess.run('cat met' + 'ric/cases.json > /dev/null', shell=True, check=True)",
        "os.system('ls ' + os.path.join('met' + 'ric') + ' > /dev/null')",
        "subprocess.run(['node', '-e', \"require('fs').readFileSync('met' + 'ric/cases.json')\"], env=dict(os.environ), check=True)",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.py']);
    expect(ran.stderr).toBe('');
    const solve = (line: number) => `${join(repo, 'src', 'solve.py')}:${line}`;
    const records = await logged(exits);
    const doers = (frames: string[]) => frames.find((frame) => frame.includes('/src/')) ?? null;
    expect(records.map((r) => [r.event, relative(repo, r.path), doers(r.frames)])).toEqual([
      // The metric's own script and child, which reads its cases: the metric's reads, no stack.
      ['open', 'metric/score.py', null],
      ['open', 'metric/cases.json', null],
      ['open', 'metric/cases.json', solve(2)],
      ['spawn', 'metric/cases.json', solve(3)],
      ['spawn', 'metric', solve(4)],
      ['readFileSync', 'metric/cases.json', solve(5)],
    ]);
  });

  it("says a program of the doer's read the metric's files, whatever in it read them; a read no file calls is no one's", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/more.json': '[]',
      // The metric reads its cases, runs the doer's program, and loads the doer's module.
      'metric/score.py': [
        'import json, subprocess, sys',
        "json.load(open('metric/cases.json'))",
        "subprocess.run([sys.executable, 'src/cli.py'], check=True)",
        "sys.path.insert(0, 'src')",
        'import solve',
        '',
      ].join('\n'),
      // A thread given `open` itself, a pool given `Path.read_text`: no line of the doer's is on the
      // stack of either read.
      'src/cli.py': [
        'import threading',
        'from concurrent.futures import ThreadPoolExecutor',
        'from pathlib import Path',
        "here = Path(__file__).resolve().parent.parent / ('met' + 'ric')",
        "t = threading.Thread(target=open, args=(here / 'cases.json',)); t.start(); t.join()",
        "ThreadPoolExecutor(1).submit(Path.read_text, here / 'more.json').result()",
        '',
      ].join('\n'),
      'src/solve.py': [
        'from concurrent.futures import ThreadPoolExecutor',
        'from pathlib import Path',
        "ThreadPoolExecutor(1).submit((Path('met' + 'ric') / 'more.json').read_text).result()",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.py']);
    expect(ran.stderr).toBe('');
    const cli = `${join(repo, 'src', 'cli.py')}:0`;
    expect((await logged(exits)).map((r) => [relative(repo, r.path), r.frames, r.orphan ?? false])).toEqual([
      // The interpreter opening the script it runs, and the metric's own read: the metric's.
      ['metric/score.py', [], false],
      ['metric/cases.json', [], false],
      ['metric/cases.json', [cli], false],
      ['metric/more.json', [cli], false],
      ['metric/more.json', [], true],
    ]);
  });

  it('logs a look at what tells the code who runs it: its command line, another process, the list of them, what it has spent; not its limits', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/who.py': [
        'import os',
        'from concurrent.futures import ThreadPoolExecutor',
        "open('/proc/self/cmdline').read()",
        "open('/proc/%d/cmdline' % os.getppid()).read()",
        "os.listdir('/proc')",
        "open('/proc/self/limits').read(); open('/proc/self/cgroup').read(); open('/proc/cpuinfo').read()",
        "ThreadPoolExecutor().submit(open, '/proc/thread-self/environ').result().read()",
        "open('/'.join(['', 'proc', 'self', 'st' + 'atm'])).read(); os.listdir('/proc/self/task')",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/who.py']);
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    const self = (rest: string) => `/proc/${records[0]?.pid}${rest}`;
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0], r.orphan ?? false])).toEqual([
      ['open', self('/cmdline'), 'who', `${join(repo, 'src/who.py')}:3`, false],
      [
        'open',
        expect.stringMatching(/^\/proc\/\d+\/cmdline$/),
        'who',
        `${join(repo, 'src/who.py')}:4`,
        false,
      ],
      ['os.listdir', '/proc', 'who', `${join(repo, 'src/who.py')}:5`, false],
      ['open', expect.stringMatching(/^\/proc\/\d+\/task\/\d+\/environ$/), 'who', undefined, true],
      // Its memory and CPU time (a test runner's imports are in them), and its threads.
      ['open', self('/statm'), 'who', `${join(repo, 'src/who.py')}:8`, false],
      ['os.listdir', self('/task'), 'who', `${join(repo, 'src/who.py')}:8`, false],
    ]);
    expect(records[1]?.path).not.toBe(self('/cmdline'));
  });

  it("logs the stack reached by the code's own line, by whatever name; not Python's own modules reaching it", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/who.py': [
        'import logging, sys, warnings',
        'try:',
        '    raise ValueError',
        'except ValueError as e:',
        "    frame = getattr(getattr(e, '__trace' + 'back__'), 'tb_' + 'frame')",
        "caller = getattr(sys, '_get' + 'frame')(0)",
        "warnings.warn('old'); logging.getLogger('x').warning('w')",
        // Every thread's frames, a trace function (it sees each call's frame), what refers to a function.
        "threads = getattr(sys, '_current' + '_frames')()",
        "getattr(sys, 'set' + 'trace')(None)",
        "import gc; refs = getattr(gc, 'get_' + 'referrers')(print)",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/who.py']);
    expect(ran.status).toBe(0);
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0]])).toEqual(
      [5, 6, 8, 9, 10].map((line) => ['stack', '', 'who', `${join(repo, 'src/who.py')}:${line}`]),
    );
    expect(records.map((r) => r.entry)).toEqual(Array(5).fill(join(repo, 'src/who.py')));
  });

  it("logs its process's command line read by the code's own line, by whatever route, however often others read it; not Python's own modules reading it for their ends", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/who.py': [
        'import argparse, logging, sys',
        'a = sys.argv',
        "b = getattr(vars(logging)['s' + 'ys'], 'ar' + 'gv')",
        'from sys import orig_argv',
        'c = vars(sys)',
        'prog = argparse.ArgumentParser().prog',
        // Every other module is made by `type(sys)(name)`: a plain one, which isinstance takes for either.
        'import json, types',
        'print(type(sys).__name__, type(json) is types.ModuleType, isinstance(json, type(sys)), sys.argv[1:])',
        // What Python's own modules read to hand back: the line that asked them is the reader.
        'import fileinput, optparse',
        'rest = argparse.ArgumentParser(add_help=False).parse_known_args(None)[1]',
        'files = fileinput.FileInput()',
        "given = getattr(optparse.OptionParser(), 'parse_' + 'args')()",
        // Past the module's class, to the object's own reading of a name.
        "raw = object.__getattribute__(sys, 'orig_' + 'argv')",
        // A test's patch of it is undone as ever.
        'from unittest import mock',
        "with mock.patch.object(sys, 'argv', ['patched']): pass",
        'print(sys.argv[1:])',
        '',
      ].join('\n'),
      // The metric's script, which may read its own command line (as often as it likes, and through a
      // parser), imports it.
      'metric/run.py': [
        'import argparse, sys',
        "sys.path.insert(0, 'src')",
        "assert argparse.ArgumentParser().parse_known_args()[1] == ['x']",
        'for _ in range(5000):',
        "    assert sys.argv[1:] == ['x']",
        'import who',
        '',
      ].join('\n'),
      // A program of the doer's reads its own command line (its input): logged with it as the entry.
      'src/cli.py': 'import sys\nprint(sys.argv[1:])\n',
    });
    const program = await watch();
    expect((await measured(program, repo, ['src/cli.py', 'x'])).stdout).toBe("['x']\n");
    expect((await logged(program)).map((r) => [r.event, r.frames[0], r.entry])).toEqual([
      ['sys.argv', `${join(repo, 'src/cli.py')}:2`, join(repo, 'src/cli.py')],
    ]);
    const ran = await measured(exits, repo, ['metric/run.py', 'x']);
    // The module is as it was to any code that looks at it.
    expect(ran.stdout).toBe("module True True ['x']\n['x']\n");
    // (The metric reading its own script is logged too: a file of its folder.)
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/who.py')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.kind, r.frames[0]])).toEqual([
      ['sys.argv', '', 'who', at(2)],
      ['sys.argv', '', 'who', at(3)],
      ['sys.orig_argv', '', 'who', at(4)],
      ['vars(sys)', '', 'who', at(5)],
      ['sys.argv', '', 'who', at(8)],
      ['sys.argv through argparse', '', 'who', at(10)],
      ['sys.argv through fileinput', '', 'who', at(11)],
      ['sys.argv through optparse', '', 'who', at(12)],
      ['sys.orig_argv', '', 'who', at(13)],
      ['sys.argv', '', 'who', at(16)],
    ]);
    // Each with the process's main script.
    expect(new Set(records.map((r) => r.entry))).toEqual(new Set([join(repo, 'metric/run.py')]));
  });

  it("logs a test runner's variable asked of its environment by a line of the scope, set or not; not a copy of the whole environment", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/env.py': [
        'import os, subprocess',
        "a = os.environ.get('PYTEST_' + 'CURRENT_TEST')",
        "b = ('NODE_TEST_' + 'CONTEXT') in os.environ",
        "c = os.getenv('FORGE_' + 'EXIT_PARENT')",
        'd = dict(os.environ)',
        'e = os.environ.copy()',
        'f = {k: v for k, v in os.environ.items()}',
        'g = {**os.environ}',
        "subprocess.run(['true'], env=os.environ)",
        "h = os.environ.get('HO' + 'ME')",
        // A name that JSON must escape is logged as it is.
        `q = os.environ.get('PYTEST_"' + chr(92))`,
        "print(a, b, c, 'FORGE_READ_LOG' in d, d == e == f == g)",
        '',
      ].join('\n'),
      'metric/run.py': "import sys\nsys.path.insert(0, 'src')\nimport env\n",
    });
    const ran = await measured(exits, repo, ['metric/run.py']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('None False None True True\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/env.py')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ["os.environ['PYTEST_CURRENT_TEST']", '', at(2)],
      ["os.environ['NODE_TEST_CONTEXT']", '', at(3)],
      ["os.environ['FORGE_EXIT_PARENT']", '', at(4)],
      [`os.environ['PYTEST_"\\']`, '', at(11)],
    ]);
  });

  it('logs what the process has spent so far, asked by a line of the code by whatever name; not its limits', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/spend.py': [
        'import gc, os, sys, time',
        "t = getattr(time, 'process_' + 'time')()",
        'import resource',
        "r = getattr(resource, 'get' + 'rusage')(resource.RUSAGE_SELF).ru_maxrss",
        'c = gc.get_count(); o = os.times(); b = sys.getallocatedblocks(); k = sys.getrefcount(None)',
        'lim = resource.getrlimit(resource.RLIMIT_NOFILE); w = time.perf_counter(); n = os.cpu_count()',
        'print(type(t).__name__, r > 0, len(c), b > 0, len(lim), resource.__loader__.is_package("resource") is False)',
        '',
      ].join('\n'),
      'metric/run.py':
        "import sys, time\nsys.path.insert(0, 'src')\nt0 = time.process_time()\nimport spend\n",
    });
    const ran = await measured(exits, repo, ['metric/run.py']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('float True 3 True 2 True\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/spend.py')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      // The metric's own ask (metric/run.py:3) is not the code's.
      ['time.process_time()', '', at(2)],
      ['resource.getrusage()', '', at(4)],
      ['gc.get_count()', '', at(5)],
      ['os.times()', '', at(5)],
      ['sys.getallocatedblocks()', '', at(5)],
      ['sys.getrefcount()', '', at(5)],
    ]);
  });

  it('logs a hook a test runner sets in sys, read by a line of the code by whatever route; set and read by others as ever', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/hooks.py': [
        'import logging',
        "s = getattr(logging, 'sy' + 's')",
        "a = getattr(s, 'unraisable' + 'hook') is not s.__unraisablehook__",
        'b = s.excepthook is s.__excepthook__; c = s.displayhook; d = s.breakpointhook',
        'print(a, b, s.flags.optimize)',
        '',
      ].join('\n'),
      'metric/run.py': [
        'import sys',
        "sys.path.insert(0, 'src')",
        'sys.unraisablehook = lambda u: None',
        'original = sys.excepthook',
        'import hooks',
        'del sys.unraisablehook',
        "print(hasattr(sys, 'unraisablehook'), original is sys.__excepthook__)",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/run.py']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('True True 0\nFalse True\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/hooks.py')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ['sys.unraisablehook', '', at(3)],
      ['sys.excepthook', '', at(4)],
      ['sys.displayhook', '', at(4)],
      ['sys.breakpointhook', '', at(4)],
    ]);
  });

  it("logs sys's output, modules and path read by a line of the code through another name than sys; not a line that says sys.stdout, nor Python's own reads", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/spoken.py': [
        'import sys, logging, argparse, contextlib, io',
        'from sys import stdout, path as p',
        'sys.stdout.flush(); print(len(sys.path) > 0, file=sys.stderr); m = sys.modules; c = sys.__stdout__',
        "s = getattr(logging, 'sy' + 's')",
        "a = type(getattr(s, 'std' + 'out')).__name__; b = '_py' + 'test' in s.modules",
        "d = [x for x in getattr(s, 'pa' + 'th')]; e = s.stderr; f = s.__stdin__; g = s.path_importer_cache; h = getattr(s, 'meta_' + 'path'); k = sys.meta_path",
        'with contextlib.redirect_stdout(io.StringIO()):',
        "    argparse.ArgumentParser(prog='x').print_help()",
        'logging.basicConfig(); logging.getLogger().warning("to stderr")',
        '',
      ].join('\n'),
      'metric/run.py': [
        'import sys',
        "sys.path.insert(0, 'src')",
        'import spoken',
        'print(sys.stdout is spoken.stdout)',
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/run.py']);
    expect(ran.stderr).toBe('True\nWARNING:root:to stderr\n');
    expect(ran.stdout).toBe('True\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/spoken.py')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ['sys.stdout', '', at(5)],
      ['sys.modules', '', at(5)],
      ['sys.path', '', at(6)],
      ['sys.stderr', '', at(6)],
      ['sys.__stdin__', '', at(6)],
      ['sys.path_importer_cache', '', at(6)],
      ['sys.meta_path', '', at(6)],
    ]);
  });

  it("logs threading's hook read by a line of the code by a made name (pytest sets its own); not a line that says threading.excepthook, nor a hook set", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/hooks.py': [
        'import threading',
        "a = getattr(threading, 'except' + 'hook') is not threading.__excepthook__",
        "b = threading.excepthook; from threading import excepthook; c = vars(threading)['except' + 'hook']",
        'import pickle; d = pickle.loads(pickle.dumps(threading.Thread)) is threading.Thread',
        't = threading.Thread(target=lambda: 1 / 0); t.start(); t.join()',
        '',
      ].join('\n'),
      'metric/run.py': [
        'import sys, threading',
        "sys.path.insert(0, 'src')",
        "threading.excepthook = lambda args: print('caught', args.exc_type.__name__)",
        'import hooks',
        'print(hooks.a, hooks.b is threading.excepthook)',
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/run.py']);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('caught ZeroDivisionError\nTrue True\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ['threading.excepthook', '', `${join(repo, 'src/hooks.py')}:2`],
      ['vars(threading)', '', `${join(repo, 'src/hooks.py')}:3`],
    ]);
  });

  it("logs the root logger's handlers asked by a line of the code (pytest puts its own there); not a logger's own, nor logging's reads", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'src/logs.py': [
        'import logging',
        'a = len(logging.getLogger().handlers)',
        "b = len(getattr(getattr(logging, 'ro' + 'ot'), 'hand' + 'lers'))",
        "c = logging.getLogger('work.inner').hasHandlers()",
        "log = logging.getLogger('work')",
        'if not log.handlers:',
        '    log.addHandler(logging.NullHandler())',
        "logging.basicConfig(level=logging.INFO); log.info('x'); logging.warning('y')",
        'print(a, b, c, len(log.handlers), len(logging.root.handlers))',
        '',
      ].join('\n'),
      'metric/run.py':
        "import logging, sys\nsys.path.insert(0, 'src')\nlogging.getLogger().handlers\nimport logs\n",
    });
    const ran = await measured(exits, repo, ['metric/run.py']);
    expect(ran.stdout).toBe('0 0 False 1 1\n');
    expect(ran.stderr).toBe('INFO:work:x\nWARNING:root:y\n');
    const records = (await logged(exits)).filter((r) => r.kind === 'who');
    const at = (line: number) => `${join(repo, 'src/logs.py')}:${line}`;
    expect(records.map((r) => [r.event, r.path, r.frames[0]])).toEqual([
      ["the root logger's handlers", '', at(2)],
      ["the root logger's handlers", '', at(3)],
      ["the root logger's handlers", '', at(4)],
      // (The last line's read of logging.root.handlers, at 9, too.)
      ["the root logger's handlers", '', at(9)],
    ]);
  });

  it('reads a path given as `--flag=path`, or in a folder named on the command line, as handed', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/in.txt': 'in',
      'metric/fixtures/a.md': '# a',
      'metric/cases.json': '[]',
      'src/cli.py': [
        'import os, sys',
        "open(sys.argv[1].split('=')[1]).read()",
        "open(os.path.join(sys.argv[2], 'a.md')).read()",
        "open(os.path.join(sys.argv[2], '..', 'cases.json')).read()",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['src/cli.py', '--input=metric/in.txt', 'metric/fixtures']);
    expect(ran.stderr).toBe('');
    expect((await loggedPaths(exits)).map((r) => [relative(repo, r.path), r.handed ?? false])).toEqual([
      ['metric/in.txt', true],
      ['metric/fixtures/a.md', true],
      ['metric/cases.json', false],
    ]);
  });

  it('watches a child started with an environment of its own, or with the watch moved, as any other', async () => {
    const exits = await watch();
    const repo = await tempTree({
      'metric/cases.json': '[["a", "b"]]',
      'metric/score.py':
        "open('metric/cases.json').read()\nimport sys\nsys.path.insert(0, 'src')\nimport solve\n",
      'src/solve.py': [
        'import os, subprocess, sys',
        "read = \"open('met' + 'ric/cases.json').read()\"",
        "subprocess.run([sys.executable, '-c', read], env={'PATH': os.environ['PATH']}, check=True)",
        "subprocess.run([sys.executable, '-c', read], env=dict(os.environ, **{'FORGE_' + 'READ_LOG': '/tmp/x', 'PYTHONPATH': ''}), check=True)",
        "subprocess.run(['node', '-e', \"require('fs').readFileSync('met' + 'ric/cases.json')\"], env={}, check=True)",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.py']);
    expect(ran.stderr).toBe('');
    const solve = (line: number) => `${join(repo, 'src', 'solve.py')}:${line}`;
    expect(
      (await logged(exits)).map((r) => [r.event, relative(repo, r.path), r.frames.at(-1) ?? null]),
    ).toEqual([
      ['open', 'metric/score.py', null],
      ['open', 'metric/cases.json', null],
      ['open', 'metric/cases.json', solve(3)],
      ['open', 'metric/cases.json', solve(4)],
      ['readFileSync', 'metric/cases.json', solve(5)],
    ]);
  });

  it("logs the metric's own reads of its files once a file, with no stack, however many", async () => {
    const exits = await watch();
    const fixtures = Object.fromEntries(
      Array.from({ length: 2_100 }, (_, n) => [`metric/fixtures/${n}.txt`, `${n}`]),
    );
    const repo = await tempTree({
      ...fixtures,
      'metric/score.py': [
        'import os',
        "here = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')",
        'for name in os.listdir(here): open(os.path.join(here, name)).read()',
        "open(os.path.join(here, '0.txt')).read()",
        '',
      ].join('\n'),
    });
    const ran = await measured(exits, repo, ['metric/score.py']);
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    // 2,000 files at most, each once, and no stack: a doer's read of one is what needs the stack.
    expect(records).toHaveLength(2_000);
    expect(new Set(records.map((r) => r.path)).size).toBe(2_000);
    expect(records.every((r) => r.kind === 'key' && r.frames.length === 0)).toBe(true);
  });

  it('logs a file and a folder outside the tree; not the tree, the run temp directory or Python itself', async () => {
    const exits = await watch();
    const elsewhere = await tempTree({ 'plant.txt': '5' }, 'forge-readw-out-');
    const repo = await tempTree({ 'data/own.txt': '1' });
    const script = [
      'import os, tempfile, json, decimal',
      "open('data/own.txt').read()",
      "with tempfile.NamedTemporaryFile('w') as f: f.write('x')",
      `open(${JSON.stringify(join(elsewhere, 'plant.txt'))}).read()`,
      `os.listdir(${JSON.stringify(elsewhere)})`,
      'open(os.devnull).read()',
    ].join('\n');
    const ran = await python(exits, repo, script);
    expect(ran.stderr).toBe('');
    const records = await logged(exits);
    expect(records.map((r) => [r.event, r.path, r.kind])).toEqual([
      ['open', join(elsewhere, 'plant.txt'), 'outside'],
      ['os.listdir', elsewhere, 'outside'],
    ]);
  });

  it("logs a test of a file's presence or size in git's folder, which no audit event reports; not the folders above the tree", async () => {
    const exits = await watch();
    const repo = await tempTree({ '.git/flag': '999', 'src/lib.py': '' });
    const script = [
      'import os',
      'from pathlib import Path',
      "os.path.isdir('.git')",
      "print(os.path.exists('.g' + 'it/flag'), Path('.git', 'flag').stat().st_size, os.access('.git/flag', os.R_OK))",
    ].join('\n');
    const ran = await python(
      exits,
      repo,
      `${script}\nPath('src/lib.py').resolve()\nos.path.isdir(os.path.dirname(os.getcwd()))`,
    );
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('True 3 True\n');
    const flag = join(repo, '.git', 'flag');
    expect((await logged(exits)).map((r) => [r.event, r.path])).toEqual([
      ['os.stat', flag],
      ['os.access', flag],
    ]);
  });

  it('logs a path outside the tree that code asks the file system of, or goes into', async () => {
    // Red team: a doer-left ../flag tested with os.statvfs passed unseen; os.pathconf, the extended
    // attributes and a chdir there say as much of it.
    const exits = await watch();
    const elsewhere = await tempTree({ flag: 'on' }, 'forge-readw-fs-');
    const repo = await tempTree({ 'src/lib.py': '' });
    const flag = JSON.stringify(join(elsewhere, 'flag'));
    const script = [
      'import os',
      `os.statvfs(${flag})`,
      `os.pathconf(${flag}, 'PC_NAME_MAX')`,
      `os.listxattr(${flag})`,
      `try:\n    os.getxattr(${flag}, 'user.forge')\nexcept OSError:\n    pass`,
      `os.chdir(${JSON.stringify(elsewhere)})`,
      "print('ran')",
    ].join('\n');
    const ran = await python(exits, repo, script);
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('ran\n');
    const path = join(elsewhere, 'flag');
    expect((await logged(exits)).map((r) => [r.event, r.path, r.kind])).toEqual([
      ['os.statvfs', path, 'outside'],
      ['os.pathconf', path, 'outside'],
      ['os.listxattr', path, 'outside'],
      ['os.getxattr', path, 'outside'],
      ['os.chdir', elsewhere, 'outside'],
    ]);
  });

  it('logs a hot loop over one path once per stack, and a few stacks at most', async () => {
    const exits = await watch();
    const repo = await tempTree({ '.git/x': '1' });
    const script = [
      'for i in range(1000):',
      "    open('.git/x').close()",
      'for i in range(20):',
      "    exec(compile(\"open('.git/x').close()\", 'reader%d.py' % i, 'exec'))",
    ].join('\n');
    const ran = await python(exits, repo, script);
    expect(ran.stderr).toBe('');
    // The loop's line is code from a string (-c), left out: the records differ by the made-up files.
    const records = await logged(exits);
    expect(records).toHaveLength(8);
    expect(records[0]?.frames).toEqual([]);
    expect(records[1]?.frames).toEqual([`${join(repo, 'reader0.py')}:1`]);
  });

  it('leaves code that opens .git itself (a worktree names its git folder there), not a listing of it', async () => {
    const exits = await watch();
    const repo = await tempTree({ '.git': 'gitdir: /elsewhere\n' });
    const ran = await python(
      exits,
      repo,
      "open('.git').read()\nimport os\nos.listdir('.')\ntry:\n    os.listdir('.git')\nexcept OSError:\n    pass",
    );
    expect(ran.stderr).toBe('');
    expect((await logged(exits)).map((r) => [r.event, r.path])).toEqual([['os.listdir', join(repo, '.git')]]);
  });

  it('refuses the watched code a write to its own log, which stays as it was', async () => {
    const exits = await watch();
    const repo = await tempTree({ '.git/x': '1' });
    const script = [
      'import os',
      "open('.git/x').read()",
      'log = os.environ["FORGE_READ_LOG"]',
      'for attempt in (lambda: open(log, "w"), lambda: os.remove(log), lambda: os.truncate(log, 0)):',
      '    try:',
      '        attempt()',
      '        print("allowed")',
      '    except PermissionError:',
      '        print("refused")',
    ].join('\n');
    const ran = await python(exits, repo, script);
    expect(ran.stdout).toBe('refused\nrefused\nrefused\n');
    expect((await logged(exits)).map((r) => r.path)).toEqual([join(repo, '.git', 'x')]);
  });

  it("hands over to the user's own sitecustomize, and leaves sys.path as the user's", async () => {
    const exits = await watch();
    const repo = await tempTree({
      'site/sitecustomize.py': "import builtins\nbuiltins.USERS_SITE = 'ran'\n",
    });
    const ran = await python(
      exits,
      repo,
      "import sys, os; print(USERS_SITE); print(any('forge-exits-' in p for p in sys.path))",
      { PYTHONPATH: join(repo, 'site') },
    );
    expect(ran.stderr).toBe('');
    expect(ran.stdout).toBe('ran\nFalse\n');
  });

  it('is not loaded when the env was given no trees', async () => {
    const exits = await watch();
    const env = exits.env({ PYTHONPATH: '/x' });
    expect(env.PYTHONPATH).toBe('/x');
    expect(env.FORGE_READ_LOG).toBeUndefined();
  });

  it('reads back only the lines that are records, and says when the log is gone', async () => {
    const good = {
      pid: 1,
      event: 'open',
      path: '/a',
      kind: 'state',
      write: true,
      ctimeMs: 5,
      frames: ['/r/x.py:1'],
    };
    const text = ['not json', JSON.stringify({ ...good, kind: 'other' }), JSON.stringify(good), ''].join(
      '\n',
    );
    expect(parseReadLog(text)).toEqual([good]);
    const exits = await watch();
    const repo = await tempTree({});
    const ran = await python(
      exits,
      repo,
      "import shutil, os; shutil.rmtree(os.path.dirname(os.environ['FORGE_READ_LOG']))",
    );
    expect(ran.stderr).toContain('PermissionError');
    expect(await exits.reads()).toBeDefined();
  });

  it('puts its folder first on PYTHONPATH', () => {
    expect(withPythonPath(undefined, '/w', ':')).toBe('/w');
    expect(withPythonPath('/a::/b', '/w', ':')).toBe('/w:/a:/b');
  });
});
