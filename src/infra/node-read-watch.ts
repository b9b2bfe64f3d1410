// The read watch for Node processes, the counterpart of python-watch.ts: part of the exit watch's
// preload (exit-watch.ts), so every Node process of a watched run loads it through NODE_OPTIONS. It
// wraps the `fs` functions that read, list or test a path (their promise forms, and the `fs` binding's
// own functions that they call, which code can call too) so that a path in git's, Forge's or br's
// folder, or outside the trees and the places a Node run reads as a matter of course, is logged with
// the stack, in the same log and shape as Python's records; outside-reads.ts says which were the
// doer's. `fs.statSync(p).size` and `fs.existsSync(p)` carry a value as well as a read does, so they
// count. A write to the watch's own folder is refused. Node's CommonJS loader reads through `fs` too,
// so a module required from such a place is seen; ES modules are loaded by Node's own code and are
// the static reading's (runtime-reach.ts) to judge. A read of the metric's own files
// (read-log.ts's WATCH_KEYS_VAR) in a program of the doer's carries its entry, whatever read it; one
// with no file at all on the stack, not by the module loader, is logged as no one's (`orphan`).
import {
  BINDING_CALLS,
  NATIVE_FORMS,
  PROMISE_READS,
  PROMISE_WRITES,
  READS,
  TWO_PATHS,
  WRITES,
} from './node-fs-calls.js';
import { NODE_ARGV_WATCH, NODE_ENV_WATCH, NODE_SPEND_WATCH, NODE_STACK_WATCH } from './node-stack-watch.js';
import { READ_LOG_VAR, WATCH_BY_VAR, WATCH_KEYS_VAR, WATCH_ROOTS_VAR } from './read-log.js';

/**
 * The preload's part that watches reads: CommonJS run inside the preload's own function, after `fs`,
 * `path`, `url`, `apply` and its `callSites` were taken. Nothing it does may throw, except its refusal.
 */
export const NODE_READ_WATCH = `
(function forgeReadWatch() {
  var readLog = env.${READ_LOG_VAR};
  var rootList = env.${WATCH_ROOTS_VAR};
  if (!readLog || !rootList) return;
  var statSync = fs.statSync, realpath = fs.realpathSync;
  var real = function (p) { try { return realpath(p); } catch (_) { return resolve(p); } };
  var sep = path.sep, delimiter = path.delimiter;
  // Folders are kept without a trailing separator (resolve's form), so no pattern runs per call.
  var under = function (p, folder) {
    if (folder === sep) return p.charAt(0) === sep;
    return p === folder || (p.length > folder.length && p.charAt(folder.length) === sep && p.lastIndexOf(folder, 0) === 0);
  };
  var roots = [];
  rootList.split(delimiter).forEach(function (r) { if (r) { roots.push(resolve(r)); roots.push(real(r)); } });
  var keys = [];
  (env.${WATCH_KEYS_VAR} || '').split(delimiter).forEach(function (k) { if (k) { keys.push(resolve(k)); keys.push(real(k)); } });
  // Only a file's bytes are the metric's answers (python-watch.ts's WATCH_KEYS_VAR): its name, size or
  // presence are not.
  var KEY_READS = /^(?:readFile|open|createReadStream|openAsBlob|copyFile|cp)(?:Sync)?$/;
  var here = real(path.dirname(readLog));
  var deep = function (p) { return p.split(sep).length >= 3; };
  var usual = ['/usr', '/etc', '/proc', '/sys', '/dev', '/lib', '/lib32', '/lib64', '/libx32', '/bin', '/sbin', '/snap', '/nix/store'];
  var nodeHome = real(path.dirname(path.dirname(process.execPath)));
  if (deep(nodeHome)) usual.push(nodeHome);
  if (env.TMPDIR && deep(real(env.TMPDIR))) usual.push(real(env.TMPDIR));
  // Inside one of those folders, or a listing of one: looking for .git itself is how code finds its
  // repository (a worktree's .git is a file).
  var STATE = /(^|[\\\\/])\\.(git|forge|beads)[\\\\/]./;
  var LISTED = /(^|[\\\\/])\\.(git|forge|beads)([\\\\/]|$)/;
  // What tells code who runs its process, and so whether the metric or a test does: its own command
  // line, environment and open files, and anything of another process's (its parent's command line), or
  // the list of processes; and what it has spent so far, its memory, CPU time and threads (code a test
  // runner loads runs after the runner's imports). Its limits and the machine's figures are honest code's.
  var PROCESS = /^\\/proc\\/(self|thread-self|\\d+)(?:\\/task\\/\\d+)?(?:\\/(.*))?$/;
  var OWN_WHO = /^(?:cmdline|environ|fd|fdinfo|status|statm|stat|io|sched|schedstat|maps|smaps|smaps_rollup|numa_maps|task)(?:\\/|$)/;
  var tellsWho = function (p, listing) {
    if (p === '/proc') return listing;
    var m = PROCESS.exec(p);
    if (m === null) return false;
    var own = m[1] === 'self' || m[1] === 'thread-self' || m[1] === String(process.pid);
    return !own || OWN_WHO.test(m[2] || '');
  };
  var kindOf = function (p, listing, name) {
    var state = listing ? LISTED : STATE;
    for (var i = 0; i < roots.length; i += 1) {
      if (!under(p, roots[i])) continue;
      if (state.test(p.slice(roots[i].length))) return 'state';
      if (name && KEY_READS.test(name)) {
        for (var k = 0; k < keys.length; k += 1) if (under(p, keys[k])) return 'key';
      }
      return null;
    }
    if (state.test(p)) return 'state';
    if (tellsWho(p, listing)) return 'who';
    for (var j = 0; j < usual.length; j += 1) {
      if (under(p, usual[j]) && !(usual[j] === '/dev' && under(p, '/dev/shm'))) return null;
    }
    return 'outside';
  };
  // A path through /proc/<pid>/root or /proc/<pid>/cwd names a file elsewhere: read as /proc, it passed
  // for one of the usual folders (red team: ../flag read as /proc/self/root + its path). Taken apart
  // before resolve(), which would drop the cwd of /proc/self/cwd/../flag.
  var unmagic = function (p) {
    if (p.lastIndexOf('/proc/', 0) !== 0) return p;
    var parts = p.split('/');
    var link = parts[3];
    if (link !== 'root' && link !== 'cwd') return p;
    var rest = parts.slice(4).join('/');
    if (link === 'root') return '/' + rest;
    var own = parts[2] === 'self' || parts[2] === 'thread-self' || parts[2] === String(process.pid);
    // Another process's working folder is not known here: its files count as outside.
    return (own ? process.cwd() : '/(another process)') + '/' + rest;
  };
  var asPath = function (value) {
    try {
      if (typeof value === 'string') return resolve(unmagic(value));
      if (value instanceof URL) return value.protocol === 'file:' ? resolve(unmagic(toPath(value))) : null;
      if (Buffer.isBuffer(value)) return resolve(unmagic(value.toString()));
    } catch (_) {}
    return null;
  };
  var quote = function (s) { return stringify(s); };
  var frames = function (above) {
    var sites = callSites(above);
    var out = [];
    for (var k = 0; k < sites.length; k += 1) {
      try {
        var site = sites[k];
        var file = site.getFileName();
        // Called by the module loader itself: it reads a module's source for whatever imports it.
        if (k === 0 && typeof file === 'string' && file.indexOf('node:internal/modules/') === 0) out.loader = true;
        if (site.isEval()) continue;
        // Node's fs calling itself later (a read stream opening its file, fs.cp's steps): the call
        // that started it was logged with its caller.
        if (typeof file === 'string' && file.indexOf('node:internal/fs/') === 0) return null;
        if (typeof file !== 'string' || file === '' || file.indexOf('node:') === 0) continue;
        if (file.indexOf('file://') === 0) file = toPath(file);
        // A worker's eval (\`[worker eval]\`) and the like have no file of their own.
        if (!path.isAbsolute(file)) continue;
        out[out.length] = file + ':' + (site.getLineNumber() || 0);
      } catch (_) {}
    }
    return out;
  };
  var seen = Object.create(null);
  var reals = Object.create(null);
  // How often each call and path was logged: a hot loop over one file logs a few stacks, not each call.
  var times = Object.create(null);
  var MOST = 8;
  // The paths the process was handed on its command line: a file of the metric's named there is one
  // the metric handed the code to read (\`node src/solve.js metric/input.txt\`).
  // A word \`--input=metric/in.txt\` hands its path; a folder handed hands the files in it.
  var handed = null;
  var handedTo = function (p) {
    if (handed === null) {
      handed = [];
      process.argv.slice(1).forEach(function (a) {
        if (typeof a !== 'string') return;
        [a, a.slice(a.indexOf('=') + 1)].forEach(function (w) { if (w !== '' && handed.indexOf(real(w)) < 0) handed.push(real(w)); });
      });
    }
    for (var i = 0; i < handed.length; i += 1) if (under(p, handed[i])) return true;
    return false;
  };
  // A frame that may be the doer's: in a tree, out of the metric's folders and of installed packages.
  var maybeDoers = function (frame) {
    var file = frame.slice(0, frame.lastIndexOf(':'));
    if (/[\\\\/](?:node_modules|site-packages|dist-packages)[\\\\/]/.test(file)) return false;
    for (var k = 0; k < keys.length; k += 1) if (under(file, keys[k])) return false;
    for (var i = 0; i < roots.length; i += 1) if (under(file, roots[i])) return true;
    return false;
  };
  var spawnedBy = env.${WATCH_BY_VAR} || null;
  // A program of the doer's (its main script in the scope: a CLI the metric runs): whatever in it reads
  // the metric's files, Node's own module loader for an \`import()\` of a path it made, a worker's eval or
  // a callback handed to a timer, it reads them. Said as its entry, line 0.
  var ownEntryFound;
  var ownEntry = function () {
    if (ownEntryFound === undefined) {
      var file = false;
      try { file = entry !== null && statSync(entry).isFile(); } catch (_) {}
      ownEntryFound = file && maybeDoers(entry + ':0') ? entry + ':0' : null;
    }
    return ownEntryFound;
  };
  var metricRead = Object.create(null);
  var metricReads = 0;
  var MOST_METRIC_READS = 2000;
  var note = function (event, given, kind, listing, above, raw) {
    var once = event + '\\u0000' + given;
    // (Not for the metric's files: code reading one from many places first must not crowd out the
    // metric's own read of it, which says it is the metric's answers.)
    if (kind !== 'key' && (times[once] || 0) >= MOST) return;
    var p = reals[given];
    if (p === undefined) p = reals[given] = real(given);
    kind = kindOf(p, listing, event) || kind;
    var where = frames(above);
    if (where === null) return;
    // Node's own code calls the binding for its own ends (node --test's walk for test files): only
    // a call with a file on its stack is someone's.
    if (raw && where.length === 0) return;
    var loader = where.loader === true;
    // Started by the doer's code: that call is on every stack of this process, outermost.
    if (spawnedBy) where = where.concat([spawnedBy]);
    var orphan = false;
    if (kind === 'who' && where.length === 0 && !loader) orphan = true;
    if (kind === 'key' && !where.some(maybeDoers)) {
      if (ownEntry() !== null) where = where.concat([ownEntry()]);
      // No file at all on the stack, and not the module loader: a read handed to Node's own code (a
      // timer, a promise, \`[p].forEach(fs.readFileSync)\`'s caller gone) so that no file calls it.
      else if (where.length === 0 && !loader) orphan = true;
      else {
        // The metric reading its own files (a folder of fixtures, thousands maybe): each once, no stack.
        if (metricRead[p] || metricReads >= MOST_METRIC_READS) return;
        metricRead[p] = true;
        metricReads += 1;
        where = [];
      }
    }
    var key = event + '\\u0000' + p + '\\u0000' + where.join('\\u0000') + (orphan ? '\\u0000orphan' : '');
    if (seen[key]) return;
    seen[key] = true;
    times[once] = (times[once] || 0) + 1;
    var changed = null;
    try { changed = Math.floor(statSync(p).ctimeMs); } catch (_) {}
    var line = '{"pid":' + process.pid + ',"event":' + quote(event) + ',"path":' + quote(p) + ',"kind":"' + kind +
      '","write":false,"ctimeMs":' + (changed === null ? 'null' : String(changed)) + ',"frames":[' + where.map(quote).join(',') + ']' +
      (kind === 'key' && handedTo(p) ? ',"handed":true' : '') + (orphan ? ',"orphan":true' : '') + '}';
    var fd = openSync(readLog, 'a');
    try { writeSync(fd, line + '\\n'); } finally { closeSync(fd); }
  };
  var refuse = function (given, kind) {
    if (!under(given, here) && (kind === null || !under(real(given), here))) return;
    var error = new Error("EACCES: Forge's run watch is not the measured code's, '" + given + "'");
    error.code = 'EACCES';
    throw error;
  };
  var TESTS = /^(?:exists|stat|lstat|access|readlink|realpath|statfs)(?:Sync)?(?:\\.native)?$/;
  var aboveRoot = function (p) {
    for (var i = 0; i < roots.length; i += 1) if (under(roots[i], p)) return true;
    return false;
  };
  var two = ${JSON.stringify(TWO_PATHS)};
  var wrap = function (target, name, check, label) {
    var original = target && target[name];
    var logged = label || name;
    if (typeof original !== 'function') return;
    var wrapped = function () {
      // A call fs makes of itself inside one (readFileSync's openSync, exists' access) is the same read;
      // so are the watch's own calls (its log's writes, the realpath of what it logs).
      if (depth === 0) {
        depth += 1;
        try {
          check(logged, arguments[0], wrapped);
          if (two.indexOf(name) >= 0) check(logged, arguments[1], wrapped, true);
        } finally {
          depth -= 1;
        }
      }
      depth += 1;
      try { return apply(original, this, arguments); } finally { depth -= 1; }
    };
    try { Object.defineProperty(wrapped, 'name', { value: original.name }); } catch (_) {}
    // What hangs on the original (util.promisify's custom form of fs.exists) is found through it.
    try { Object.setPrototypeOf(wrapped, original); } catch (_) {}
    target[name] = wrapped;
  };
  var reading = function (name, value, above, second, raw) {
    var given = asPath(value);
    if (given === null) return;
    // The tree's own files and the usual places are most calls: one look, no realpath for them.
    var listing = name.indexOf('readdir') === 0 || name.indexOf('opendir') === 0;
    var kind = kindOf(given, listing, name);
    // A link elsewhere (the run's temp directory) to a file of the metric's is that file.
    if (kind === null && keys.length > 0 && KEY_READS.test(name)) kind = kindOf(real(given), listing, name) === 'key' ? 'key' : null;
    refuse(given, kind);
    if (kind === null || second) return;
    // The folders above a tree are looked at by any code that walks up from it (finding a config).
    if (kind === 'outside' && TESTS.test(name) && aboveRoot(given)) return;
    try { note(name, given, kind, listing, above, raw); } catch (_) {}
  };
  var rawReading = function (name, value, above, second) { reading(name, value, above, second, true); };
  var writing = function (name, value) {
    var given = asPath(value);
    if (given !== null) refuse(given, kindOf(given));
  };
  ${JSON.stringify(READS)}.forEach(function (name) { wrap(fs, name, reading); });
  ${JSON.stringify(WRITES)}.forEach(function (name) { wrap(fs, name, writing); });
  // fs.realpathSync.native hangs on the original: the wrapped function finds it through its prototype.
  ${JSON.stringify(NATIVE_FORMS)}.forEach(function (name) { wrap(fs[name], 'native', reading, name + '.native'); });
  var promises = fs.promises;
  if (promises) {
    ${JSON.stringify(PROMISE_READS)}.forEach(function (name) { wrap(promises, name, reading); });
    ${JSON.stringify(PROMISE_WRITES)}.forEach(function (name) { wrap(promises, name, writing); });
    wrap(promises.realpath, 'native', reading, 'realpath.native');
  }
  try {
    var fsBinding = process.binding('fs');
    var bindingCalls = ${JSON.stringify(BINDING_CALLS)};
    Object.keys(bindingCalls).forEach(function (name) {
      var as = bindingCalls[name];
      wrap(fsBinding, name, as === null ? writing : rawReading, as === null ? name : as);
    });
  } catch (_) {}
  // A process the doer's code starts is the doer's: it is told so (WATCH_BY_VAR), and a file of the
  // metric's named on its command line (\`cat metric/cases.json\`, which no watch sees read) is logged.
  var spawner = function (above) {
    if (spawnedBy) return spawnedBy;
    var where = frames(above) || [];
    for (var i = 0; i < where.length; i += 1) if (maybeDoers(where[i])) return where[i];
    return ownEntry();
  };
  var named = function (words, cwd, by, above) {
    if (keys.length === 0 || !by) return;
    for (var i = 0; i < words.length; i += 1) {
      if (typeof words[i] !== 'string') continue;
      var parts = words[i].split(/[\\s'"=]+/);
      for (var j = 0; j < parts.length; j += 1) {
        if (parts[j] === '') continue;
        var p = real(resolve(cwd || process.cwd(), parts[j]));
        var inKeys = false;
        for (var k = 0; k < keys.length; k += 1) if (under(p, keys[k])) inKeys = true;
        if (inKeys) try { note('spawn', p, 'key', false, above); } catch (_) {}
      }
    }
  };
  var BY_PAIR = '${WATCH_BY_VAR}=';
  // Every child Node starts, sync or not, however child_process was imported, is started by these two
  // bindings with its environment listed (\`envPairs\`): wrapped there, at no cost to a process's start
  // (loading child_process would be some milliseconds of every one).
  var started = function (options, above) {
    var by = spawner(above);
    if (isArray(options.envPairs)) {
      options.envPairs = options.envPairs.filter(function (pair) { return String(pair).indexOf(BY_PAIR) !== 0; });
      if (by) options.envPairs.push(BY_PAIR + by);
      keepWatched(options.envPairs);
    }
    if (isArray(options.args)) named(options.args.slice(1), options.cwd, by, above);
  };
  var bindings = [['process_wrap', 'Process'], ['spawn_sync', null]];
  for (var b = 0; b < bindings.length; b += 1) {
    try {
      var binding = process.binding(bindings[b][0]);
      var holder = bindings[b][1] ? binding[bindings[b][1]].prototype : binding;
      var original = holder.spawn;
      if (typeof original !== 'function') continue;
      holder.spawn = (function (original) {
        var spawn = function (options) {
          depth += 1;
          try { if (options && typeof options === 'object') started(options, spawn); } catch (_) {} finally { depth -= 1; }
          return apply(original, this, arguments);
        };
        return spawn;
      })(original);
    } catch (_) {}
  }
  try {${NODE_STACK_WATCH}} catch (_) {}
  try {${NODE_ARGV_WATCH}} catch (_) {}
  try {${NODE_ENV_WATCH}} catch (_) {}
  try {${NODE_SPEND_WATCH}} catch (_) {}
  try { require('module').syncBuiltinESMExports(); } catch (_) {}
})();
`;
