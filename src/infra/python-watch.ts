// What a Python process of a watched run read and wrote outside what a commit holds. Code the doer
// changed can read back a value its turn left where git does not look, with a path no reading of the
// code can see (`Path(__file__).parents[3] / 'cache'`, `'.g' + 'it'`): the score is then the plant's,
// not the commit's. Python reports every open to its audit hooks (PEP 578), which code cannot remove:
// a `sitecustomize.py` on PYTHONPATH adds one that logs each open, listing and removal of a path in a
// folder of git's, Forge's or br's (`.git/`, `.forge/`, `.beads/`), or outside the trees the run
// measures and outside the places a Python run reads as a matter of course (its own install, the
// system's folders, the run's own temp directory), with the files on the stack; outside-reads.ts says
// which of those were the doer's. The hook refuses the run's code a write to its own folder, so that
// the log cannot be rewritten, and hands over to any other `sitecustomize` (Debian ships one).

import {
  EXIT_PARENT_VAR,
  NODE_HOOK_FILE,
  READ_LOG_VAR,
  WATCH_BY_VAR,
  WATCH_KEYS_VAR,
  WATCH_ROOTS_VAR,
  WATCH_VARS,
} from './read-log.js';
import { PYTHON_SPEND_WATCH } from './python-spend-watch.js';
import { PYTHON_ARGV_WATCH, PYTHON_ENV_WATCH, PYTHON_WHO_WATCH } from './python-who-watch.js';

// Runs in every Python from 3.8 (older ones have no audit hooks and are left unwatched). Everything it
// needs is taken when the process starts; nothing it does may throw, except its refusal of a write to
// its own folder.
export const PYTHON_HOOK = `# Forge's read watch: written for one run of a loop's checks and removed after it.
import os as _os
import sys as _sys


def _forge_read_watch():
    env = _os.environ
    log = env.get('${READ_LOG_VAR}')
    if not log or not hasattr(_sys, 'addaudithook'):
        return
    import _thread
    here = _os.path.realpath(_os.path.dirname(log))
    own_file = _os.path.abspath(__file__)
    realpath, abspath, join, sep = _os.path.realpath, _os.path.abspath, _os.path.join, _os.sep
    fspath, fsdecode, getcwd, stat = _os.fspath, _os.fsdecode, _os.getcwd, _os.stat
    getframe, getpid, ident = _sys._getframe, _os.getpid, _thread.get_ident
    roots = [realpath(r) for r in (env.get('${WATCH_ROOTS_VAR}') or '').split(_os.pathsep) if r]
    keys = [realpath(k) for k in (env.get('${WATCH_KEYS_VAR}') or '').split(_os.pathsep) if k]
    spawned_by = env.get('${WATCH_BY_VAR}') or None
    start_cwd = getcwd()

    def deep(path):
        return path.count(sep) >= 2

    usual = ['/usr', '/etc', '/proc', '/sys', '/dev', '/lib', '/lib32', '/lib64', '/libx32', '/bin',
             '/sbin', '/snap', '/nix/store']
    for p in (_sys.prefix, _sys.base_prefix, _sys.exec_prefix, getattr(_sys, 'base_exec_prefix', '')):
        if p and deep(realpath(p) + sep):
            usual.append(realpath(p))
    # Where bytecode is cached when PYTHONPYCACHEPREFIX moves it out of the tree (the dependency
    # guard watches what a doer leaves there).
    if getattr(_sys, 'pycache_prefix', None) and deep(realpath(_sys.pycache_prefix)):
        usual.append(realpath(_sys.pycache_prefix))
    temp = env.get('TMPDIR')
    if temp and deep(realpath(temp)):
        usual.append(realpath(temp))
    stdlib = realpath(_os.path.dirname(_os.__file__))
    sites = []
    try:
        import site
        sites = [realpath(p) for p in site.getsitepackages() + [site.getusersitepackages()]]
    except Exception:
        pass
    usual.extend(sites)

    def under(path, folder):
        return path == folder or path.startswith(folder.rstrip(sep) + sep)

    def above_root(path):
        for root in roots:
            if under(root, path):
                return True
        return False

    def in_root(path):
        for root in roots:
            if under(path, root):
                return root
        return None

    def kind_of(path, listing=False):
        root = in_root(path)
        # Inside one of those folders, or a listing of one: opening .git itself is how code finds
        # its repository (a worktree's .git is a file).
        parts = (path if root is None else path[len(root):]).split(sep)
        if not listing:
            parts = parts[:-1]
        if '.git' in parts or '.forge' in parts or '.beads' in parts:
            return 'state'
        if root is None and tells_who(path, listing):
            return 'who'
        if root is not None:
            for folder in keys:
                if not listing and under(path, folder):
                    return 'key'
            return None
        for folder in usual:
            # /dev/shm is a folder anyone writes, as /tmp is (unless it holds the run's temp directory).
            if under(path, folder) and not (folder == '/dev' and under(path, '/dev/shm')):
                return None
        return 'outside'

    def own_frame(file):
        if file.startswith('<') or file == own_file:
            return True
        if not under(file, stdlib):
            return False
        for s in sites:
            if under(file, s):
                return False
        return True

    def maybe_doers(frame):
        # A frame that may be the doer's: in a tree, out of the metric's folders and installed packages.
        file = frame.rsplit(':', 1)[0]
        if 'site-packages' in file or 'dist-packages' in file or 'node_modules' in file:
            return False
        if any(under(file, k) for k in keys):
            return False
        return in_root(file) is not None

    # A program of the doer's (its main script in the scope: a CLI the metric runs): whatever in it reads
    # the metric's files (a thread handed \`open\` itself, code run from a string) reads them. Said as its
    # entry, line 0; sys.argv is not set yet while this module loads.
    entry = []

    def own_entry():
        if not entry:
            argv = getattr(_sys, 'argv', None) or ['']
            main = text(argv[0]) or ''
            path = realpath(join(start_cwd, main)) if main not in ('', '-c', '-m', '-') else ''
            entry.append(path + ':0' if path and _os.path.isfile(path) and maybe_doers(path + ':0') else None)
        return entry[0]

    def unasked():
        # The import system reading a module for whatever imports it, or the interpreter opening its
        # main script before any code runs: a read no code handed on.
        try:
            f = getframe(2)
        except ValueError:
            return True
        while f is not None and f.f_code.co_filename == own_file:
            f = f.f_back
        return f is None or f.f_code.co_filename.startswith(('<frozen importlib', '<frozen zipimport'))

    def handed_to(path):
        # A word \`--input=metric/in.txt\` hands its path; a folder handed hands the files in it.
        for a in getattr(_sys, 'argv', []):
            a = text(a)
            for word in (a, a.split('=', 1)[-1]) if a else ():
                if word and under(path, realpath(join(start_cwd, word))):
                    return True
        return False

    metric_read = set()
    MOST_METRIC_READS = 2000
    # A process the doer's code starts is the doer's: it is told so (WATCH_BY_VAR), and a file of the
    # metric's named on its command line (\`cat metric/cases.json\`, which no watch sees read) is logged.
    SPAWNS = {'subprocess.Popen': 3, 'os.system': None, 'os.posix_spawn': 2, 'os.exec': 2, 'os.spawn': 3}

    def words_of(event, args):
        given = args[0] if event == 'os.system' else (args[1] if event in ('subprocess.Popen', 'os.posix_spawn', 'os.exec') else args[2])
        items = [given] if isinstance(given, (str, bytes)) else list(given or [])
        out = []
        for item in items:
            word = text(item)
            if word is not None:
                out.extend(word.replace('"', ' ').replace("'", ' ').replace('=', ' ').split())
        return out

    # What a child needs to be watched as this process is, taken as it starts (exit-watch.ts's
    # keepWatched): given back to a child started with an environment of its own, unless another
    # watch's preload is in its NODE_OPTIONS (Forge run under Forge).
    watch_values = [(k, env[k]) for k in ${JSON.stringify(WATCH_VARS).replace(/"/g, "'")} if k in env]
    python_folder = _os.path.dirname(own_file)
    node_hook = join(_os.path.dirname(python_folder), '${NODE_HOOK_FILE}')

    def keep_watched(target):
        options = target.get('NODE_OPTIONS') or ''
        if '${NODE_HOOK_FILE}' in options.replace(node_hook, ''):
            return
        if node_hook not in options:
            quoted = node_hook.replace('\\\\', '\\\\\\\\').replace('"', '\\\\"')
            target['NODE_OPTIONS'] = (options + ' --require "' + quoted + '"').strip()
        for k, v in watch_values:
            target[k] = v
        if '${EXIT_PARENT_VAR}' not in target and '${EXIT_PARENT_VAR}' in env:
            target['${EXIT_PARENT_VAR}'] = env['${EXIT_PARENT_VAR}']
        parts = [p for p in (target.get('PYTHONPATH') or '').split(_os.pathsep) if p]
        if python_folder not in parts:
            target['PYTHONPATH'] = _os.pathsep.join([python_folder] + parts)

    def spawned(event, args):
        where = frames()
        if spawned_by:
            where.append(spawned_by)
        by = spawned_by or next((f for f in where if maybe_doers(f)), None) or own_entry()
        at = SPAWNS[event]
        target = args[at] if at is not None and len(args) > at and args[at] is not None else _os.environ
        try:
            if by:
                target['${WATCH_BY_VAR}'] = by
            else:
                target.pop('${WATCH_BY_VAR}', None)
            keep_watched(target)
        except Exception:
            pass
        if not by or not keys:
            return
        cwd = text(args[2]) if event == 'subprocess.Popen' and len(args) > 2 and args[2] is not None else None
        for word in words_of(event, args):
            path = realpath(join(cwd or getcwd(), word))
            if not any(under(path, k) for k in keys) or ('spawn', path) in seen:
                continue
            seen.add(('spawn', path))
            record('{"pid":%d,"event":"spawn","path":%s,"kind":"key","write":false,"ctimeMs":null,"frames":[%s]}' % (
                getpid(), quote(path), ','.join(quote(f) for f in where)))

    busy = set()
    seen = set()
    times = {}
    MOST = 8
    WRITES = ('os.remove', 'os.rename', 'os.rmdir', 'os.truncate', 'shutil.rmtree', 'os.chmod',
              'os.symlink', 'os.link', 'os.utime', 'os.mkdir')
    LISTS = ('os.listdir', 'os.scandir')
    # Not audit events: the wrappers below report them, for a file's presence, size or time carries a
    # value as well as its bytes do (os.path.exists, Path.stat and the import system go through them).
    # os.statvfs and os.pathconf answer for the file system a path is on, and fail when it is not there
    # (red team: a doer-left ../flag tested with os.statvfs passed unseen); extended attributes and
    # a change of folder are audit events of their own.
    TESTS = ('os.stat', 'os.lstat', 'os.access', 'os.readlink', 'os.statvfs', 'os.pathconf',
             'os.getxattr', 'os.listxattr', 'os.chdir')

    def paths_of(event, args):
        if event == 'open' or event in LISTS:
            return args[:1]
        if event in ('os.rename', 'os.symlink', 'os.link'):
            return args[:2]
        return args[:1]

    def text(value):
        if value is None or isinstance(value, int):
            return None
        try:
            return fsdecode(fspath(value))
        except Exception:
            return None

    def writes(event, args):
        if event != 'open':
            return event in WRITES
        mode = args[1] if len(args) > 1 else None
        if isinstance(mode, str):
            return any(c in mode for c in 'wax+')
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        return bool(flags & (_os.O_WRONLY | _os.O_RDWR | _os.O_CREAT | _os.O_TRUNC | _os.O_APPEND))

    def frames():
        out = []
        f = getframe(2)
        while f is not None and len(out) < 48:
            file = f.f_code.co_filename
            if not own_frame(file):
                out.append(join(start_cwd, file) + ':' + str(f.f_lineno))
            f = f.f_back
        return out

    def quote(value):
        # JSON's string form without importing json (11 ms of every process's start).
        out = ['"']
        for c in value:
            if c == '"' or c == '\\\\':
                out.append('\\\\' + c)
            elif c < ' ' or '\\ud800' <= c <= '\\udfff':
                out.append('\\\\u%04x' % ord(c))
            else:
                out.append(c)
        out.append('"')
        return ''.join(out)

    def record(line):
        fd = _os.open(log, _os.O_WRONLY | _os.O_APPEND)
        try:
            _os.write(fd, (line + '\\n').encode('utf-8', 'surrogateescape'))
        finally:
            _os.close(fd)

${PYTHON_WHO_WATCH}    def hook(event, args):
        if event != 'open' and event not in LISTS and event not in WRITES and event not in TESTS and event not in SPAWNS:
            if event not in STACK_EVENTS or (event == 'object.__getattr__' and (len(args) < 2 or args[1] not in STACK_ATTRS)):
                return
        me = ident()
        if me in busy:
            return
        busy.add(me)
        try:
            if event in STACK_EVENTS:
                stacked()
                return
            if event in SPAWNS:
                spawned(event, args)
                return
            write = writes(event, args)
            for given in paths_of(event, args):
                name = text(given)
                if name is None:
                    continue
                path = realpath(join(getcwd(), name))
                if under(path, here):
                    refuse = PermissionError(13, "Forge's run watch is not the measured code's", name)
                    break
                listing = event in LISTS
                kind = kind_of(path, listing) or kind_of(abspath(join(getcwd(), name)), listing)
                if kind is None:
                    continue
                # Only a file's bytes are the metric's answers: its name, size or presence are not.
                if kind == 'key' and (event != 'open' or write):
                    continue
                # The folders above a tree are looked at by every realpath of a path in it.
                if kind == 'outside' and event in TESTS and above_root(path):
                    continue
                # A hot loop over one file logs a few stacks, not each call.
                once = (event, path)
                # (Not for the metric's files: code reading one from many places first must not crowd
                # out the metric's own read of it, which says it is the metric's answers.)
                if kind != 'key' and times.get(once, 0) >= MOST:
                    continue
                where = frames()
                if spawned_by:
                    where.append(spawned_by)
                orphan = False
                if kind == 'who' and not where and not unasked():
                    orphan = True
                if kind == 'key' and not any(maybe_doers(f) for f in where):
                    if own_entry():
                        where.append(own_entry())
                    elif not where and not unasked():
                        # No file at all on the stack: a read handed to Python's own code (a thread
                        # given \`open\` or \`Path.read_text\` itself) so that no file calls it.
                        orphan = True
                    else:
                        # The metric reading its own files (a folder of fixtures, thousands maybe):
                        # each once, no stack.
                        if path in metric_read or len(metric_read) >= MOST_METRIC_READS:
                            continue
                        metric_read.add(path)
                        where = []
                key = (event, path, tuple(where), orphan)
                if key in seen:
                    continue
                seen.add(key)
                times[once] = times.get(once, 0) + 1
                try:
                    changed = stat(path).st_ctime_ns // 1000000
                except OSError:
                    changed = None
                # A file of the metric's named on the command line is one the metric handed the code.
                handed = kind == 'key' and handed_to(path)
                record('{"pid":%d,"event":%s,"path":%s,"kind":"%s","write":%s,"ctimeMs":%s,"frames":[%s]%s%s}' % (
                    getpid(), quote(event), quote(path), kind, 'true' if write else 'false',
                    'null' if changed is None else str(changed), ','.join(quote(f) for f in where),
                    ',"handed":true' if handed else '', ',"orphan":true' if orphan else ''))
            else:
                refuse = None
        except Exception:
            refuse = None
        finally:
            busy.discard(me)
        if refuse is not None:
            raise refuse

    _sys.addaudithook(hook)

    import posix

    def tested(name):
        original = getattr(posix, name, None)
        if original is None:
            return

        def wrapped(path, *args, **kwargs):
            hook('os.' + name, (path,))
            return original(path, *args, **kwargs)

        wrapped.__name__ = name
        wrapped.__doc__ = original.__doc__
        setattr(posix, name, wrapped)
        if getattr(_os, name, None) is original:
            setattr(_os, name, wrapped)

    for name in ('stat', 'lstat', 'access', 'readlink', 'statvfs', 'pathconf'):
        tested(name)

${PYTHON_ARGV_WATCH}
${PYTHON_ENV_WATCH}
${PYTHON_SPEND_WATCH}

try:
    _forge_read_watch()
except Exception:
    pass


def _forge_next_sitecustomize():
    # abspath, not realpath: the watch's own look at each folder is not the code's.
    here = _os.path.dirname(_os.path.abspath(__file__))
    _sys.path[:] = [p for p in _sys.path if _os.path.abspath(p or '.') != here]
    # The import system's own modules, loaded already: importlib.util would cost every process's start.
    spec = _sys.modules['_frozen_importlib_external'].PathFinder.find_spec('sitecustomize', _sys.path)
    if spec is None or spec.loader is None:
        return
    module = _sys.modules['_frozen_importlib'].module_from_spec(spec)
    _sys.modules['sitecustomize'] = module
    spec.loader.exec_module(module)


_forge_next_sitecustomize()
`;

/** PYTHONPATH with `folder` first, ahead of what it held. */
export function withPythonPath(pythonPath: string | undefined, folder: string, delimiter: string): string {
  return [folder, ...(pythonPath ?? '').split(delimiter).filter((part) => part !== '')].join(delimiter);
}
