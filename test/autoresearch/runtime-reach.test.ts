// Code that reaches into the process measuring it is found by what it says; ordinary code that only
// calls the runtime, or mentions it in passing, is not.
import { describe, expect, it } from 'vitest';
import { loadedCodeReaches } from '../../src/autoresearch/loaded-reaches.js';
import { metricFolderNames, metricNames, runtimeReaches } from '../../src/autoresearch/runtime-reach.js';

const keys = (text: string, path: string, names: string[] = []) => [
  ...runtimeReaches(`${text}\n`, path, names).keys(),
];

describe('runtimeReaches', () => {
  it.each([
    ['src/a.mjs', 'performance.now = () => 0;', 'performance.now ='],
    ['src/a.ts', 'console.log = (s: string) => log(s.replace(/\\d+/, "1000"));', 'console.log ='],
    ['src/a.js', 'Date.now = () => 0', 'Date.now ='],
    ['src/a.js', 'Math.random = seeded;', 'Math.random ='],
    ['src/a.js', 'globalThis.fetch = fake;', 'globalThis.fetch ='],
    ['src/a.js', 'process.stdout.write = (chunk) => true;', 'process.stdout.write ='],
    ['src/a.js', 'process.hrtime.bigint = () => 0n;', 'process.hrtime.bigint ='],
    ['src/a.js', 'Array.prototype.sort = fastSort;', 'Array.prototype.sort ='],
    [
      'src/a.js',
      "Object.defineProperty(performance, 'now', { value: () => 0 });",
      'Object.defineProperty(performance,',
    ],
    ['src/a.js', "process.on('exit', () => console.log('{\"value\":1000}'));", "process.on('exit'"],
    ['src/a.cjs', "require('module')._load = hooked;", ')._load'],
    ['src/a.cjs', 'delete require.cache[key];', 'require.cache'],
    ['src/a.py', 'time.perf_counter = lambda: 0.0', 'time.perf_counter ='],
    ['src/a.py', 'sys.stdout = Rewriter(sys.stdout)', 'sys.stdout ='],
    ['src/a.py', 'builtins.print = fake_print', 'builtins.print ='],
    ['src/a.py', "setattr(time, 'time', lambda: 0)", 'setattr(time,'],
    ['src/a.py', 'atexit.register(report)', 'atexit.register'],
    ['src/a.py', "sys.modules['timeit'] = fake", "sys.modules['timeit'] ="],
    // By brackets, through a name of its own, or as code made from text.
    ['src/a.js', "performance['now'] = () => 0;", "performance['now'] ="],
    ['src/a.js', "globalThis['perf' + 'ormance'].now = stub;", "globalThis['perf' + 'ormance'].now ="],
    ['src/a.js', "process['stdout'].write = fake;", "process['stdout'].write ="],
    ['src/a.js', 'const p = performance;\np.now = () => 0;', 'p.now ='],
    ['src/a.js', 'let out = globalThis.process.stdout;\nout.write = fake;', 'out.write ='],
    ['src/a.js', 'eval(atob(hidden));', 'eval('],
    ['src/a.js', "const f = new Function('return 1');", 'new Function('],
    ['src/a.js', "import vm from 'node:vm';", "'node:vm'"],
    // A worker made from text: its code has no file, a read it makes no line of the doer's on its stack.
    ['src/a.cjs', 'new Worker(source, { eval: true });', 'eval'],
    // Code made from text without the names above (red team: each kept a patch of JSON.stringify).
    ['src/a.mjs', 'const F = (() => {}).constructor;', ').constructor'],
    ['src/a.js', "const F = Object.getPrototypeOf(async () => {}).constructor('return 1');", ').constructor'],
    ['src/a.js', "const F = fn.constructor('return 1');", '.constructor('],
    ['src/a.js', "const F = fn['constructor'];", "['constructor']"],
    ['src/a.js', "Reflect.construct(Function, ['return 1']);", 'Reflect.construct(Function'],
    ['src/a.mjs', 'import "data:text/javascript;base64,SlNPTg==";', '"data:text/javascript'],
    ['src/a.mjs', 'await import(`data:application/javascript,${code}`);', '`data:application/javascript'],
    ['src/a.mjs', 'const url = URL.createObjectURL(blob);', 'URL.createObjectURL('],
    ['src/a.py', 'import time as t\nt.perf_counter = lambda: 0', 't.perf_counter ='],
    ['src/a.py', 'clock = time\nsetattr(clock, "time", f)', 'setattr(clock,'],
    ['src/a.py', "vars(time)['time'] = f", 'vars(time)'],
    ['src/a.py', 'exec(base64.b64decode(hidden))', 'exec('],
    ['src/a.py', "__import__('time').sleep(0)", '__import__('],
    // The global object, or any class, reached with nothing a reading follows.
    ['src/a.js', "const g = (0, eval)('this');", 'eval'],
    [
      'src/a.py',
      "Popen = next(c for c in object.__subclasses__() if c.__name__ == 'Popen')",
      '__subclasses__',
    ],
    ['src/a.py', "b = work.__globals__['sys']", '__globals__'],
    // A value made to pass every comparison.
    ['src/a.mjs', 'export const work = () => ({ asymmetricMatch: () => true });', 'asymmetricMatch'],
    [
      'src/a.py',
      'class Answer:\n    def __eq__(self, other):\n        return True\n',
      'def __eq__(self, other): return True',
    ],
    ['src/a.py', 'class A:\n    __ne__ = lambda self, other: False\n', '__ne__ = lambda self, other: False'],
    // An end no runner sees coming, in any code (a test runner's worker too).
    ['src/a.js', 'process.reallyExit(0);', 'process.reallyExit('],
    ['src/a.js', "process.kill(process.pid, 'SIGKILL');", 'process.kill(process.pid'],
    ['src/a.py', 'os._exit(0)', 'os._exit('],
    ['src/a.py', 'os.kill(os.getpid(), 9)', 'os.kill(os.getpid'],
    // What tests the code, reached from the code under test: the assertions rewritten, a framework's
    // matchers or hooks, pytest's machinery.
    ['src/a.mjs', "import assert from 'node:assert';\nassert.equal = () => {};", 'assert.equal ='],
    ['src/a.mjs', "import * as check from 'assert/strict';\ncheck['ok'] = f;", "check['ok'] ="],
    ['src/a.mjs', "import { strict as same } from 'assert';\nsame.deepEqual = f;", 'same.deepEqual ='],
    ['src/a.cjs', "const a = require('assert');\nObject.assign(a, { equal() {} });", 'Object.assign(a,'],
    ['src/a.js', 'const p = performance;\nObject.assign(p, { now: () => 0 });', 'Object.assign(p,'],
    ['src/a.ts', "import { expect } from 'vitest';", "from 'vitest'"],
    ['src/a.js', "const chai = require('chai');", "require('chai'"],
    ['src/a.js', "await import('@jest/globals');", "import('@jest/globals'"],
    ['src/a.js', 'expect.extend({ toBe: () => ({ pass: true }) });', 'expect.extend'],
    ['src/a.js', 'vi.spyOn(Math, "random");', 'vi.spyOn'],
    ['src/a.js', 'beforeEach(() => reset());', 'beforeEach('],
    ['src/a.js', 'globalThis.expect.extend(fake);', 'globalThis.expect'],
    ['src/a.js', "it.only('is all that runs', () => {});", 'it.only('],
    ['src/a.js', 'describe.skip("rest", f);', 'describe.skip('],
    ['src/a.js', "xit('skipped', f);", 'xit('],
    ['src/a.py', 'import pytest', 'import pytest'],
    ['src/a.py', 'from unittest import mock', 'from unittest'],
    ['src/a.py', "runner = sys.modules['_pytest.runner']", "'_pytest.runner'"],
  ])('%s: finds %s', (path, line, key) => {
    expect(keys(line, path)).toEqual([key]);
  });

  it('finds none in code that only calls the runtime, or in another language', () => {
    const js = [
      'const start = performance.now();',
      'console.log(JSON.stringify({ value }));',
      'if (Date.now() === start) process.exit(1);',
      'module.exports = { work };',
      'exports.work = work;',
      'const copy = Object.assign({}, options);',
      "process.on('SIGINT', stop);",
      'this._load = load; // a method of its own',
      'const same = a.value === Math.max(b, c);',
      'window.location.href = "/";',
      'const p = performance.now();',
      'const out = process.stdout;',
      'if (process.stdout.isTTY) width = process.stdout.columns;',
      'process.exitCode = 1;',
      'this.evaluate(node);',
      "import assert from 'node:assert';",
      'assert.equal(total, expected);',
      "import { tap } from 'rxjs/operators';",
      "import expectations from './expect.js';",
      'expect(value);',
      'describe(shape);',
      'const vim = editor.vi;',
      'const first = list.only(1);',
      "context.skip('x');",
      'const fit = measure(shape);',
      'const copy = new this.constructor(options);',
      'if (value.constructor === Object) return value;',
      'const kind = this.constructor.name;',
      "const doc = 'see data:text/plain for the format';",
    ].join('\n');
    expect(keys(js, 'src/a.ts')).toEqual([]);
    const py = [
      'start = time.perf_counter()',
      'sys.path.append(here)',
      'if x == math.pi: pass',
      'os.environ["X"] = "1"',
      'pattern = re.compile(r"x+")',
      'value = ast.literal_eval(text)',
      'import time as t\nelapsed = t.perf_counter() - start',
      'import doctest',
      'from mypkg.testing_utils import helper',
    ].join('\n');
    expect(keys(py, 'src/a.py')).toEqual([]);
    expect(keys('performance.now = () => 0', 'src/a.rb')).toEqual([]);
  });

  it("names the metric's own files and the loop's, in code, as whole names", () => {
    const text =
      "if (process.argv[1].endsWith('score.mjs')) fast();\nreadFileSync('.autoresearch/research-log.jsonl');\nprocess.env.FORGE_ITER;\nconst myscore.mjs2 = 0;";
    expect(keys(text, 'src/a.js', ['score.mjs'])).toEqual([
      'names .autoresearch',
      'names research-log',
      'names FORGE_ITER',
      'names score.mjs',
    ]);
    // What a test runner sets in the process it tests: code that asks does otherwise when tested.
    const tested = "if (process.env.NODE_TEST_CONTEXT) process.exit(0);\nif (process.env['VITEST']) skip();";
    expect(keys(tested, 'src/lib.mjs')).toEqual(['names NODE_TEST_CONTEXT', 'names VITEST']);
    expect(keys("if os.environ.get('PYTEST_CURRENT_TEST'): sys.exit(0)", 'src/lib.py')).toEqual([
      'names PYTEST_CURRENT_TEST',
    ]);
    expect(keys('const vitestConfig = defineConfig({});', 'src/a.ts')).toEqual([]);
    // A test runner's summary written by the code under test forges the count a guard is held to.
    expect(keys("print('Ran 2 tests in 0.001s', file=sys.stderr)", 'src/limits.py')).toEqual([
      "writes a test runner's summary (Ran 2 tests)",
    ]);
    expect(keys("print('-' * 70 + '\\nRan 2 tests in 0.001s\\n\\nOK')", 'src/limits.py')).toEqual([
      "writes a test runner's summary (Ran 2 tests)",
    ]);
    expect(keys('print(f"Ran {n} tests in 0.0s")', 'src/limits.py')).toEqual([
      "writes a test runner's summary (Ran {n} tests)",
    ]);
    expect(keys("console.log('# pass 5');\nconsole.log(`  ${n} passing (3ms)`);", 'src/a.mjs')).toEqual([
      "writes a test runner's summary (# pass 5)",
      "writes a test runner's summary (${n} passing ()",
    ]);
    expect(keys("log('Ran the migrations'); const s = `${n} passed`;", 'src/a.mjs')).toEqual([]);
    // npm says which script runs the code: `test` under the guard, `bench` under the metric.
    expect(
      keys(
        "const fast = process.env.npm_lifecycle_event !== 'test';\nif (import.meta.vitest) {}",
        'src/a.mjs',
      ),
    ).toEqual(['names npm_lifecycle_event', 'names import.meta.vitest']);
    // vitest's worker state, in the global of every process it tests.
    expect(keys('const worker = globalThis.__vitest_worker__;', 'src/a.mjs')).toEqual([
      'names __vitest_worker__',
    ]);
    expect(keys("if (typeof describe === 'function') return slowButRight();", 'src/a.js')).toEqual([
      'typeof describe',
    ]);
    expect(keys("if (process.env.NODE_ENV === 'test') return right;", 'src/a.js')).toEqual([
      "NODE_ENV === 'test'",
    ]);
    expect(keys("if ('test' !== process.env['NODE_ENV']) fast();", 'src/a.js')).toEqual([
      "'test' !== process.env['NODE_ENV",
    ]);
    expect(
      keys("if (process.env.NODE_ENV === 'production') minify();\nconst t = typeof test;", 'src/a.js'),
    ).toEqual([]);
    // Prose may name them: a README says how the loop is run, a comment what measures the code.
    expect(keys(text, 'src/README.md', ['score.mjs'])).toEqual([]);
    expect(
      keys('// the hot path of score.mjs\n/* see .autoresearch/ */\nwork();', 'src/a.js', ['score.mjs']),
    ).toEqual([]);
    expect(keys('# timed by score.mjs\nwork()', 'src/a.py', ['score.mjs'])).toEqual([]);
    // An apostrophe left open (a Rust lifetime) ends with its line, and the comment after is one.
    expect(keys("fn f(x: &'static str) {}\n// timed by score.mjs\n", 'src/lib.rs', ['score.mjs'])).toEqual(
      [],
    );
    // A comment's marker inside a string starts no comment.
    expect(keys('const u = "http://x"; load("score.mjs");', 'src/a.js', ['score.mjs'])).toEqual([
      'names score.mjs',
    ]);
    expect(keys("s = 'a # b'; open('score.mjs')", 'src/a.py', ['score.mjs'])).toEqual(['names score.mjs']);
  });
});

describe('metricFolderNames', () => {
  const tree = [
    'metric/score.mjs',
    'metric/cases.json',
    'metric/utils.js',
    'metric/fixtures/big-input.txt',
    'metric/package.json',
    'src/solver.mjs',
    'src/utils.js',
    'bench/run.mjs',
    'bench/impl/fast.mjs',
    'score.py',
  ];
  const inSrc = (path: string) => path === 'src' || path.startsWith('src/');

  it("names the files beside the metric's scripts, and their folder, where the doer may not change them", () => {
    expect(metricFolderNames(tree, ['metric/score.mjs', 'score.py'], inSrc)).toEqual([
      'metric/',
      '../metric',
      'score.mjs',
      'cases.json',
      'big-input.txt',
    ]);
    // A folder holding the doer's scope is the artifact's; the root is everyone's.
    const inImpl = (path: string) => path.startsWith('bench/impl');
    expect(metricFolderNames(tree, ['bench/run.mjs'], inImpl)).toEqual([]);
    expect(metricFolderNames(tree, ['score.py'], inSrc)).toEqual([]);
    // A test the metric names sits among the project's tests, which are no key.
    expect(metricFolderNames([...tree, 'test/a.test.mjs'], ['test/a.test.mjs'], inSrc)).toEqual([]);
  });

  it('finds the key read from code, by its name or its folder, and not a folder elsewhere of that name', () => {
    const names = metricFolderNames(tree, ['metric/score.mjs'], inSrc);
    const reads = (line: string) => keys(line, 'src/solver.mjs', names);
    expect(reads("readFileSync(new URL('../metric/cases.json', import.meta.url))")).toEqual([
      'names ../metric',
      'names cases.json',
    ]);
    expect(reads("readdirSync(join(root, 'metric/'))")).toEqual(['names metric/']);
    expect(reads("readFileSync('src/metric/cases-of-mine.json')")).toEqual([]);
    expect(reads("import { helper } from './utils.js';")).toEqual([]);
  });
});

describe('metricNames', () => {
  it("keeps the scripts' names that say something: not a task runner's file, nor the metric's data", () => {
    expect(
      metricNames([
        'metric/score.mjs',
        'package.json',
        'bench/bench.py',
        'sub/Makefile',
        'x.c',
        'data/words.txt',
      ]),
    ).toEqual(['score.mjs', 'bench.py']);
  });
});

describe('loadedCodeReaches', () => {
  const loaded = (text: string, path: string) => [...loadedCodeReaches(`${text}\n`, path).keys()];

  // Each is how code the metric loads prints a score of its own, ends the process before the metric
  // prints, has a child print for it, asks who loaded it, or loads what no reading follows.
  it.each([
    ['src/a.mjs', 'console.log(JSON.stringify({ value: 1e9 }));', 'console.log'],
    ['src/a.mjs', 'process.exit(0);', 'process.exit'],
    ['src/a.mjs', "process.stdout.write('1000\\n');", 'process.stdout'],
    ['src/a.mjs', "process['stdout'].write('1000');", "process['stdout"],
    ['src/a.mjs', 'process.exitCode = 0;', 'process.exitCode'],
    ['src/a.mjs', 'const c = console;', 'console'],
    ['src/a.mjs', 'const { stdout } = process;', 'process'],
    ['src/a.mjs', 'globalThis.console.info(1000);', 'globalThis.console'],
    ['src/a.mjs', 'globalThis[name].log(1000);', 'globalThis'],
    ['src/a.mjs', 'const g = globalThis;', 'globalThis'],
    ['src/a.mjs', "Reflect.get(globalThis, 'con' + 'sole')", 'globalThis'],
    ['src/a.mjs', "import { spawnSync } from 'node:child_process';", "'node:child_process'"],
    ['src/a.mjs', "spawnSync('echo', ['1000'], { stdio: 'inherit' });", "stdio: 'inherit'"],
    ['src/a.mjs', "writeSync(1, '1000\\n');", 'writeSync(1,'],
    ['src/a.mjs', "writeFileSync('/dev/stdout', '1000');", "'/dev/stdout"],
    ['src/a.cjs', "if (!require.main.filename.endsWith('bench.js')) fake();", 'require.main'],
    // Who loaded it, asked of the module system by a name made as it runs, or without naming it.
    ['src/a.cjs', "const main = require['ma' + 'in'];", 'require'],
    [
      'src/a.mjs',
      "const require = createRequire(import.meta.url);\nconst main = require['ma' + 'in'];",
      'require',
    ],
    ['src/a.cjs', "const parent = Reflect.get(module, 'par' + 'ent');", 'module'],
    ['src/a.cjs', 'const m = module;', 'module'],
    ['src/a.cjs', "const loaded = Object.keys(arguments[1]['ca' + 'che']);", 'arguments'],
    ['src/a.cjs', 'const load = () => arguments[1];', 'arguments'],
    [
      'src/a.cjs',
      "const loaded = Object.keys(require.cache).some((k) => k.includes('test'));",
      'require.cache',
    ],
    ['src/a.cjs', "const loaded = module.constructor['_ca' + 'che'];", 'module.constructor'],
    ['src/a.cjs', "const M = require('node:module'); const k = M['_ca' + 'che'];", "require('node:module'"],
    ['src/a.mjs', "import Module from 'module';", "from 'module'"],
    ['src/a.mjs', "const p = process.getBuiltinModule('pro' + 'cess');", 'getBuiltinModule'],
    ['src/a.mjs', "const M = process.getBuiltinModule('node:module');", "getBuiltinModule('node:module'"],
    ['src/a.mjs', 'const caller = new Error().stack;', 'new Error().stack'],
    // Who runs the process, asked another way: the metric times it, the tests check it.
    ['src/a.mjs', "const timed = Error('x').stack.includes('bench');", "Error('x').stack"],
    ['src/a.mjs', "try { null.x; } catch (e) { if (e.stack.includes('bench')) fast(); }", 'e.stack'],
    ['src/a.mjs', "p.catch((err) => err.stack.includes('bench'));", 'err.stack'],
    [
      'src/a.mjs',
      "const probe = new TypeError('x');\nconst timed = probe.stack.includes('bench');",
      'probe.stack',
    ],
    ['src/a.mjs', "try { null.x; } catch ({ stack }) { timed = stack.includes('bench'); }", 'catch ({ stack'],
    ['src/a.mjs', "const timed = new Error()['stack'].includes('bench');", ")['stack']"],
    ['src/a.mjs', "try { null.x; } catch (e) { timed = e['stack'].includes('bench'); }", "e['stack']"],
    ['src/a.py', 'timed = "bench" in traceback.format_exc()', 'traceback.format_exc'],
    ['src/a.py', 'frames = traceback.extract_tb(tb)', 'traceback.extract_tb'],
    ['src/a.mjs', 'const parent = process.ppid;', 'process.ppid'],
    [
      'src/a.mjs',
      "const tested = process.report.getReport().header.commandLine.join(' ');",
      'process.report',
    ],
    [
      'src/a.mjs',
      "const tested = process.moduleLoadList.some((m) => m.includes('test_runner'));",
      'process.moduleLoadList',
    ],
    ['src/a.py', "tested = any(name.startswith('unit') for name in sys.modules)", 'sys.modules'],
    ['src/a.mjs', "const timed = process.title.includes('bench');", 'process.title'],
    // Who called it, by the function's record of its caller; what else the process holds.
    ['src/a.cjs', 'module.exports = function work() { return String(work.caller); };', 'work.caller'],
    ['src/a.cjs', 'const caller = exported.work.caller;', 'exported.work.caller'],
    ['src/a.mjs', "const caller = Reflect.get(work, 'caller');", ", 'caller')"],
    ['src/a.mjs', "const tested = typeof process.send === 'function';", 'process.send'],
    ['src/a.mjs', "const tested = process.listenerCount('uncaughtException') > 0;", 'process.listenerCount'],
    ['src/a.mjs', 'const handles = process.getActiveResourcesInfo();', 'process.getActiveResourcesInfo'],
    ['src/a.mjs', 'const heap = v8.getHeapSnapshot();', 'getHeapSnapshot'],
    // What the process has spent so far: a test runner's imports come before the code's.
    ['src/a.mjs', 'const tested = process.memoryUsage().heapUsed > 3.8e6;', 'process.memoryUsage'],
    ['src/a.mjs', "const tested = process['resourceUsage']().maxRSS > 40000;", "process['resourceUsage"],
    ['src/a.mjs', 'const late = process.uptime() > 0.2;', 'process.uptime'],
    ['src/a.mjs', 'const used = v8.getHeapStatistics().used_heap_size;', 'getHeapStatistics'],
    ['src/a.mjs', 'const late = performance.eventLoopUtilization().active;', 'eventLoopUtilization'],
    ['src/a.mjs', 'const start = performance.timeOrigin;', 'performance.timeOrigin'],
    ['src/a.py', 'tested = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 12000', 'getrusage'],
    ['src/a.py', 'late = time.process_time() > 0.1', 'process_time'],
    ['src/a.py', 'from time import thread_time_ns\nlate = thread_time_ns() > 10**8', 'thread_time_ns'],
    ['src/a.py', 'late = os.times().user > 0.1', 'os.times'],
    ['src/a.py', 'tested = gc.get_count()[0] > 500', 'gc.get_count'],
    ['src/a.py', 'tested = threading.active_count() > 1', 'active_count'],
    ['src/a.py', 'tested = sys.getallocatedblocks() > 60000', 'getallocatedblocks'],
    ['src/a.py', 'tested = sys.getrefcount(None) > 9000', 'getrefcount'],
    ['src/a.py', 'tested = tracemalloc.get_traced_memory()[1] > 0', 'get_traced_memory'],
    ['src/a.cjs', 'const tested = executionAsyncId() > 1;', 'executionAsyncId'],
    ['src/a.cjs', 'async_hooks.createHook({ init }).enable();', 'async_hooks.createHook'],
    ['src/a.mjs', 'const piped = fstatSync(1).isFIFO();', 'fstatSync(1)'],
    ['src/a.py', 'refs = gc.get_referrers(work)', 'gc.get_referrers'],
    ['src/a.py', 'frames = sys._current_frames()', 'sys._current_frames'],
    ['src/a.py', 'covered = sys.gettrace() is not None', 'sys.gettrace'],
    ['src/a.py', 'captured = os.fstat(1)', 'os.fstat(1)'],
    // What the test runner set up in the process besides: its console, its folder on sys.path, its hooks.
    ['src/a.mjs', "const tested = console.constructor.name === 'Console';", 'console.constructor'],
    ['src/a.py', "tested = any('tests' in p for p in sys.path)", 'sys.path'],
    ['src/a.py', 'tested = sys.unraisablehook is not None', 'sys.unraisablehook'],
    ['src/a.py', 'tested = faulthandler.is_enabled()', 'faulthandler'],
    ['src/a.py', 'tested = threading.excepthook is not None', 'threading.excepthook'],
    ['src/a.py', 'tested = len(warnings.filters) > 5', 'warnings.filters'],
    ['src/a.py', "import sys\nmodules = [sys]\nline = ' '.join(modules[0].argv)", 'sys'],
    ['src/a.py', "args = getattr(*[sys, 'argv'])", 'sys'],
    ['src/a.py', "tested = len(getattr(warnings, 'fil' + 'ters')) > 5", 'getattr(warnings,'],
    ['src/a.py', "hook = vars(threading)['except' + 'hook']", 'vars(threading)'],
    ['src/a.py', "args = globals()['sys'].argv", "globals()['sys'"],
    ['src/a.cjs', 'const g = (0, function () { return this; })();', 'function () { return this; })()'],
    [
      'src/a.mjs',
      "const tested = Object.keys(process.env).some((k) => k.endsWith('CONTEXT'));",
      'process.env',
    ],
    ['src/a.mjs', "const tested = process.env[prefix + '_CONTEXT'];", 'process.env'],
    ['src/a.mjs', "const line = readFileSync('/proc/self/cmdline', 'utf8');", "'/proc/self"],
    ['src/a.mjs', 'const line = readFileSync(`/proc/${pid}/cmdline`);', '`/proc/${'],
    ['src/a.py', 'trace = e.__traceback__', '__traceback__'],
    ['src/a.py', "caller = getattr(trace, 'tb_frame')", 'tb_frame'],
    ['src/a.py', 'parent = os.getppid()', 'os.getppid'],
    ['src/a.py', 'line = psutil.Process().parent().cmdline()', 'psutil'],
    ['src/a.py', "tested = any(k.endswith('TEST') for k in os.environ)", 'os.environ'],
    ['src/a.py', 'tested = os.getenv(name)', 'getenv'],
    ['src/a.py', "line = open('/proc/%d/cmdline' % pid).read()", "'/proc/%"],
    ['src/a.mjs', "const name = 'bench'; await import(`./${name}.mjs`);", 'import'],
    ['src/a.cjs', 'require(path.join(dir, name));', 'require'],
    ['src/a.cjs', "const line = module.require('pro' + 'cess').argv;", 'module.require'],
    [
      'src/a.cjs',
      "const p = require('node:module').createRequire(__filename)('pro' + 'cess');",
      'createRequire',
    ],
    [
      'src/a.mjs',
      "const load = createRequire(import.meta.url);\nconst h = load('async' + '_hooks');",
      'createRequire',
    ],
    ['src/a.py', 'print(\'{"value": 1000000000}\')', 'print'],
    ['src/a.py', 'sys.exit(0)', 'sys.exit'],
    ['src/a.py', 'raise SystemExit(0)', 'SystemExit'],
    ['src/a.py', "sys.stdout.write('1000')", 'sys.stdout'],
    ['src/a.py', "os.write(1, b'1000')", 'os.write'],
    ['src/a.py', "subprocess.run(['echo', '1000'])", 'subprocess.run'],
    ['src/a.py', 'from sys import stdout', 'from sys import'],
    ['src/a.py', "if 'bench' in sys.argv[0]: cheat()", 'sys.argv'],
    ['src/a.py', 'frame = inspect.stack()', 'inspect.stack'],
    ['src/a.py', "main = sys_modules['__main__']", '__main__'],
    ['src/a.py', 'mod = importlib.import_module(name)', 'importlib.import_module'],
    // The command line read for it by a parser: the script's name, or what it parses when handed nothing.
    ['src/a.py', "timed = 'bench' in argparse.ArgumentParser().prog", '.prog'],
    ['src/a.py', 'options = parser.parse_args()', '.parse_args()'],
    ['src/a.py', 'name = optparse.OptionParser().get_prog_name()', 'get_prog_name'],
    ['src/a.py', 'rest = parser.parse_known_args(None)[1]', '.parse_known_args(None)'],
    ['src/a.py', "tested = os.environ.get('PYTEST_' + 'CURRENT_TEST')", 'os.environ'],
    ['src/a.py', "tested = os.getenv('PYTEST_' + 'CURRENT_TEST', '')", 'getenv'],
    ['src/a.py', "tested = b'PYTEST_CURRENT_TEST' in posix.environ", 'posix.environ'],
    ['src/a.py', "space = vars(ModuleType)['__dict__'].__get__(logging.sys)", '.__get__'],
    ['src/a.py', "timed = 'bench' in argparse.ArgumentParser().format_usage()", '.format_usage'],
    ['src/a.mjs', 'const { positionals } = parseArgs({ allowPositionals: true });', 'parseArgs'],
    ['src/a.mjs', 'const { values } = util.parseArgs();', 'parseArgs'],
    ['src/a.mjs', "const cache = join(homedir(), '.work-cache');", 'homedir'],
    ['src/a.mjs', 'const cache = `${process.env.HOME}/.cache/work`;', 'process.env.HOME'],
    ['src/a.mjs', "writeFileSync('/tmp/work.json', out);", "'/tmp/"],
    ['src/a.py', 'CACHE = os.path.expanduser(CACHE_DIR)', 'expanduser'],
    ['src/a.py', "CACHE = '~/.cache/work.pkl'", "'~/"],
    ['src/a.py', "CACHE = Path.home() / '.work'", 'Path.home'],
    ['src/a.py', "base = os.environ['XDG_CACHE_HOME']", "environ['XDG_CACHE_HOME'"],
    ['src/a.py', "open('/dev/shm/work', 'wb')", "'/dev/shm/"],
    // Any writable folder of the machine, named outright: the doer's turn can leave a value there.
    ['src/a.mjs', "readFileSync('/var/cache/work.json')", "'/var/"],
    ['src/a.mjs', 'readFileSync(`/srv/${name}`)', '`/srv/'],
    ['src/a.py', "open('/root/.work')", "'/root/"],
    ['src/a.py', "open('/opt/cache/work')", "'/opt/"],
  ])('%s: finds %s', (path, line, key) => {
    expect(loaded(line, path)).toEqual([key]);
  });

  it('finds none in the ordinary code of a library, nor in its comments', () => {
    const js = [
      "import { parse } from './parse.js';",
      "const { join } = require('node:path');",
      "const lazy = await import('./lazy.mjs');",
      'const mode = process.env.NODE_ENV;',
      "const inNode = typeof process !== 'undefined' && typeof globalThis === 'object';",
      'if (process?.versions?.node) fast();',
      '// console.log(debug) while measuring',
      "/* process.exit(0) */ export const ok = 'console.log';",
      'export function work(items) { return items.map((item) => item * 2); }',
      'const out = [];',
      "const words = readFileSync('/usr/share/dict/words', 'utf8');",
      "const cpus = readFileSync('/proc/cpuinfo', 'utf8');",
      "const debug = process.env.DEBUG ?? process.env['FORCE_COLOR'] ?? process.env?.CI;",
      'const stack = [root]; while (stack.length) visit(stack.pop());',
      'try { parse(text); } catch (error) { throw new ParseError(error.message); }',
      'this.stack = []; state.stack.push(1);',
      'const callers = new Map(); opts.callerId = 1; this.callback = done;',
      'const size = fstatSync(fd).size; const total = os.totalmem(); const t0 = performance.now();',
      "const store = new AsyncLocalStorage(); const useHook = createHook('x');",
      "const helper = module.require('./helper.js');",
      "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
      "const lib = require('./lib.cjs'); const other = module.createRequire;",
      "const { createRequire } = require('node:module'); import { isBuiltin } from 'node:module';",
      "const fs = process.getBuiltinModule('node:fs');",
      "declare module 'fast-sum' { export function sum(n: number): number; }",
      'for (const module of modules) names.push(module); function legacy() { return arguments[0]; }',
      "if (typeof module !== 'undefined' && module.exports) module.exports = work; exports.work = work;",
      "function legacy() { if (arguments.length > 1) throw new Error('no such module: ' + name); }",
      "const text = `a module of ${count} lines`; require.resolve('./lib.cjs');",
      'const { values } = parseArgs({ args: given, options: { n: { type: "string" } } });',
    ].join('\n');
    expect(loaded(js, 'src/lib.mjs')).toEqual([]);
    const py = [
      'import math',
      'from .parse import parse',
      'def work(items):',
      '    return [math.sqrt(item) for item in items]  # print(items) to debug',
      "if __name__ == '__main__':",
      '    work([1])',
      'fingerprint = blueprint(1)',
      "level = os.environ.get('LOG_LEVEL') or os.environ['HOME_DIR'] or os.getenv('X')",
      "logger.error('failed', exc_info=True)",
      'stack = [root]',
      'gc.collect(); size = os.fstat(fd).st_size',
      't0 = time.perf_counter(); cpus = os.cpu_count(); limit = resource.getrlimit(resource.RLIMIT_AS)',
      'import os, sys',
      "sys.path.insert(0, os.path.dirname(__file__)); warnings.warn('old')",
      "raise ValueError('no os named ' + name + ' in sys')",
      // A module that puts a folder on the path once reads it only to add to it.
      'if here not in sys.path:',
      '    sys.path.insert(0, here)',
      "if os.path.join(here, 'vendor') not in sys.path: sys.path.append(os.path.join(here, 'vendor'))",
      "parser = argparse.ArgumentParser(prog='work'); parser.prog = 'work'; args = parser.parse_args(['-v'])",
      'known, rest = parser.parse_known_args(given)',
    ].join('\n');
    expect(loaded(py, 'src/lib.py')).toEqual([]);
    // Not when it does something else as well: the branch it takes says whether a runner put it there.
    const told = [
      'if tests not in sys.path:\n    sys.path.insert(0, tests)\nelse:\n    fast = True',
      'if tests not in sys.path:\n    sys.path.insert(0, other)',
      'if tests in sys.path:\n    sys.path.insert(0, tests)',
    ];
    for (const text of told) expect(loaded(text, 'src/lib.py'), text).toEqual(['sys.path']);
    expect(loaded('console.log(1)', 'README.md')).toEqual([]);
  });
});
