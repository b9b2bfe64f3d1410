// The texts the answer probe (answer-probe.ts) puts in place of the scope's code. Two kinds:
// - answerless: every name the module exported is a function that returns undefined (None), and a
//   program prints nothing. A metric that scores that as well as the real code reads no answer.
// - size-gated: the module's own functions, wrapped so that a call answers as the real one does while
//   what it is given is no larger than the smallest call so far, and answers nothing at once when it
//   is larger. A metric that checks a few small cases and then times large ones it never checks scores
//   that as well as the real code, or better: code that answers the large inputs wrong and fast is then
//   kept (the tell by size no reading can see).
// Each stub adds its path to a mark file at the checkout's root when it is loaded; when its process
// ends, the answerless one notes the smallest call each function was given and the gated one whether
// it left a call unanswered (never inside the calls, which the metric may be timing). So the probe
// knows what ran, what was left unanswered, and where the next round's gates start.

/** Where each stub adds its path when it is loaded. */
export const LOADED_MARK = '.forge-answer-probe-loaded';
/** Where a size-gated stub adds its path, when its process ends, if it left a call unanswered. */
export const SKIPPED_MARK = '.forge-answer-probe-skipped';
/**
 * Where an answerless stub notes, when its process ends, the smallest call each of its functions was
 * given: `[path, name, size]` as JSON, a line each. The size-gated round answers no call larger than
 * that, so a metric that times its large case first and checks a small one after is found as well.
 */
export const SIZES_MARK = '.forge-answer-probe-sizes';

/** Where an answerless stub notes call sizes: the file's expression in the stub, and its own path. */
interface SizesNote {
  to: string;
  path: string;
}

/**
 * The smallest call each function of each file was given (file → name → size), from a SIZES_MARK
 * file's lines; a line that is not one of a stub's is passed over.
 */
export function callFloors(text: string): Map<string, Record<string, number>> {
  const floors = new Map<string, Record<string, number>>();
  for (const line of text.split('\n')) {
    let entry: unknown;
    try {
      entry = JSON.parse(line);
    } catch {
      continue;
    }
    if (!Array.isArray(entry) || entry.length !== 3) continue;
    const [path, name, size] = entry as unknown[];
    if (typeof path !== 'string' || typeof name !== 'string' || typeof size !== 'number') continue;
    const own = floors.get(path) ?? {};
    own[name] = Math.min(own[name] ?? Infinity, size);
    floors.set(path, own);
  }
  return floors;
}

/** The file beside `path` that holds its real code while a size-gated stub stands at `path`. */
export function realCodePath(path: string): string {
  const slash = path.lastIndexOf('/');
  const dir = path.slice(0, slash + 1);
  const name = path.slice(slash + 1);
  // A Python module's name must stay a name it can be imported by.
  if (/\.pyw?$/.test(name)) return `${dir}${name.replace(/\.pyw?$/, '')}__forge_real.py`;
  return `${dir}.${name.replace(/(\.[^.]+)$/, '.forge-real$1')}`;
}

interface Parts {
  /** From the file's folder up to the checkout's root, where the marks are. */
  up: string;
  /** A program run by its path keeps the line that says what runs it. */
  shebang: string;
  kind: 'py' | 'esm' | 'cjs';
}

function partsOf(path: string, text: string): Parts | undefined {
  const up = '../'.repeat(path.split('/').length - 1);
  const shebang = /^#!.*\n/.exec(text)?.[0] ?? '';
  if (/\.pyw?$/.test(path)) return { up, shebang, kind: 'py' };
  if (!/\.(?:[cm]?[jt]sx?)$/.test(path)) return undefined;
  const esm = /\.m[jt]s$/.test(path) || (!/\.c[jt]s$/.test(path) && /^[ \t]*(?:export|import)\b/m.test(text));
  return { up, shebang, kind: esm ? 'esm' : 'cjs' };
}

/**
 * The text of a module that answers nothing in place of the file at `path` whose text is `text`: the
 * same names exported, each a function that returns undefined (None in Python). Undefined for a file
 * of another language.
 */
export function answerlessModule(path: string, text: string): string | undefined {
  const parts = partsOf(path, text);
  if (parts === undefined) return undefined;
  const mark = markLine(parts, path, LOADED_MARK);
  const sizes: SizesNote = { to: markTarget(parts, SIZES_MARK), path: JSON.stringify(path) };
  if (parts.kind === 'py') return parts.shebang + pythonAnswerless(mark, sizes);
  return (
    parts.shebang +
    (parts.kind === 'esm' ? esmAnswerless(text, mark, sizes) : cjsAnswerless(text, mark, sizes))
  );
}

/**
 * The text of a module that answers as the real one at `realCodePath(path)` does for calls no larger
 * than the smallest so far, and nothing for larger ones. Undefined for a file of another language.
 */
export function sizeGatedModule(
  path: string,
  text: string,
  floors: Readonly<Record<string, number>> = {},
): string | undefined {
  const parts = partsOf(path, text);
  if (parts === undefined) return undefined;
  const real = realCodePath(path);
  const loaded = markLine(parts, path, LOADED_MARK);
  const skipped = markLine(parts, path, SKIPPED_MARK);
  const floorsJson = JSON.stringify(floors);
  if (parts.kind === 'py') return parts.shebang + pythonGated(real, loaded, skipped, floorsJson);
  const specifier = JSON.stringify(`./${real.slice(real.lastIndexOf('/') + 1)}`);
  const lines = [
    "// Forge's answer probe: this module answers small calls only.",
    ...(parts.kind === 'esm'
      ? [
          "import { appendFileSync as forgeMark } from 'node:fs';",
          `import * as forgeReal from ${specifier};`,
          `export * from ${specifier};`,
        ]
      : ["'use strict';", "const forgeMark = require('node:fs').appendFileSync;"]),
    loaded,
    JS_SIZE,
    ...JS_GATE.split('\n'),
    `const forgeFloors = ${floorsJson};`,
    'let forgeTold = false;',
    // Noted when the process ends, not in the calls the metric may be timing.
    `process.on('exit', () => { if (forgeTold) { ${skipped} } });`,
    'const forgeSkipped = () => { forgeTold = true; };',
  ];
  if (parts.kind === 'esm') {
    const names = esmNames(text);
    for (const name of names.names)
      lines.push(`export const ${name} = forgeGate(forgeReal.${name}, forgeSkipped, forgeFloors.${name});`);
    if (names.withDefault)
      lines.push("export default forgeGate(forgeReal.default, forgeSkipped, forgeFloors['default']);");
  } else {
    lines.push(`const forgeReal = require(${specifier});`);
    for (const name of cjsNames(text)) lines.push(`exports.${name} = undefined;`);
    lines.push(
      'const forgeMembers = () => Object.fromEntries(Object.entries(forgeReal).map(([k, v]) => [k, forgeGate(v, forgeSkipped, forgeFloors[k])]));',
      "const forgeGated = forgeGate(forgeReal, forgeSkipped, forgeFloors['']);",
      // A function answers through its gate, its members too; a class or a value is passed on; an
      // object's members are gated over its prototype.
      'module.exports =',
      '  forgeGated !== forgeReal ? Object.assign(forgeGated, forgeMembers())',
      "  : typeof forgeReal === 'object' && forgeReal !== null ? Object.assign(Object.create(Object.getPrototypeOf(forgeReal)), forgeMembers())",
      '  : forgeReal;',
    );
  }
  return `${parts.shebang}${lines.join('\n')}\n`;
}

/** The expression for the mark file `mark` at the checkout's root, for the stub's language. */
function markTarget(parts: Parts, mark: string): string {
  const to = JSON.stringify(parts.up + mark);
  if (parts.kind === 'py') return `_os.path.join(_os.path.dirname(_os.path.abspath(__file__)), ${to})`;
  if (parts.kind === 'esm') return `new URL(${to}, import.meta.url)`;
  return `require('node:path').join(__dirname, ${to})`;
}

/** The statement that adds `path` to the mark file `mark`, for the stub's language. */
function markLine(parts: Parts, path: string, mark: string): string {
  const line = JSON.stringify(`${path}\n`);
  if (parts.kind === 'py')
    return `with open(${markTarget(parts, mark)}, 'a') as _mark:\n    _mark.write(${line})`;
  return `forgeMark(${markTarget(parts, mark)}, ${line});`;
}

/**
 * How large a call is: numbers by their magnitude, strings, arrays and typed arrays by their length,
 * maps and sets by their size, a plain object by the sum of its values' (one level down), the rest 0.
 */
const JS_SIZE = `const forgeSizeOf = (a, deep) => typeof a === 'number' ? Math.abs(a) || 0 : typeof a === 'bigint' ? Math.abs(Number(a)) : typeof a === 'string' || Array.isArray(a) || ArrayBuffer.isView(a) ? a.length : a instanceof Map || a instanceof Set ? a.size : deep && typeof a === 'object' && a !== null ? Object.values(a).slice(0, 64).reduce((n, v) => n + forgeSizeOf(v, false), 0) : 0;
const forgeSizeOfCall = (args) => { let size = 0; for (const a of args) size += forgeSizeOf(a, true); return size; };`;

/**
 * A function answers through a gate that passes calls no larger than its floor (the smallest call the
 * answerless round saw) and the smallest so far; a function that is not one (a class, a value) is
 * passed on as it is.
 */
const JS_GATE = `function forgeGate(real, skipped, floor) {
  if (typeof real !== 'function' || /^class\\b/.test(Function.prototype.toString.call(real))) return real;
  let least = typeof floor === 'number' ? floor : Infinity;
  return function (...args) {
    const size = forgeSizeOfCall(args);
    if (size <= least) {
      least = size;
      return new.target === undefined ? real.apply(this, args) : Reflect.construct(real, args, new.target);
    }
    skipped();
    return undefined;
  };
}`;

/** How large a Python call is, as JS_SIZE says. */
const PY_SIZE = `def _size_of(a, deep=True):
    if isinstance(a, bool):
        return 0
    if isinstance(a, (int, float)):
        return abs(a)
    if deep and isinstance(a, dict):
        return sum(_size_of(v, False) for v in list(a.values())[:64])
    try:
        return len(a)
    except Exception:
        return 0


def _size_of_call(args, kwargs):
    return sum(_size_of(a) for a in list(args) + list(kwargs.values()))
`;

function pythonGated(real: string, loaded: string, skipped: string, floors: string): string {
  const module = JSON.stringify(real.slice(real.lastIndexOf('/') + 1).replace(/\.py$/, ''));
  return `# Forge's answer probe: this module answers small calls only.
import atexit as _atexit
import importlib as _importlib
import os as _os
${loaded}
_real = _importlib.import_module(('.' if __package__ else '') + ${module}, __package__ or None)


${PY_SIZE}

_told = []


def _skipped():
    if not _told:
        _told.append(True)


def _note_skipped():
    if _told:
        ${skipped.replace(/\n/g, '\n        ')}


_atexit.register(_note_skipped)
_floors = ${floors}


def _gate(real, floor):
    if not callable(real) or isinstance(real, type):
        return real
    least = [float('inf') if floor is None else floor]

    def gated(*args, **kwargs):
        size = _size_of_call(args, kwargs)
        if size <= least[0]:
            least[0] = size
            return real(*args, **kwargs)
        _skipped()
        return None

    return gated


_gated = {}
__all__ = getattr(_real, '__all__', [n for n in dir(_real) if not n.startswith('_')])


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    if name not in _gated:
        _gated[name] = _gate(getattr(_real, name), _floors.get(name))
    return _gated[name]
`;
}

function pythonAnswerless(mark: string, sizes: SizesNote): string {
  return `# Forge's answer probe: this module answers nothing.
import atexit as _atexit
import os as _os
${mark}


${PY_SIZE}

_answerless = {}
_least = {}


def _note_sizes():
    if _least:
        import json as _json

        with open(${sizes.to}, 'a') as sizes:
            for name, size in _least.items():
                sizes.write(_json.dumps([${sizes.path}, name, size]) + '\\n')


_atexit.register(_note_sizes)


def _answering_nothing(name):
    def answerless(*args, **kwargs):
        size = _size_of_call(args, kwargs)
        if name not in _least or size < _least[name]:
            _least[name] = size
        return None

    return answerless


def __getattr__(name):
    if name.startswith('__'):
        raise AttributeError(name)
    if name not in _answerless:
        _answerless[name] = _answering_nothing(name)
    return _answerless[name]
`;
}

/** The names an ES module exports, found in its text, and whether it has a default export. */
function esmNames(text: string): { names: Set<string>; withDefault: boolean } {
  const names = new Set<string>();
  let withDefault = /^[ \t]*export\s+default\b/m.test(text);
  for (const m of text.matchAll(
    /^[ \t]*export\s+(?:declare\s+)?(?:async\s+)?(?:function\s*\*?|const|let|var|class|abstract\s+class|enum)\s+([A-Za-z_$][\w$]*)/gm,
  ))
    names.add(m[1] ?? '');
  for (const m of text.matchAll(/^[ \t]*export\s*\{([^}]*)\}/gm)) {
    for (const part of (m[1] ?? '').split(',')) {
      const name =
        part
          .trim()
          .replace(/^type\s+/, '')
          .split(/\s+as\s+/)
          .at(-1)
          ?.trim() ?? '';
      if (name === 'default') withDefault = true;
      else if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
    }
  }
  return { names, withDefault };
}

/** The JS of `forgeAnswerless(name)`: a function that answers nothing and notes each smaller call. */
function jsAnswerless(sizes: SizesNote): string {
  return `${JS_SIZE}
const forgeLeast = new Map();
// Noted when the process ends, not in the calls the metric may be timing.
process.on('exit', () => {
  if (forgeLeast.size > 0) forgeMark(${sizes.to}, [...forgeLeast].map(([name, size]) => JSON.stringify([${sizes.path}, name, size]) + '\\n').join(''));
});
function forgeAnswerless(name) {
  return function () {
    const size = forgeSizeOfCall(arguments);
    if (!(forgeLeast.get(name) <= size)) forgeLeast.set(name, size);
  };
}`;
}

function esmAnswerless(text: string, mark: string, sizes: SizesNote): string {
  const { names, withDefault } = esmNames(text);
  const lines = [
    "// Forge's answer probe: this module answers nothing.",
    "import { appendFileSync as forgeMark } from 'node:fs';",
    mark,
    jsAnswerless(sizes),
  ];
  for (const m of text.matchAll(/^[ \t]*export\s*\*\s*(?:as\s+[\w$]+\s+)?from\s*(['"][^'"\n]+['"])/gm))
    lines.push(`export * from ${m[1] ?? "''"};`);
  for (const name of names) lines.push(`export const ${name} = forgeAnswerless(${JSON.stringify(name)});`);
  if (withDefault) lines.push("export default forgeAnswerless('default');");
  return `${lines.join('\n')}\n`;
}

/**
 * The names a CommonJS module exports, found in its text: Node finds the names an ES module may import
 * from CommonJS in the text (`exports.x =`), so a stub writes them out before what it exports.
 */
function cjsNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const m of text.matchAll(/\b(?:module\s*\.\s*)?exports\s*\.\s*([A-Za-z_$][\w$]*)\s*=/g))
    names.add(m[1] ?? '');
  const object = /\bmodule\s*\.\s*exports\s*=\s*\{([^}]*)\}/.exec(text)?.[1] ?? '';
  for (const part of object.split(',')) {
    const name = part.split(':')[0]?.trim() ?? '';
    if (/^[A-Za-z_$][\w$]*$/.test(name)) names.add(name);
  }
  return names;
}

function cjsAnswerless(text: string, mark: string, sizes: SizesNote): string {
  return [
    "// Forge's answer probe: this module answers nothing.",
    "'use strict';",
    "const forgeMark = require('node:fs').appendFileSync;",
    mark,
    jsAnswerless(sizes),
    // The module, and every member asked of it at any depth, answers nothing; each by its name.
    'const forgeMember = (name) => {',
    '  const members = new Map();',
    '  const call = forgeAnswerless(name);',
    '  return new Proxy(function () {}, {',
    "    get: (target, key) => key === 'prototype' ? target.prototype : typeof key === 'symbol' || key === 'then' || key === '__esModule' ? undefined : members.get(key) ?? members.set(key, forgeMember(key)).get(key),",
    '    apply: (_target, _this, args) => call(...args),',
    '    construct: () => ({}),',
    '  });',
    '};',
    ...[...cjsNames(text)].map((name) => `exports.${name} = undefined;`),
    "module.exports = forgeMember('');",
    '',
  ].join('\n');
}
