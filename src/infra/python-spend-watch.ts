// The part of the Python read watch (python-watch.ts) that sees code ask what its process has spent so
// far, and what a test runner set up in modules imported after the watch (logging's root handlers,
// threading's hook): run after python-who-watch.ts's parts, whose names (\`asking_line\`, \`spoken\`,
// \`watch_class\`, \`record_who\`) it calls.

/**
 * Python run after PYTHON_ENV_WATCH (whose `asking_line` it calls): what the process has spent so far
 * (its memory, CPU time, the collector's counts, the blocks it holds, the references to an object every
 * module shares, `sys.getrefcount(None)`), asked by a line of a tree by whatever name
 * (`getattr(resource, 'get' + 'rusage')`). Code pytest or unittest loads runs after their imports and
 * sees every one of these larger than under a benchmark (seen: `ru_maxrss > 12500` told them apart,
 * kept at 6,000 times its score). A `who` record, path-less, as `sys.argv`'s: a program of the doer's
 * asks of its own process. `resource` is wrapped as it is imported; a wrapper's look costs a frame
 * walk, and these are rarely called in a loop.
 */
export const PYTHON_SPEND_WATCH = `    import gc as _gc, time as _time

    def spent(module, name, event):
        real = getattr(module, name, None)
        if real is None:
            return

        def watched(*args, **kwargs):
            me = ident()
            if me not in busy:
                busy.add(me)
                try:
                    line = asking_line()
                    if line is not None and maybe_doers(join(start_cwd, line[0].f_code.co_filename) + ':0'):
                        record_who(event, frames())
                except Exception:
                    pass
                finally:
                    busy.discard(me)
            return real(*args, **kwargs)

        watched.__name__ = name
        watched.__qualname__ = name
        watched.__doc__ = real.__doc__
        setattr(module, name, watched)

    for name in ('process_time', 'process_time_ns', 'thread_time', 'thread_time_ns'):
        spent(_time, name, 'time.%s()' % name)
    spent(_os, 'times', 'os.times()')
    spent(_gc, 'get_count', 'gc.get_count()')
    spent(_gc, 'get_stats', 'gc.get_stats()')
    spent(_sys, 'getallocatedblocks', 'sys.getallocatedblocks()')
    spent(_sys, 'getrefcount', 'sys.getrefcount()')

    # Modules wrapped as they are imported: loading them in every process would cost each start (resource
    # ~1.5 ms, logging more). What is done to each once it has run:
    def wrap_resource(module):
        spent(module, 'getrusage', 'resource.getrusage()')

    def watch_handlers(logging):
        # What pytest sets up in each test's process besides: its logging plugin's handlers on the root
        # logger (a benchmark's has none; seen: \`logging.getLogger().handlers\` told them apart, kept at
        # about 20,000 times its score). The root logger's \`handlers\` becomes a property of the class whose
        # reader, when a line of a tree (or the caller of logging's \`hasHandlers\`, which asks for it),
        # is logged; logging's own reads (a record handed on, \`basicConfig\`) are its own.
        logger_type, root_type = getattr(logging, 'Logger', None), getattr(logging, 'RootLogger', None)
        if logger_type is None or root_type is None or 'handlers' in vars(logger_type):
            return
        logging_file = getattr(logging, '__file__', None)

        def read(self):
            try:
                value = self.__dict__['handlers']
            except KeyError:
                raise AttributeError('handlers') from None
            me = ident()
            if isinstance(self, root_type) and me not in busy:
                busy.add(me)
                try:
                    f = getframe(1)
                    if f.f_code.co_filename == logging_file and f.f_code.co_name == 'hasHandlers':
                        f = f.f_back
                    file = None if f is None else f.f_code.co_filename
                    if file is not None and not own_frame(file) and maybe_doers(join(start_cwd, file) + ':0'):
                        record_who("the root logger's handlers", frames())
                except Exception:
                    pass
                finally:
                    busy.discard(me)
            return value

        def write(self, value):
            self.__dict__['handlers'] = value

        logger_type.handlers = property(read, write)

    def watch_threading(threading):
        # pytest's own hook for a thread's uncaught exceptions, set for each test (seen: compared with
        # the original by made names, kept at 5,000 times its score); \`threading.excepthook\` said is
        # the reading's.
        watch_class(threading, {'excepthook': spoken('threading', 'excepthook', 'threading.excepthook'),
                                '__dict__': spoken('threading', '__dict__', 'vars(threading)')})

    ON_IMPORT = {'resource': wrap_resource, 'logging': watch_handlers, 'threading': watch_threading}

    class WatchFinder:
        @staticmethod
        def find_spec(name, path=None, target=None):
            then = ON_IMPORT.get(name)
            if then is None:
                return None
            for finder in _sys.meta_path:
                find = None if finder is WatchFinder else getattr(finder, 'find_spec', None)
                spec = None if find is None else find(name, path, target)
                if spec is not None and spec.loader is not None:
                    spec.loader = WatchLoader(spec.loader, then)
                    return spec
            return None

    class WatchLoader:
        def __init__(self, loader, then):
            self.loader = loader
            self.then = then

        def create_module(self, spec):
            return self.loader.create_module(spec)

        def exec_module(self, module):
            self.loader.exec_module(module)
            try:
                self.then(module)
            except Exception:
                pass

        def __getattr__(self, name):
            # What else a loader answers (\`is_package\`, \`get_filename\`), as the module's own would.
            return getattr(self.loader, name)

    waiting = False
    for name, then in ON_IMPORT.items():
        if name in _sys.modules:
            then(_sys.modules[name])
        else:
            waiting = True
    if waiting:
        _sys.meta_path.insert(0, WatchFinder)
`;
