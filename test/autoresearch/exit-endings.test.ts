// Which exit calls a watched run logged were the doer's code ending a process that decides a check
// (src/autoresearch/exit-endings.ts): in a test process or the metric's, by the innermost code that is
// neither Node's nor a package's; never a program of the doer's own ending itself.
import { describe, expect, it } from 'vitest';
import { doerEndings, type EndingRules } from '../../src/autoresearch/exit-endings.js';
import type { ExitRecord } from '../../src/infra/exit-watch.js';

const ROOT = '/w/repo';
const rules: EndingRules = {
  roots: ['/link/repo', ROOT],
  scope: ['src/'],
  commandFiles: ['metric/bench.mjs'],
};

function exit(record: Partial<ExitRecord>): ExitRecord {
  return {
    pid: 1,
    entry: `${ROOT}/test/a.test.mjs`,
    test: true,
    via: 'exit',
    code: 0,
    frames: [],
    ...record,
  };
}

const LOADING = ['node:internal/modules/esm/module_job:195', 'node:internal/modules/run_main:109'];

describe("the doer's exits", () => {
  it.each<[string, Partial<ExitRecord>, string]>([
    [
      'at the top of a module a test loads',
      { frames: [`${ROOT}/src/index.mjs:1`, ...LOADING] },
      'ended the process of test/a.test.mjs with process.exit(0), called from src/index.mjs:1',
    ],
    [
      'through a package the doer’s code calls',
      { frames: [`${ROOT}/node_modules/exit/index.js:3`, `${ROOT}/src/lib.mjs:9`, ...LOADING] },
      'ended the process of test/a.test.mjs with process.exit(0), called from src/lib.mjs:9',
    ],
    [
      'in the metric’s own process, with a failing code',
      { entry: `${ROOT}/metric/bench.mjs`, test: false, code: 1, frames: [`${ROOT}/src/lib.mjs:2`] },
      'ended the process of metric/bench.mjs with process.exit(1), called from src/lib.mjs:2',
    ],
    [
      'handed to a timer in a test process',
      { frames: ['node:internal/timers:573', 'node:internal/process/task_queues:140'] },
      "ended the process of test/a.test.mjs with process.exit(0), handed to Node's timers or events so that no code called it",
    ],
    [
      'by reallyExit, in mocha’s process, the tree seen through a link',
      {
        entry: `${ROOT}/node_modules/mocha/bin/mocha.js`,
        via: 'reallyExit',
        frames: ['/link/repo/src/a.mjs:4'],
      },
      'ended the process of node_modules/mocha/bin/mocha.js with process.reallyExit(0), called from src/a.mjs:4',
    ],
    // Records as the preload logged them here (mocha 11, Node 20).
    [
      'handed to mocha as a hook',
      {
        entry: `${ROOT}/node_modules/mocha/bin/mocha.js`,
        frames: [
          `${ROOT}/node_modules/mocha/lib/runnable.js:366`,
          `${ROOT}/node_modules/mocha/lib/runner.js:619`,
          'node:internal/timers:483',
        ],
      },
      'ended the process of node_modules/mocha/bin/mocha.js with process.exit(0), handed to the test runner as a test or a hook so that no code called it',
    ],
    [
      'handed to node:test as a hook',
      {
        frames: [
          'node:async_hooks:206',
          'node:internal/test_runner/test:796',
          'node:internal/test_runner/harness:297',
          `${ROOT}/test/a.test.mjs:2`,
        ],
      },
      'ended the process of test/a.test.mjs with process.exit(0), handed to the test runner as a test or a hook so that no code called it',
    ],
    [
      'in a test file the doer may write',
      { frames: [`${ROOT}/src/a.test.mjs:2`] },
      'ended the process of test/a.test.mjs with process.exit(0), called from src/a.test.mjs:2',
    ],
  ])('%s', (_name, record, phrase) => {
    expect(doerEndings([exit(record)], rules)).toEqual([phrase]);
  });

  it('one phrase for the same call in many processes', () => {
    const record = exit({ frames: [`${ROOT}/src/index.mjs:1`] });
    expect(doerEndings([record, { ...record, pid: 2 }], rules)).toHaveLength(1);
  });
});

describe('exits that are not the doer’s doing', () => {
  it.each<[string, Partial<ExitRecord>]>([
    [
      'a program of the doer’s a test starts',
      { entry: `${ROOT}/src/cli.mjs`, test: false, frames: [`${ROOT}/src/cli.mjs:3`] },
    ],
    [
      'a CLI outside the scope whose code in the scope ends it',
      {
        entry: `${ROOT}/bin/cli.mjs`,
        test: false,
        frames: [`${ROOT}/src/run.mjs:30`, `${ROOT}/bin/cli.mjs:2`],
      },
    ],
    [
      'mocha ending its run (--exit)',
      {
        entry: `${ROOT}/node_modules/mocha/bin/mocha.js`,
        frames: [
          `${ROOT}/node_modules/mocha/lib/cli/run-helpers.js:64`,
          'node:internal/streams/writable:710',
          'node:internal/process/task_queues:81',
        ],
      },
    ],
    [
      'the test runner ending its run',
      {
        entry: `${ROOT}/node_modules/mocha/bin/mocha.js`,
        frames: [`${ROOT}/node_modules/mocha/lib/cli/run-helpers.js:40`, 'node:internal/timers:573'],
      },
    ],
    [
      'node --test’s own call',
      { frames: ['node:internal/test_runner/harness:200', 'node:internal/timers:573'] },
    ],
    ['the test file’s own call', { frames: [`${ROOT}/test/a.test.mjs:9`, `${ROOT}/src/lib.mjs:4`] }],
    [
      'the metric’s closure, called back by the doer’s library',
      {
        entry: `${ROOT}/metric/bench.mjs`,
        test: false,
        frames: [`${ROOT}/metric/bench.mjs:7`, `${ROOT}/src/lib.mjs:12`],
      },
    ],
    [
      'a timer’s call in a process that runs no tests',
      { entry: `${ROOT}/tools/x.mjs`, test: false, frames: ['node:internal/timers:573'] },
    ],
    ['a test process outside the tree', { entry: '/elsewhere/t.mjs', frames: ['/elsewhere/src/a.mjs:1'] }],
    [
      'an installed package the scope holds',
      { frames: [`${ROOT}/src/node_modules/x/index.js:1`, 'node:internal/timers:1'] },
    ],
  ])('%s', (_name, record) => {
    expect(doerEndings([exit(record)], rules)).toEqual([]);
  });
});
