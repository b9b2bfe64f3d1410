// A module the doer adds in its scope under the name of one of Python's own: a metric that puts the
// scope on its path (`sys.path.insert(0, 'src')`, PYTHONPATH) imports the doer's file in its place, and
// no reading of the artifact's code sees that (red team: `src/statistics.py` whose `median` returns
// 1000 was kept at 1000 for a worse 5, with nothing in `src/lib.py` but the worse change).
import { join } from 'node:path';
import { fileStat } from '../infra/fs-ops.js';

/** Python's standard library, top-level names (`sys.stdlib_module_names` of CPython 3.11, public ones). */
const PYTHON_STDLIB: ReadonlySet<string> = new Set(
  `
  abc aifc argparse array ast asynchat asyncio asyncore atexit audioop base64 bdb binascii bisect
  builtins bz2 cProfile calendar cgi cgitb chunk cmath cmd code codecs codeop collections colorsys
  compileall concurrent configparser contextlib contextvars copy copyreg crypt csv ctypes curses
  dataclasses datetime dbm decimal difflib dis distutils doctest email encodings ensurepip enum errno
  faulthandler fcntl filecmp fileinput fnmatch fractions ftplib functools gc genericpath getopt
  getpass gettext glob graphlib grp gzip hashlib heapq hmac html http idlelib imaplib imghdr imp
  importlib inspect io ipaddress itertools json keyword lib2to3 linecache locale logging lzma mailbox
  mailcap marshal math mimetypes mmap modulefinder msilib msvcrt multiprocessing netrc nis nntplib nt
  ntpath nturl2path numbers opcode operator optparse os ossaudiodev pathlib pdb pickle pickletools
  pipes pkgutil platform plistlib poplib posix posixpath pprint profile pstats pty pwd py_compile
  pyclbr pydoc pydoc_data pyexpat queue quopri random re readline reprlib resource rlcompleter runpy
  sched secrets select selectors shelve shlex shutil signal site smtpd smtplib sndhdr socket
  socketserver spwd sqlite3 sre_compile sre_constants sre_parse ssl stat statistics string stringprep
  struct subprocess sunau symtable sys sysconfig syslog tabnanny tarfile telnetlib tempfile termios
  textwrap threading time timeit tkinter token tokenize tomllib trace traceback tracemalloc tty
  turtle turtledemo types typing unicodedata unittest urllib uu uuid venv warnings wave weakref
  webbrowser winreg winsound wsgiref xdrlib xml xmlrpc zipapp zipfile zipimport zlib zoneinfo
`
    .trim()
    .split(/\s+/),
);

/**
 * Of the files a doer added, those that would be imported in place of a standard-library module or of
 * a package installed in the interpreters' site-packages (`installed`, asked only when an added file is
 * a Python module): a `name.py` (or `name/__init__.py`) in a folder that is no package of its own (no
 * `__init__.py`), so that the folder is what goes on a path. Sorted.
 */
export async function shadowingModules(
  repo: string,
  added: readonly string[],
  installed: () => Promise<ReadonlySet<string>> = async () => new Set(),
): Promise<string[]> {
  const found: string[] = [];
  let installedNames: ReadonlySet<string> | undefined;
  for (const path of added) {
    const match = /^(?:(.*?)\/)?([A-Za-z_]\w*)(?:\.pyw?|\/__init__\.py|(?:\.[\w-]+)?\.so)$/.exec(path);
    if (match === null) continue;
    const name = match[2] ?? '';
    if (!PYTHON_STDLIB.has(name)) {
      // Red team: `src/numpy/__init__.py` whose `mean` returns 1000, for a metric that put src/ first.
      installedNames ??= await installed();
      if (!installedNames.has(name)) continue;
    }
    const folder = match[1] ?? '';
    if ((await fileStat(join(repo, folder, '__init__.py'))) !== undefined) continue;
    found.push(path);
  }
  return found.sort();
}
