// The part of the Node read watch (node-read-watch.ts) that sees a line of the doer's read an error's
// stack, by whatever name: `e['st' + 'ack']`, `Reflect.get(e, 'stack')`, a getter taken from its
// descriptor. The stack names the files that called the code, so code that reads it can tell the
// metric that times it from the tests that check it (runtime-reach.ts reads the plain forms, `e.stack`).
// V8 formats a stack when it is first read, through Error.prepareStackTrace, with the reader on the
// stack: Node puts its own formatter there (20.20 here does), and the watch wraps it to note a reader of
// the scope's, then formats as Node does. Where Node has none there (older releases), or another was
// set before, it is left: only the reading sees `e.stack` there.

import { TELLING_VARIABLES } from './read-log.js';

/**
 * JavaScript run inside the read watch's function, with the names it and the preload define
 * (`capture`, `entry`, `maybeDoers`, `seen`, `times`, `MOST`, `quote`, `readLog`, `spawnedBy`, `depth`) found as
 * it runs.
 */
export const NODE_STACK_WATCH = `
  // What the process itself says (its stack, its command line), asked from \`where\`: logged with no
  // path and with its main script (a program of the doer's asks of its own), a few stacks an event.
  var noteWho = function (event, where) {
    if (spawnedBy) where = where.concat([spawnedBy]);
    var key = event + '\\u0000' + where.join('\\u0000');
    if (seen[key] || (times[event] || 0) >= MOST) return;
    seen[key] = true;
    times[event] = (times[event] || 0) + 1;
    var line = '{"pid":' + process.pid + ',"event":' + quote(event) + ',"path":"","kind":"who","write":false,"ctimeMs":null,"frames":[' +
      where.map(quote).join(',') + ']' + (entry === null ? '' : ',"entry":' + quote(entry)) + '}';
    var fd = openSync(readLog, 'a');
    try { writeSync(fd, line + '\\n'); } finally { closeSync(fd); }
  };
  var nodeFormat = Error.prepareStackTrace;
  if (typeof nodeFormat === 'function' && nodeFormat.name === 'ErrorPrepareStackTrace') {
    // Inside a format V8 formats no other stack through this function: the frames above are read from
    // the text it gives (\`    at f (/abs/file.js:3:9)\`). The reader is the first with a file above
    // Node's own formatting (a builtin such as Reflect.get has none); Node's code reading a stack for
    // its ends (util.inspect) is not the doer's.
    var FRAME = /^\\s*at (?:.*? \\()?(.+?):(\\d+):\\d+\\)?$/;
    var stackRead = function (above) {
      var holder = {}, limit = Error.stackTraceLimit;
      try { Error.stackTraceLimit = 64; capture(holder, above); } finally { Error.stackTraceLimit = limit; }
      var lines = typeof holder.stack === 'string' ? holder.stack.split('\\n') : [];
      var where = [], reader = null;
      for (var i = 1; i < lines.length; i += 1) {
        var m = FRAME.exec(lines[i]);
        if (m === null) continue;
        var file = m[1].indexOf('file://') === 0 ? toPath(m[1]) : m[1];
        if (file.indexOf('node:internal/errors') === 0) continue;
        if (reader === null) reader = file;
        if (path.isAbsolute(file)) where.push(file + ':' + m[2]);
      }
      if (reader === null || !maybeDoers(reader + ':0')) return;
      noteWho('stack', where);
    };
    Error.prepareStackTrace = function prepareStackTrace(error, trace) {
      if (depth === 0) {
        depth += 1;
        try { stackRead(prepareStackTrace); } catch (_) {} finally { depth -= 1; }
      }
      return apply(nodeFormat, this, arguments);
    };
  }
`;

/**
 * JavaScript run inside the read watch's function after NODE_STACK_WATCH, with the same names, its
 * `noteWho` and the read watch's `frames`. Who runs the process, asked of `process`: its command line (`process.argv`, `execArgv`),
 * by whatever route reaches the object (a name made as it runs, `Reflect.get`, a spread). The values
 * become accessors whose reads note a reader of the tree (the first frame with a file; Node's own
 * code reading them for its ends is not the doer's) as `who`, event `process.argv`, with the process's
 * main script: a program of the doer's reads its own command line, its input (outside-reads.ts knows
 * the scope; the watch does not).
 */
export const NODE_ARGV_WATCH = `
  // Node's own code that reads the command line to hand it to its caller (util.parseArgs, handed no
  // arguments): its read is the asking of the line that called it.
  var RELAYS = [['node:internal/util/parse_args/', ' through util.parseArgs']];
  var relayOf = function (file) {
    for (var r = 0; r < RELAYS.length; r += 1) if (file.indexOf(RELAYS[r][0]) === 0) return RELAYS[r][1];
    return null;
  };
  var askedWho = function (event, above) {
    var sites = callSites(above), reader = null, through = null;
    for (var i = 0; i < sites.length && reader === null; i += 1) {
      var file = sites[i].getFileName();
      if (typeof file !== 'string' || file === '') continue;
      file = file.indexOf('file://') === 0 ? toPath(file) : file;
      // The reader is the first frame with a file; past a relay, the first of a file on disk.
      if (through === null && (through = relayOf(file)) !== null) continue;
      if (through === null || path.isAbsolute(file)) reader = file;
    }
    if (reader === null || !path.isAbsolute(reader) || !maybeDoers(reader + ':0')) return;
    var where = frames(above);
    if (where !== null) noteWho(through === null ? event : event + through, where);
  };
  // A stack costs some 16 µs, and a loop may read a value on every turn (\`i < Number(process.argv[2])\`):
  // the first 1,000 reads of each are looked at, then the 1,024th, the 2,048th and so on. A line of the
  // scope that reads it is looked at the first time, unless 1,000 reads by others came first.
  var asking = function (event, above, count) {
    if (depth !== 0 || (count > 1000 && (count & (count - 1)) !== 0)) return;
    depth += 1;
    try { askedWho(event, above); } catch (_) {} finally { depth -= 1; }
  };
  ['argv', 'execArgv', 'moduleLoadList'].forEach(function (name) {
    var held = Object.getOwnPropertyDescriptor(process, name);
    if (!held || !('value' in held) || !held.configurable) return;
    var value = held.value, event = 'process.' + name, reads = 0;
    var read = function () {
      asking(event, read, (reads += 1));
      return value;
    };
    Object.defineProperty(process, name, {
      configurable: true,
      enumerable: held.enumerable,
      get: read,
      set: function (given) { value = given; },
    });
  });
`;

/**
 * JavaScript run inside the read watch's function after NODE_ARGV_WATCH, with the same names. Who runs
 * the process, asked of its environment: a variable a test runner sets in the processes it tests
 * (`NODE_TEST_CONTEXT` under `node --test`, `VITEST…`, `JEST_WORKER_ID`, `MOCHA_…`, npm's
 * `npm_lifecycle_event`, pytest's) or Forge's own (`FORGE_…`), read by a line of the scope however it
 * reached the object (seen before: `createRequire(__filename)('pro' + 'cess').env['NODE_TEST_' +
 * 'CONTEXT']`, kept at 700 times its speed with the tests green; the reading counts `process.env` read
 * by a made name, not the object reached another way). `process.env` becomes a proxy of itself whose
 * reads and `in` of such a name note a reader of the tree as `who` (`process.env.NODE_TEST_CONTEXT`),
 * set or not. A line that copies the whole environment (`{ ...process.env }`, `Object.entries`) lists
 * its names first: its reads at that place are not asking. (A proxy cannot be structured-cloned:
 * `structuredClone(process.env)` throws under the watch.)
 */
export const NODE_ENV_WATCH = `
  var TELLING_STARTS = ${JSON.stringify(TELLING_VARIABLES.starts)};
  var TELLING_NAMES = ${JSON.stringify(TELLING_VARIABLES.names)};
  var telling = function (key) {
    if (typeof key !== 'string') return false;
    if (TELLING_NAMES.indexOf(key) !== -1) return true;
    for (var t = 0; t < TELLING_STARTS.length; t += 1) if (key.indexOf(TELLING_STARTS[t]) === 0) return true;
    return false;
  };
  // Where the code above \`above\` is: the first frame with a file, as file:line:column.
  var placeOf = function (above) {
    var sites = callSites(above);
    for (var i = 0; i < sites.length; i += 1) {
      var file = sites[i].getFileName();
      if (typeof file === 'string' && file !== '') {
        return { file: file.indexOf('file://') === 0 ? toPath(file) : file, at: file + ':' + sites[i].getLineNumber() + ':' + sites[i].getColumnNumber() };
      }
    }
    return null;
  };
  var realEnv = process.env, listedAt = null;
  var envAsked = function (key, above) {
    var place = placeOf(above);
    if (place === null || place.at === listedAt || !path.isAbsolute(place.file) || !maybeDoers(place.file + ':0')) return;
    var where = frames(above);
    if (where !== null) noteWho('process.env.' + key, where);
  };
  // A read, \`in\`, or a look at the property (\`Object.hasOwn\`), each answered by the environment itself.
  var traps = {}, reflect = { get: Reflect.get, has: Reflect.has, getOwnPropertyDescriptor: Reflect.getOwnPropertyDescriptor };
  ['get', 'has', 'getOwnPropertyDescriptor'].forEach(function (trap) {
    var answer = reflect[trap];
    traps[trap] = function asked(target, key) {
      if (depth === 0 && telling(key)) {
        depth += 1;
        try { envAsked(key, asked); } catch (_) {} finally { depth -= 1; }
      }
      return answer(target, key);
    };
  });
  var keysOf = Reflect.ownKeys;
  traps.ownKeys = function ownKeys(target) {
    if (depth === 0) {
      depth += 1;
      try { var place = placeOf(ownKeys); listedAt = place === null ? null : place.at; } catch (_) {} finally { depth -= 1; }
    }
    return keysOf(target);
  };
  // A value set is set on the environment itself: set through the proxy, an existing name would be
  // redefined with its value alone, which process.env refuses (npm sets HOME so, and failed).
  traps.set = function (target, key, value) {
    target[key] = value;
    return true;
  };
  var watchedEnv = new Proxy(realEnv, traps);
  var heldEnv = Object.getOwnPropertyDescriptor(process, 'env');
  if (heldEnv && heldEnv.value === realEnv && heldEnv.configurable) {
    Object.defineProperty(process, 'env', { value: watchedEnv, writable: true, configurable: true, enumerable: heldEnv.enumerable });
  }
`;

/**
 * JavaScript run inside the read watch's function after NODE_ARGV_WATCH, with its `asking`. What the
 * process has spent so far (its memory, CPU time, the time since it started), asked by a line of the
 * scope by whatever route reaches `process` (seen before: `process.memoryUsage().heapUsed > 3.8e6` told
 * a `node --test` process from a benchmark's, kept at 74 times its score; the reading counts the
 * names said, not a function reached another way). Each becomes a function that notes its caller as
 * `who` (`process.memoryUsage()`), looked at as the command line is: the first 1,000 calls, then the
 * 1,024th, 2,048th… `v8.getHeapStatistics` is left to the reading: loading `v8` would cost every start.
 * So is the asynchronous context it runs in (`async_hooks.executionAsyncId()` and its kin), by whatever
 * route reaches the module (seen before: through a require made by `createRequire`, kept at 2,000 times
 * its score).
 */
export const NODE_SPEND_WATCH = `
  var spent = function (owner, name, event) {
    var real = owner[name];
    // (Nothing is wrapped if the command line's watch could not be set up: its \`asking\` decides.)
    if (typeof real !== 'function' || typeof asking !== 'function') return;
    var calls = 0;
    var watched = function () {
      asking(event, watched, (calls += 1));
      return Reflect.apply(real, this, arguments);
    };
    Object.defineProperty(watched, 'name', { value: real.name });
    Object.defineProperty(watched, 'length', { value: real.length });
    // What hangs on the function itself (\`process.memoryUsage.rss\`) stays there.
    Object.keys(real).forEach(function (key) { watched[key] = real[key]; });
    owner[name] = watched;
  };
  spent(process, 'memoryUsage', 'process.memoryUsage()');
  spent(process.memoryUsage, 'rss', 'process.memoryUsage.rss()');
  spent(process, 'resourceUsage', 'process.resourceUsage()');
  spent(process, 'cpuUsage', 'process.cpuUsage()');
  spent(process, 'uptime', 'process.uptime()');
  // Which asynchronous context it runs in (a test runner calls each test in one of its own; a benchmark's
  // loop runs in the first): \`async_hooks\` is loaded at every start already.
  var hooks = require('async_hooks');
  ['executionAsyncId', 'executionAsyncResource', 'triggerAsyncId', 'createHook'].forEach(function (name) {
    spent(hooks, name, 'async_hooks.' + name + '()');
  });
`;
