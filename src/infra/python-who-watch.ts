// The part of the Python read watch (python-watch.ts) that sees code ask who runs its process: the
// metric times the code and the tests check it, so code that can tell them apart can be fast under the
// one and right under the other. What tells it: a file of /proc that says who runs a process (its own
// command line, environment and open files, anything of another process's, the list of processes), and
// the stack reached by code of the scope itself. Both are logged as `who` (read-log.ts), judged by
// outside-reads.ts.

import { TELLING_VARIABLES } from './read-log.js';

/**
 * Python run inside the watch's function, beside its `kind_of` and `hook` (which call these), with
 * the names that function defines (`frames`, `record`, `seen`, …) found as it runs.
 */
export const PYTHON_WHO_WATCH = `    # What tells code who runs its process, and so whether the metric or a test does: its own command
    # line, environment and open files, and anything of another process's (its parent's command line),
    # or the list of processes; and what it has spent so far, its memory, CPU time and threads (code a
    # test runner loads runs after the runner's imports). Its limits and the machine's figures are honest.
    OWN_WHO = ('cmdline', 'environ', 'fd', 'fdinfo', 'status', 'statm', 'stat', 'io', 'sched', 'schedstat', 'maps',
               'smaps', 'smaps_rollup', 'numa_maps', 'task')

    def tells_who(path, listing):
        if path == '/proc':
            return listing
        parts = path.split('/')
        if len(parts) < 3 or parts[1] != 'proc' or not (parts[2] in ('self', 'thread-self') or parts[2].isdigit()):
            return False
        rest = parts[5:] if len(parts) > 4 and parts[3] == 'task' else parts[3:]
        if parts[2] not in ('self', 'thread-self', str(getpid())):
            return True
        return bool(rest) and rest[0] in OWN_WHO

    # The stack reached by code of the scope itself, by whatever name (a traceback's or a generator's
    # frame, a frame's code, sys._getframe, every thread's frames, a trace or profile function, which
    # sees each call's frame), or what refers to its own objects (a test module's globals refer to the
    # function it tests): whose file called it tells the metric from a test. Python's own modules do so
    # for their ends (warnings, logging, inspect): their access is not the code's.
    STACK_EVENTS = ('object.__getattr__', 'sys._getframe', 'sys._current_frames', 'sys.settrace', 'sys.setprofile',
                    'sys.monitoring.register_callback', 'gc.get_referrers', 'gc.get_referents', 'gc.get_objects')
    STACK_ATTRS = ('tb_frame', 'gi_frame', 'cr_frame', 'ag_frame', 'f_code')

    def by_tree():
        # Whether the line that asked, two calls above the caller (a hook and its check), is of a tree, not
        # Python's own nor the watch's.
        try:
            f = getframe(3)
        except ValueError:
            return False
        file = f.f_code.co_filename
        return not own_frame(file) and maybe_doers(join(start_cwd, file) + ':0')

    def stacked():
        if by_tree():
            record_who('stack', frames())

    def record_who(event, where):
        # What the process itself says (its stack, its command line), asked from \`where\`: logged with
        # no path and with its main script (a program of the doer's asks of its own), a few an event.
        if spawned_by:
            where.append(spawned_by)
        key = (event, '', tuple(where), False)
        if key in seen or times.get((event, ''), 0) >= MOST:
            return
        seen.add(key)
        times[(event, '')] = times.get((event, ''), 0) + 1
        argv = getattr(_sys, 'argv', None) or ['']
        main = text(argv[0]) or ''
        main = realpath(join(start_cwd, main)) if main not in ('', '-c', '-m', '-') else ''
        record('{"pid":%d,"event":%s,"path":"","kind":"who","write":false,"ctimeMs":null,"frames":[%s]%s}' % (
            getpid(), quote(event), ','.join(quote(f) for f in where), ',"entry":' + quote(main) if main else ''))

`;

/**
 * Python run inside the watch's function once its audit hook is added, with the names PYTHON_WHO_WATCH
 * and the watch define. Who runs the process, asked of `sys`: its command line, or a hook a test runner
 * sets (`unraisablehook`, `excepthook`, `displayhook`, `breakpointhook`), by whatever route reaches the
 * module (`import sys`, the module another module holds, `getattr` by a name made as
 * it runs, `object.__getattribute__`), or every name of it at once (`vars(sys)`). No audit event says so:
 * the module's class is swapped for one with those names as properties, whose reads note a reader of
 * the tree (the line that reads it, or that called a parser of Python's own that reads it for it;
 * Python's own modules asking for their ends aside) as `who`, event `sys.argv`, with the process's
 * main script: a program of the doer's reads its own command line, its input (outside-reads.ts knows
 * the scope). Other names of sys are read as ever, at no cost. Seen before: a `work()` that found
 * the benchmark in `vars(logging)['s' + 'ys'].__dict__['ar' + 'gv']` and answered 0 there, kept at
 * 4,000 times its speed with the tests green. (What else of sys tells it, its modules and output, is
 * read by honest code too: loaded-reaches.ts counts what the code says of them.)
 */
export const PYTHON_ARGV_WATCH = `    # Its command line, its whole namespace, and the hooks a test runner sets in the process
    # (pytest its own unraisable hook for each test; seen: a \`work()\` that compared
    # \`getattr(s, 'unraisable' + 'hook')\` with its original, \`s\` sys found through logging by a made
    # name, kept at 12,000 times its score with the pytest guard green). Honest code reads none of them.
    ASKED = {'argv': 'sys.argv', 'orig_argv': 'sys.orig_argv', '__dict__': 'vars(sys)',
             'unraisablehook': 'sys.unraisablehook', 'excepthook': 'sys.excepthook',
             'displayhook': 'sys.displayhook', 'breakpointhook': 'sys.breakpointhook'}
    # What else of sys tells a test's process from a benchmark's, read by honest code by name: its output
    # (pytest's capture puts its own files there), its modules, its path (pytest adds the tests' folder)
    # and its import hooks (pytest's assertion rewriter: seen, found in a made name's \`meta_path\`, kept
    # at 2,100 times its score).
    # A line that says \`sys.stdout\` (or \`from sys import stdout\`) is the reading's (loaded-reaches.ts
    # counts the doer's; the baseline's are its own); a read of sys by any other route is asked here
    # (seen: \`type(getattr(s, 'std' + 'out')).__name__\`, \`s\` sys found through logging by a made name,
    # told pytest's capture from the benchmark's pipe, kept at 1,400 times its score).
    SPOKEN = {'stdout': 'sys.stdout', 'stderr': 'sys.stderr', 'stdin': 'sys.stdin', '__stdout__': 'sys.__stdout__',
              '__stderr__': 'sys.__stderr__', '__stdin__': 'sys.__stdin__', 'modules': 'sys.modules',
              'path': 'sys.path', 'path_importer_cache': 'sys.path_importer_cache', 'meta_path': 'sys.meta_path',
              'path_hooks': 'sys.path_hooks'}
    module_type = type(_sys)

    # Modules of Python's own that read the command line to hand it to their caller: a parser's
    # arguments when handed none (its program name, read as one is made, is left: a module that makes
    # its parser where it is defined is common), optparse's, fileinput's files, unittest's main. Their
    # read is the asking of the line that called them.
    RELAYS = ('argparse', 'optparse', 'fileinput', 'unittest.main')

    def asker(f):
        # The line that asked, as (frame, how): the reader itself, or what called a relay; None when
        # it is Python's own asking for its ends, or not a line of a tree.
        how = ''
        if own_frame(f.f_code.co_filename):
            module = f.f_globals.get('__name__')
            if module not in RELAYS or (module == 'argparse' and f.f_code.co_name == '__init__'):
                return None
            how = ' through ' + module
            while f is not None and own_frame(f.f_code.co_filename):
                f = f.f_back
            if f is None:
                return None
        return (f, how) if maybe_doers(join(start_cwd, f.f_code.co_filename) + ':0') else None

    def asked(name, reader):
        found = asker(reader)
        if found is not None:
            record_who(ASKED[name] + found[1], frames())

    # What each instruction of a code reads by name, by its offset, as (the variable it reads of, the
    # name): \`sys.stdout\` is ('sys', 'stdout'), \`from sys import stdout\` too. Only for the codes of a
    # tree that read one of the names below.
    spelt = {}

    def spelled(code, at):
        names = spelt.get(code)
        if names is None:
            import dis
            names = spelt[code] = {}
            before, imported = None, None
            for ins in dis.get_instructions(code):
                if ins.opname == 'IMPORT_NAME':
                    imported = ins.argval
                elif ins.opname == 'IMPORT_FROM':
                    names[ins.offset] = (imported, ins.argval)
                elif ins.opname in ('LOAD_ATTR', 'LOAD_METHOD') and before is not None and before.opname.startswith('LOAD_'):
                    names[ins.offset] = (before.argval, ins.argval)
                before = ins
        return names.get(at)

    # Honest code reads sys.stdout in its loops: a read of one of SPOKEN is looked at once for its place
    # (the code and instruction that read it), and a place that spells it, or is Python's own or no
    # tree's, is passed after (the thread marked busy first: the frame and its code, each an audit event,
    # then cost its hook little). Measured in a loop of a tree's: a read 1.1 µs (2 µs when looked at each
    # time; sys.argv's 1.4 µs), against 30 ns without the watch. Python's C code reads them at no cost.
    quiet = set()
    heard = {}

    def hear(what):
        spelling, event = what
        me = ident()
        if me in busy:
            return
        busy.add(me)
        try:
            f = getframe(2)
            code = f.f_code
            place = (code, f.f_lasti)
            if place in quiet:
                return
            file = code.co_filename
            said = spelling is not None and spelled(code, f.f_lasti) == spelling
            if said or own_frame(file) or not maybe_doers(join(start_cwd, file) + ':0'):
                quiet.add(place)
                return
            n = heard[place] = heard.get(place, 0) + 1
            if n <= 1000 or n & (n - 1) == 0:
                record_who(event, frames())
        except Exception:
            pass
        finally:
            busy.discard(me)

    # Only the watched modules' reads are looked at (sys's, threading's). The import system makes every
    # module as \`type(sys)(name)\`, so a class of the watch's makes a plain module when called itself, and
    # passes for the plain class in \`isinstance\`.
    class WatchedType(type):
        def __instancecheck__(cls, value):
            return isinstance(value, module_type)

        def __subclasscheck__(cls, other):
            return issubclass(other, module_type)

    made_types = set()

    def watched_new(cls, *args, **kwargs):
        if cls in made_types:
            return module_type(*args, **kwargs)
        return module_type.__new__(cls, *args, **kwargs)

    def watch_class(module, properties):
        # The module's class swapped for one of the watch's with these names as properties.
        names = {'__new__': watched_new, '__module__': module_type.__module__, '__qualname__': module_type.__qualname__}
        names.update(properties)
        made = WatchedType(module_type.__name__, (module_type,), names)
        made_types.add(made)
        try:
            module.__class__ = made
        except TypeError:
            pass

    # A look at the stack costs some microseconds, and a loop may read sys.argv on every turn: the first
    # 1,000 reads of a name from a line are looked at, then its 1,024th, 2,048th and so on. The count is
    # the line's, so a line of the doer's is looked at the first time it reads, however often others did.
    reads = {}

    def look(name):
        me = ident()
        if me in busy:
            return
        busy.add(me)
        try:
            reader = getframe(2)
            key = (name, reader.f_code, reader.f_lineno)
            n = reads[key] = reads.get(key, 0) + 1
            if n <= 1000 or n & (n - 1) == 0:
                asked(name, reader)
        except Exception:
            pass
        finally:
            busy.discard(me)

    # Each name is a property of the class: a property of an object's class comes before what the object
    # holds itself, by whatever route the name is read (\`sys.argv\`, \`getattr\`, \`object.__getattribute__\`,
    # the module class's own). The values stay in the module's namespace, where Python's C code reads
    # them, and are set and deleted there (\`mock.patch.object(sys, 'argv', …)\` and its undoing).
    own_dict = module_type.__dict__['__dict__'].__get__

    def module_property(module, name, ask, what):
        # \`name\` of a watched module's class: \`ask(what)\` looks at the reader (two frames up), then
        # the module's own value is answered; its whole namespace (\`__dict__\`) is read only.
        def get(self):
            ask(what)
            if name == '__dict__':
                return own_dict(self)
            try:
                return own_dict(self)[name]
            except KeyError:
                raise AttributeError("module '%s' has no attribute '%s'" % (module, name)) from None

        def put(self, value):
            own_dict(self)[name] = value

        def drop(self):
            try:
                del own_dict(self)[name]
            except KeyError:
                raise AttributeError(name) from None

        return property(get) if name == '__dict__' else property(get, put, drop)

    def watched(name):
        return module_property('sys', name, look, name)

    def spoken(module, name, event):
        # (A module's whole namespace, \`vars(threading)\`, is asked however it is said.)
        return module_property(module, name, hear, (None if name == '__dict__' else (module, name), event))

    properties = {name: watched(name) for name in ASKED}
    properties.update((name, spoken('sys', name, event)) for name, event in SPOKEN.items())
    # types.ModuleType stays the plain class when nothing took it yet.
    import types
    watch_class(_sys, properties)
`;

/**
 * Python run inside the watch's function after PYTHON_ARGV_WATCH, with the same names. Who runs the
 * process, asked of its environment: a variable a test runner sets in the processes it tests
 * (`PYTEST_CURRENT_TEST`, `NODE_TEST_CONTEXT`, `VITEST…`, `JEST_WORKER_ID`, `MOCHA_…`, npm's
 * `npm_lifecycle_event`) or Forge's own (`FORGE_…`), read by a line of a tree by a name it made (the
 * reading, runtime-reach.ts, counts the names said outright). Seen before: a `work()` that answered 0
 * unless `os.environ.get('PYTEST_' + 'CURRENT_TEST')` was set, kept at 960 times its speed with its
 * pytest tests green. Logged as `who`, event `os.environ['NAME']`, whether or not it is set (the
 * metric's run is where it is not). A line that copies the whole environment (`os.environ.copy()`,
 * `dict(os.environ)`, a loop over its items), as code that starts a process does, reads every name
 * at the one step that iterates it: such reads are not the asking of a name.
 */
export const PYTHON_ENV_WATCH = `    # (By their start, not by a pattern: \`re\` costs every process's start some milliseconds.)
    TELLING_STARTS = tuple(${JSON.stringify(TELLING_VARIABLES.starts)})
    TELLING_NAMES = ${JSON.stringify(TELLING_VARIABLES.names)}
    environ_type = type(_os.environ)
    environ_get = environ_type.__getitem__
    environ_iter = environ_type.__iter__
    copied = {}

    def asking_line():
        # The first frame above the watch's and Python's own (Mapping.get, os.getenv, an items view):
        # as (frame, the step it is at).
        f = getframe(2)
        while f is not None and own_frame(f.f_code.co_filename):
            f = f.f_back
        return None if f is None else (f, f.f_lasti)

    def watched_iter(self):
        me = ident()
        if me not in busy:
            busy.add(me)
            try:
                copied[me] = asking_line()
            except Exception:
                pass
            finally:
                busy.discard(me)
        return environ_iter(self)

    def watched_getitem(self, key):
        name = key.decode('latin-1') if isinstance(key, bytes) else key
        me = ident()
        if isinstance(name, str) and me not in busy and (name.startswith(TELLING_STARTS) or name in TELLING_NAMES):
            busy.add(me)
            try:
                line = asking_line()
                if line is not None and line != copied.get(me) and maybe_doers(join(start_cwd, line[0].f_code.co_filename) + ':0'):
                    record_who("os.environ['%s']" % name, frames())
            except Exception:
                pass
            finally:
                busy.discard(me)
        return environ_get(self, key)

    environ_type.__getitem__ = watched_getitem
    environ_type.__iter__ = watched_iter
`;
