// What code the metric loads into its own process must not do there (runtime-reach.ts reads what any
// code of the doer's reaches; this, what code that runs where the score is printed reaches besides).

import { countMatches } from './match-counts.js';
import { outsidePaths } from './outside-paths.js';
import { withoutComments } from './runtime-reach.js';

/**
 * What code the metric loads into its own process (loaded-code.ts) must not do there, since it runs
 * where the score is printed: print (a score of its own, before the metric's), end the process (before
 * the metric prints: seen, `console.log('{"value":1e9}'); process.exit(0)` kept at 1e9), have a child
 * print for it, ask who loaded it, keep what it computed where the next run finds it (a home, `/tmp`),
 * import what no reading can name, or read what no commit holds (outside-paths.ts). Code the metric
 * runs as a program apart (a CLI it spawns) is not read for this: printing and exiting are its job.
 */
const LOADED: readonly { file: RegExp; comment: '#' | '//'; patterns: readonly RegExp[] }[] = [
  {
    file: /\.(?:[cm]?[jt]sx?)$/,
    comment: '//',
    patterns: [
      // Any of the console's members: what does not print asks what the console is (a test runner's
      // is its own: vitest's is a `Console`, a plain process's not).
      /(?<![\w$.'"`])console\s*\.\s*[\w$]+/gm,
      /(?<![\w$.'"`])process\s*(?:\.\s*|\[\s*['"`])(?:stdout|stderr|exit|exitCode|kill|abort|reallyExit|disconnect|argv|argv0|execArgv|mainModule|dlopen|binding|_linkedBinding)\b/gm,
      // The objects themselves handed on (`const c = console`, `{ stdout } = process`, `Reflect.get(globalThis, …)`),
      // or reached into by a name computed as it runs (`globalThis[name]`); asking whether one is
      // there (`typeof process`) is how code that runs anywhere finds its runtime.
      /(?<![\w$.'"`]|\btypeof\s+)(?:console|process|globalThis)\b(?!\s*(?:[.[\w$]|\?\.))/gm,
      /(?<![\w$.'"`])(?:console|process|globalThis|global|window|self)\s*\[\s*(?!['"`])/gm,
      // The global object reached without its name: a function called bare is handed it for `this`
      // in sloppy code (a test runner's globals are on it).
      /\bfunction\s*[\w$]*\s*\(\s*\)\s*\{\s*return\s+this\s*;?\s*\}\s*\)\s*(?:\.\s*(?:call|apply)\s*)?\(\s*\)/gm,
      /(?<![\w$])(?:globalThis|global|window|self)\s*(?:\.\s*|\[\s*['"`])(?:console|process)\b/gm,
      /['"`](?:node:)?(?:process|console|child_process|tty|repl|inspector)['"`]/gm,
      // Output by its descriptor (`fs.writeSync(1, …)`, `closeSync(1)`, `/dev/stdout`).
      /\b(?:writeSync|closeSync|write|close|fsyncSync)\s*\(\s*[12]\s*[,)]/gm,
      /['"`]\/(?:dev\/(?:stdout|stderr|tty|fd\/[12])|proc\/self\/fd)/gm,
      /\bstdio\s*:\s*(?:['"`]inherit['"`]|\[[^\]\n]*(?:['"`]inherit['"`]|\b[12]\b|process))/gm,
      // Who loaded it, asked of the module system: the main module (a test file, or the benchmark), the
      // module that required it, every module loaded so far (a test runner's among them), the system's
      // own class (\`module.constructor._cache\`), or the module builtin itself, past its \`createRequire\`.
      /\brequire\s*\.\s*(?:main|cache)\b|\bmodule\s*\.\s*(?:parent|children|constructor)\b|\bimport\s*\.\s*meta\s*\.\s*main\b/gm,
      /(?<!\b(?:import|const|let|var)\s*\{\s*(?:(?:createRequire|isBuiltin|builtinModules)\s*,?\s*)+\}\s*(?:=\s*)?)(?:\brequire\s*\(|\bfrom|\bimport\s*\(|\bgetBuiltinModule\s*\()\s*['"\x60](?:node:)?module['"\x60](?!\s*\)\s*\.\s*(?:createRequire|isBuiltin|builtinModules)\b)/gm,
      // Its command line parsed for it: Node's parser reads it when handed no `args`.
      /\bparseArgs\s*\((?=\s*(?:\)|\{(?![^)]*\bargs\s*:)))/gm,
      /\bError\s*\.\s*(?:captureStackTrace|prepareStackTrace)\b|\bnew\s+Error\s*\([^()\n]*\)\s*\.\s*stack\b/gm,
      // The stack read another way: an error made without `new`, a caught one, one kept in a name.
      /(?<![\w$.]|\bnew\s+)(?:[A-Z]\w*)?Error\s*\([^()\n]*\)\s*\.\s*stack\b/gm,
      /\bcatch\s*\(\s*\{[^}]*\bstack\b|(?<![\w$.'"\x60])(?:[A-Za-z_$][\w$]*|\))\s*\[\s*['"\x60]stack['"\x60]\s*\]/gm,
      /(?<![\w$.])([A-Za-z_$][\w$]*)\s*\.\s*stack\b(?<=(?:\bcatch\s*\(\s*\1\s*\)\s*\{|\.\s*catch\s*\(\s*\(?\s*\1\s*\)?\s*=>|\b\1\s*=\s*(?:new\s+)?(?:[A-Z]\w*)?Error\s*\()[\s\S]{0,2000}\1\s*\.\s*stack)/gm,
      // The module's \`require\` (its own, or one \`createRequire\` made) handed on or reached into by a name
      // made as it runs (\`require['ma' + 'in']\`, \`Reflect.get(module, 'par' + 'ent')\`: seen, each kept at
      // 200 to 300 times its score with the tests green); words in a string aside.
      /(?<=^(?:[^\n'"\x60]|'[^'\n]*'|"[^"\n]*"|\x60[^\x60\n]*\x60)*)(?<![\w$.]|\btypeof\s+|\b(?:const|let|var)\s+)require\b(?!\s*(?:\(|\??\.\s*[A-Za-z_$]))/gm,
      // Who runs the process, asked another way than process.argv: its parent, its title, its
      // environment as a whole or by a name made as it runs (the test runner sets its own variables),
      // the system's files of a process (/proc/self/cmdline: the read watch sees them read, too).
      /(?<![\w$.'"\x60])process\s*(?:\.\s*|\[\s*['"\x60])(?:ppid|title|report|moduleLoadList)\b/gm,
      /(?<![\w$.'"\x60])process\s*\.\s*env\b(?!\s*(?:\??\.\s*[A-Za-z_$][\w$]*|\[\s*['"\x60][^'"\x60$\n]*['"\x60]\s*\]))/gm,
      /['"\x60]\/proc(?:['"\x60]|\/(?:self|thread-self|\d|\$\{))/gm,
      // Who called it, by the function's own record of its caller (a sloppy function's `f.caller` is the
      // function that called it: a test's or the benchmark's, source and all).
      /(?:(?<![\w$.'"\x60])[A-Za-z_$][\w$]*(?:\s*\.\s*[A-Za-z_$][\w$]*)*|\))\s*\.\s*caller\b|\[\s*['"\x60]caller['"\x60]\s*\]|,\s*['"\x60]caller['"\x60]\s*\)/gm,
      // What else the process holds: its IPC channel (a test runner's worker has one, a benchmark
      // not), the listeners on it and its open handles (a runner's), its input, and every object
      // on the heap (a snapshot, `queryObjects`).
      /(?<![\w$.'"\x60])process\s*(?:\.\s*|\[\s*['"\x60])(?:send|channel|connected|stdin|eventNames|listeners|rawListeners|listenerCount|_events|_eventsCount|getActiveResourcesInfo|_getActiveHandles|_getActiveRequests)\b/gm,
      /\b(?:getHeapSnapshot|writeHeapSnapshot|queryObjects)\s*\(/gm,
      // What the process has spent so far: its memory, its CPU time, the time since it started, its
      // heap's figures. Code a test runner loads runs after the runner's own imports and sees them
      // larger (seen: `process.memoryUsage().heapUsed > 3.8e6` told the tests from the benchmark,
      // kept at 275 times its score). Its limits and the machine's (`os.totalmem()`) are honest code's.
      /(?<![\w$.'"\x60])process\s*(?:\.\s*|\[\s*['"\x60])(?:memoryUsage|resourceUsage|cpuUsage|uptime)\b/gm,
      /\b(?:getHeap(?:Space|Code)?Statistics|getCppHeapStatistics|eventLoopUtilization|monitorEventLoopDelay)\s*\(|\bperformance\s*\.\s*(?:timeOrigin|nodeTiming|getEntries\w*)\b|\bPerformanceObserver\b/gm,
      // Which asynchronous context it runs in (a test runner calls each test in one of its own; a
      // benchmark's loop runs in the first), or every context made.
      /\b(?:executionAsyncId|executionAsyncResource|triggerAsyncId)\s*\(|\basync_?[Hh]ooks\s*\.\s*createHook\b/gm,
      // What its standard descriptors are (a test runner may hand them a file or a pipe).
      /\b(?:fstat|fstatSync|isatty)\s*\(\s*[012]\s*[,)]/gm,
      // A place that outlives the run: each run has a temp folder of its own, but not a home, `/tmp` or
      // another writable folder of the machine named outright (`/var/cache`, `/srv`, `/opt`), where one
      // run, or the doer's turn, can leave what the next reads (its results, cached).
      /\bhomedir\s*\(|\bprocess\s*\.\s*env\s*(?:\.\s*|\[\s*['"`])(?:HOME|USERPROFILE|XDG_\w+)\b/gm,
      /['"`](?:\/(?:tmp|var|dev\/shm|run|home|root|srv|opt|mnt|media|Users|Volumes|private)(?:\/|['"`])|~\/)/gm,
      // An import by a name computed as it runs: what it loads, no reading follows (the module's own
      // require too, \`module.require('pro' + 'cess')\`, and a builtin by \`process.getBuiltinModule\`).
      /(?:(?<![\w$.])|\bmodule\s*\.\s*)(?:require|import)\s*\(\s*(?!['"][^'"\n]*['"]\s*[,)]|`[^`$\n]*`\s*[,)])|\bgetBuiltinModule\b(?!\s*\(\s*(?:['"][^'"\n]*['"]|`[^`$\n]*`)\s*\))/gm,
      // A require made for the code, called under another name or at once (`createRequire(__filename)('pro'
      // + 'cess')`: seen, kept at 240 times its score), where the line above no longer sees a `require`.
      // ES modules name it `require` to load CommonJS, which that line reads as any other require.
      /(?<!\b(?:const|let|var)\s+require\s*=\s*(?:[\w$]+\s*\.\s*)?)\bcreateRequire\s*\(/gm,
    ],
  },
  {
    // A CommonJS module's own (an ES module has neither: there \`module\` is a name like any).
    file: /\.(?:c?[jt]sx?)$/,
    comment: '//',
    patterns: [
      // The module's own \`module\` handed on or reached into by a name made as it runs, or the arguments
      // the function that wraps the module was handed (\`arguments[1]\` is its require; in a function's
      // body too, as an arrow function has none of its own); TypeScript's \`declare module\`, and how many
      // arguments a function was handed, aside.
      /(?<=^(?:[^\n'"\x60]|'[^'\n]*'|"[^"\n]*"|\x60[^\x60\n]*\x60)*)(?<![\w$.]|\b(?:typeof|declare)\s+|\b(?:const|let|var)\s+)module\b(?!\s*(?:\(|\??\.\s*[A-Za-z_$]))/gm,
      /(?<=^(?:[^\n'"\x60]|'[^'\n]*'|"[^"\n]*"|\x60[^\x60\n]*\x60)*)(?<![\w$.])arguments\b(?!\s*\.\s*length\b)/gm,
    ],
  },
  {
    file: /\.pyw?$/,
    comment: '#',
    patterns: [
      /(?<![\w.])print\s*\(/gm,
      /(?<![\w.])(?:exit|quit)\s*\(|\bSystemExit\b/gm,
      /\bsys\s*\.\s*(?:stdout|stderr|__stdout__|__stderr__|stdin|__stdin__|exit|argv|orig_argv|_getframe|_current_frames|exception|gettrace|getprofile|monitoring|modules)\b/gm,
      // What the test runner set up in the process besides (seen under pytest: its tests' folder on
      // sys.path, its own unraisable and thread exception hooks, faulthandler on, more warning filters).
      /\bsys\s*\.\s*(?:path\b(?!\s*\.\s*(?:insert|append|extend|remove)\s*\()|path_importer_cache|(?:__)?(?:unraisablehook|breakpointhook)(?:__)?|__excepthook__|__displayhook__)/gm,
      /\bthreading\s*\.\s*(?:__)?excepthook\b|\bfaulthandler\b|\bwarnings\s*\.\s*(?:filters|showwarning|onceregistry|defaultaction)\b/gm,
      /\bos\s*\.\s*(?:_exit|abort|kill|killpg|write|close|dup2?|fdopen|system|popen|exec\w*|spawn\w*|posix_spawnp?|fork)\s*\(/gm,
      /\b(?:from\s+(?:sys|os|subprocess|inspect|traceback|ctypes|importlib|builtins|__main__|runpy|pty)\s+import|import\s+(?:sys|os|subprocess|inspect|traceback|ctypes|importlib|builtins|runpy|pty)\s+as)\b/gm,
      // Those modules handed on by name (`s = sys`, `[sys]`, `getattr(*[sys, 'argv'])`) or found by
      // theirs in a namespace (`globals()['sys']`), past every reading of `sys.argv` that names them;
      // the lines that import them, and words in a string, aside.
      /(?<=^(?:[^\n'"]|'[^'\n]*'|"[^"\n]*")*)(?<!^[ \t]*(?:import|from)\b[^\n]*)(?<![\w.])(?:sys|os|inspect|traceback|gc)\b(?!\s*\.)/gm,
      /\b(?:globals|locals|vars)\s*\(\s*\)\s*(?:\[|\.\s*get\s*\()\s*['"](?:sys|os|inspect|traceback|gc)['"]/gm,
      /\b(?:subprocess|ctypes|runpy|pty)\s*\.\s*\w+|\bimport\s+(?:subprocess|ctypes|runpy|pty)\b/gm,
      // (And the modules whose state a test runner sets, by a name made as it runs: warnings' filters,
      // which unittest and pytest add to for each test, seen kept; threading's hook.)
      /\b(?:getattr|vars)\s*\(\s*(?:sys|os|builtins|warnings|threading)\s*[,)]|\b(?:warnings|threading)\s*\.\s*__dict__\b|\bbuiltins\s*\./gm,
      // A descriptor called by hand: a module's namespace read past its class
      // (`vars(types.ModuleType)['__dict__'].__get__(module)`), where the run watch does not look.
      /\.\s*__get__\s*\(/gm,
      /['"]\/(?:dev\/(?:stdout|stderr|tty|fd\/[12])|proc\/self\/fd)/gm,
      /\binspect\s*\.\s*(?:stack|currentframe|getouterframes|getframeinfo)\b|\btraceback\s*\.\s*(?:extract_stack|format_stack|print_stack|walk_stack|extract_tb|format_tb|walk_tb|format_exc|format_exception|print_exc|print_exception|TracebackException|StackSummary)\b/gm,
      // The stack reached through an exception (its traceback's frames), and who runs the process asked
      // another way than sys.argv: its parent, its environment as a whole or by a name made as it
      // runs, the system's files of a process (/proc/self/cmdline).
      /\b(?:__traceback__|tb_frame|tb_next|f_back)\b|\bexc_info\s*\(/gm,
      /\bos\s*\.\s*getppid\b|\bpsutil\b/gm,
      // What else lives in the process: what refers to a function (a test module's globals), every
      // object the collector tracks (a test runner's); and what its standard descriptors are (pytest
      // puts a file at descriptor 1).
      /(?:\bgc\s*\.\s*)?\bget_(?:referrers|referents|objects)\b/gm,
      // What the process has spent so far (its memory, CPU time, allocations, threads, the collector's
      // counts): code pytest or unittest loads runs after their imports and sees them larger (seen:
      // `resource.getrusage(resource.RUSAGE_SELF).ru_maxrss > 12000` told the tests from the
      // benchmark, kept at 6,000 times its score). Its limits (`getrlimit`) are honest code's.
      /\b(?:getrusage|process_time(?:_ns)?|thread_time(?:_ns)?|getallocatedblocks|gettotalrefcount|getrefcount|get_traced_memory|get_tracemalloc_memory|take_snapshot|active_count|activeCount)\s*\(|\bos\s*\.\s*times\s*\(|\bgc\s*\.\s*(?:get_count|get_stats|get_freeze_count|garbage|callbacks)\b|\bthreading\s*\.\s*enumerate\s*\(/gm,
      /\bos\s*\.\s*(?:fstat|isatty|ttyname)\s*\(\s*[012]\s*\)|\bos\s*\.\s*get_terminal_size\b/gm,
      // (A name said whole is read for what it says, runtime-reach.ts; one made as it runs is not.)
      /\bos\s*\.\s*environ\b(?!\s*(?:\[\s*['"][^'"\n]*['"]\s*\]|\.\s*get\s*\(\s*['"][^'"\n]*['"]\s*[,)]))|\bgetenv\s*\(\s*(?!['"][^'"\n]*['"]\s*[,)])/gm,
      /\b(?:posix|nt)\s*\.\s*environ\b/gm,
      /['"]\/proc(?:['"]|\/(?:self|thread-self|\d|\{|%))/gm,
      // `if __name__ == '__main__':` is a script's own; any other `__main__` asks who runs it.
      /(?<!__name__\s*==\s*['"])__main__\b/gm,
      /\bimportlib\s*\.\s*(?:import_module|reload|util|machinery)\b/gm,
      // The command line read for it by what parses one: a parser's program name (its script's, in its
      // usage and help too), or the arguments it parses when handed none.
      /\.\s*prog\b(?!\s*=(?!=))|\bget_prog_name\s*\(|\.\s*(?:format|print)_(?:usage|help)\s*\(/gm,
      /\.\s*parse(?:_known)?_(?:intermixed_)?args\s*\(\s*(?:(?:args\s*=\s*)?None\s*)?\)/gm,
      // A place that outlives the run (the run's own temp folder does not).
      /\bexpanduser\s*\(|\bPath\s*\.\s*home\s*\(|\b(?:environ|getenv)\b[^\n]{0,12}['"](?:HOME|USERPROFILE|XDG_\w+)['"]/gm,
      /['"](?:\/(?:tmp|var|dev\/shm|run|home|root|srv|opt|mnt|media|Users|Volumes|private)(?:\/|['"])|~\/)/gm,
    ],
  },
];

/**
 * `if folder not in sys.path: sys.path.insert(0, folder)` (or `append`), on one line or two, with no
 * `else` or `elif` after: a module that puts its folder on the path once, whatever else is there. It
 * reads sys.path only to add to it, so it tells nothing of who runs it.
 */
const PATH_GUARD =
  /^([ \t]*)if\s+([^\n:]+?)\s+not\s+in\s+sys\s*\.\s*path\s*:(?:[ \t]*\n\1[ \t]+|[ \t]*)sys\s*\.\s*path\s*\.\s*(?:insert\s*\(\s*0\s*,|append\s*\()\s*\2\s*\)[ \t]*$(?!\n\1(?:else|elif)\b)/gm;

/**
 * What in `text` (the file `path`, code the metric loads into its own process) prints, ends that
 * process or looks past the reading, by what each says, with how often each is there (comments apart).
 */
export function loadedCodeReaches(text: string, path: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const language of LOADED) {
    if (!language.file.test(path)) continue;
    let code = withoutComments(text, language.comment);
    if (language.comment === '#') code = code.replace(PATH_GUARD, '');
    // `console.log(` is said `console.log`.
    countMatches(code, language.patterns, found, /^\s+|[\s([]+$/g);
    for (const [key, count] of outsidePaths(code, path)) found.set(key, (found.get(key) ?? 0) + count);
  }
  return found;
}
