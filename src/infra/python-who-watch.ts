// The part of the Python read watch (python-watch.ts) that sees code ask who runs its process: the
// metric times the code and the tests check it, so code that can tell them apart can be fast under the
// one and right under the other. What tells it: a file of /proc that says who runs a process (its own
// command line, environment and open files, anything of another process's, the list of processes), and
// the stack reached by code of the scope itself. Both are logged as `who` (read-log.ts), judged by
// outside-reads.ts.

/**
 * Python run inside the watch's function, beside its `kind_of` and `hook` (which call these), with
 * the names that function defines (`frames`, `record`, `seen`, …) found as it runs.
 */
export const PYTHON_WHO_WATCH = `    # What tells code who runs its process, and so whether the metric or a test does: its own command
    # line, environment and open files, and anything of another process's (its parent's command line),
    # or the list of processes. Its own memory, limits and status are honest code's.
    def tells_who(path, listing):
        if path == '/proc':
            return listing
        parts = path.split('/')
        if len(parts) < 3 or parts[1] != 'proc' or not (parts[2] in ('self', 'thread-self') or parts[2].isdigit()):
            return False
        rest = parts[5:] if len(parts) > 4 and parts[3] == 'task' else parts[3:]
        if parts[2] not in ('self', 'thread-self', str(getpid())):
            return True
        return bool(rest) and rest[0] in ('cmdline', 'environ', 'fd', 'fdinfo')

    # The stack reached by code of the scope itself, by whatever name (a traceback's or a generator's
    # frame, a frame's code, sys._getframe, every thread's frames, a trace or profile function, which
    # sees each call's frame), or what refers to its own objects (a test module's globals refer to the
    # function it tests): whose file called it tells the metric from a test. Python's own modules do so
    # for their ends (warnings, logging, inspect): their access is not the code's.
    STACK_EVENTS = ('object.__getattr__', 'sys._getframe', 'sys._current_frames', 'sys.settrace', 'sys.setprofile',
                    'sys.monitoring.register_callback', 'gc.get_referrers', 'gc.get_referents', 'gc.get_objects')
    STACK_ATTRS = ('tb_frame', 'gi_frame', 'cr_frame', 'ag_frame', 'f_code')

    def stacked():
        try:
            f = getframe(2)
        except ValueError:
            return
        file = f.f_code.co_filename
        if own_frame(file) or not maybe_doers(join(start_cwd, file) + ':0'):
            return
        where = frames()
        if spawned_by:
            where.append(spawned_by)
        key = ('stack', '', tuple(where), False)
        if key in seen or times.get(('stack', ''), 0) >= MOST:
            return
        seen.add(key)
        times[('stack', '')] = times.get(('stack', ''), 0) + 1
        argv = getattr(_sys, 'argv', None) or ['']
        main = text(argv[0]) or ''
        main = realpath(join(start_cwd, main)) if main not in ('', '-c', '-m', '-') else ''
        record('{"pid":%d,"event":"stack","path":"","kind":"who","write":false,"ctimeMs":null,"frames":[%s]%s}' % (
            getpid(), ','.join(quote(f) for f in where), ',"entry":' + quote(main) if main else ''))

`;
