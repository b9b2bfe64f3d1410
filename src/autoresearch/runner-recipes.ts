// The commands tox, Task (go-task), nox and invoke run for what they are asked: a tox environment's
// `commands`, a Taskfile task's `cmds` with the tasks it depends on and calls, a nox session's
// `session.run(…)`, an invoke task's `c.run(…)`. metric-files.ts walks them as it does package.json's
// scripts and a Makefile's recipes: a metric run as `tox -e score` or `task score` runs the script
// these name, which the doer must not reach.
import { join, posix } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';
import {
  isMakefile,
  justRecipes,
  makeIncludes,
  makeRecipes,
  NPM_WORKSPACE,
  parseScripts,
  positionals,
  recipesFor,
  scriptName,
  type Rule,
  type TaskRunner,
} from './task-runners.js';

/** The environments `tox` is asked for (`-e a,b`, `--env a`, `-ea`), in the words given to it. */
export function toxEnvironments(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at] ?? '';
    if (word === ';' || word === '&&' || word === '||') break;
    let value: string | undefined;
    if (word === '-e' || word === '--env' || word === '--envlist') value = words[(at += 1)];
    else if (/^(?:-e|--env=|--envlist=)/.test(word)) value = word.replace(/^(?:-e=?|--env=|--envlist=)/, '');
    if (value !== undefined)
      out.push(
        ...value
          .split(',')
          .map((env) => env.trim())
          .filter(Boolean),
      );
  }
  return out;
}

/**
 * The commands a tox.ini (or setup.cfg) runs for `envs`: each one's `commands_pre`, `commands` and
 * `commands_post`, from `[testenv:<env>]` or else `[testenv]`; with none asked for, those of
 * `[testenv]` and of every `[testenv:…]`. A factor's condition (`py311: pytest`) and tox's
 * substitutions (`{posargs}`, `{envpython}`) are read as the command they leave.
 */
export function toxRecipes(text: string, envs: readonly string[]): { target: string; command: string }[] {
  const sections = new Map<string, Map<string, string[]>>();
  let section: Map<string, string[]> | undefined;
  let values: string[] | undefined;
  for (const line of text.replace(/[ \t]*\\\r?\n[ \t]*/g, ' ').split('\n')) {
    const header = /^\s*\[([^\]]+)\]\s*$/.exec(line);
    if (header !== null) {
      section = new Map();
      sections.set((header[1] ?? '').trim().replace(/^tox:/, ''), section);
      values = undefined;
      continue;
    }
    if (/^\s*[#;]/.test(line) || line.trim() === '') continue;
    if (/^\s/.test(line)) {
      values?.push(line.trim());
      continue;
    }
    const setting = /^([\w.-]+)\s*[=:]\s*(.*)$/.exec(line);
    if (setting === null || section === undefined) {
      values = undefined;
      continue;
    }
    values = (setting[2] ?? '').trim() === '' ? [] : [(setting[2] ?? '').trim()];
    section.set(setting[1] ?? '', values);
  }
  const named = envs.length > 0 ? envs : [...sections.keys()].filter((name) => /^testenv(?::|$)/.test(name));
  const out: { target: string; command: string }[] = [];
  for (const env of named) {
    const own = sections.get(env.startsWith('testenv') ? env : `testenv:${env}`);
    for (const key of ['commands_pre', 'commands', 'commands_post']) {
      const lines = own?.get(key) ?? sections.get('testenv')?.get(key) ?? [];
      for (const line of lines) {
        const command = toxCommand(line);
        if (command !== '') out.push({ target: env, command });
      }
    }
  }
  return out;
}

/** A tox command line as the command it runs: its factor condition, `-` and substitutions gone. */
function toxCommand(line: string): string {
  return line
    .replace(/^[\w,!{}.-]+:\s+/, '')
    .replace(/^-\s*/, '')
    .replace(/\{envpython\}/g, 'python')
    .replace(/\{(?:env_)?bindir\}\//g, '')
    .replace(/\{(?:tox_root|toxinidir)\}\//g, '')
    .replace(/\{posargs(?::([^}]*))?\}/g, (_whole, fallback?: string) => fallback ?? '')
    .replace(/\{[^}]*\}/g, '')
    .trim();
}

/**
 * The commands a Taskfile runs for `tasks` (its `default` when none is given): each task's `cmds`
 * (a string, `cmd: …`, or a block `|`), in its `dir` (as `cd <dir> && …`, which the walk follows),
 * with the tasks in its `deps` and those it calls (`task: build`). A short task (`build: go build`)
 * is its one command. Read by indentation, the subset of YAML Taskfiles are written in.
 */
export function taskfileRecipes(
  text: string,
  tasks: readonly string[],
): { target: string; command: string }[] {
  const lines = text.split('\n').map((line) => line.replace(/\s+#.*$/, '').replace(/\s+$/, ''));
  const rules = new Map<string, Rule>();
  const tasksAt = lines.findIndex((line) => /^tasks:\s*$/.test(line));
  if (tasksAt < 0) return [];
  const indent = (line: string) => /^ */.exec(line)?.[0].length ?? 0;
  const body = lines.slice(tasksAt + 1);
  const end = body.findIndex((line) => line !== '' && indent(line) === 0);
  const block = end < 0 ? body : body.slice(0, end);
  const taskIndent = Math.min(...block.filter((line) => line.trim() !== '').map(indent));
  const dirs = new Map<Rule, string>();
  let rule: Rule | undefined;
  /** The task's key being read (`cmds`, `deps`), and its indent. */
  let key = '';
  let keyIndent = -1;
  /** A `|` or `>` block's lines, under the line that opened it (with that line's indent). */
  let literal: { indent: number; lines: string[]; into: Rule } | undefined;
  const finish = () => {
    literal?.into.recipe.push(...literal.lines.map((command) => command.trim()).filter(Boolean));
    literal = undefined;
  };
  for (const line of block) {
    if (line.trim() === '') continue;
    const at = indent(line);
    if (literal !== undefined && at > literal.indent) {
      literal.lines.push(line);
      continue;
    }
    finish();
    const trimmed = line.trim();
    if (at === taskIndent) {
      const task = /^([\w:.-]+|"[^"]+"|'[^']+'):\s*(.*)$/.exec(trimmed);
      rule = task === null ? undefined : { prereqs: [], recipe: [] };
      if (task === null || rule === undefined) continue;
      rules.set(unquote(task[1] ?? ''), rule);
      key = '';
      keyIndent = -1;
      // The short form: `build: go build ./...`, or a list of commands.
      if ((task[2] ?? '') !== '') rule.recipe.push(...flowList(task[2] ?? ''));
      continue;
    }
    if (rule === undefined) continue;
    if (!trimmed.startsWith('-') && (keyIndent < 0 || at <= keyIndent)) {
      const setting = /^([\w-]+):\s*(.*)$/.exec(trimmed);
      if (setting === null) continue;
      key = setting[1] ?? '';
      keyIndent = at;
      const value = setting[2] ?? '';
      if (key === 'dir') dirs.set(rule, unquote(value));
      else if (key === 'deps' && value !== '') rule.prereqs.push(...flowList(value));
      else if (key === 'cmds' && value !== '') rule.recipe.push(...flowList(value));
      else if (key === 'cmd' && /^[|>]/.test(value)) literal = { indent: at, lines: [], into: rule };
      else if (key === 'cmd' && value !== '') rule.recipe.push(unquote(value));
      continue;
    }
    if (key !== 'cmds' && key !== 'deps') continue;
    // A list item, or a key of the mapping an item opened (`- task: build` / `  vars: …`).
    const item = trimmed.startsWith('-');
    const value = item ? trimmed.replace(/^-\s*/, '') : trimmed;
    const call = /^task:\s*(.+)$/.exec(value);
    const cmd = /^cmd:\s*(.*)$/.exec(value);
    if (call !== null) rule.prereqs.push(unquote(call[1] ?? ''));
    else if (cmd !== null && /^[|>]/.test(cmd[1] ?? '')) literal = { indent: at, lines: [], into: rule };
    else if (cmd !== null) rule.recipe.push(unquote(cmd[1] ?? ''));
    else if (!item || /^[\w-]+:(?:\s|$)/.test(value)) continue;
    else if (key === 'deps') rule.prereqs.push(unquote(value));
    else if (/^[|>]/.test(value)) literal = { indent: at, lines: [], into: rule };
    else rule.recipe.push(unquote(value));
  }
  finish();
  for (const [each, where] of dirs) {
    if (where !== '' && where !== '.')
      each.recipe = each.recipe.map((command) => `cd ${posix.normalize(where)} && ${command}`);
  }
  return recipesFor(rules, tasks.length > 0 ? tasks : ['default']);
}

function unquote(value: string): string {
  const trimmed = value.trim();
  return /^(["']).*\1$/s.test(trimmed) ? trimmed.slice(1, -1) : trimmed;
}

/** `[a, b]` as its items, or a single value as itself. */
function flowList(value: string): string[] {
  const list = /^\[(.*)\]$/.exec(value.trim());
  if (list === null) return [unquote(value)];
  return (list[1] ?? '').split(',').map(unquote).filter(Boolean);
}

/** A Python function of a task file: its name, the decorator lines above it, and its body. */
interface PythonFunction {
  name: string;
  decorators: string;
  body: string;
}

function pythonFunctions(text: string): PythonFunction[] {
  const lines = text.split('\n');
  const out: PythonFunction[] = [];
  for (let at = 0; at < lines.length; at += 1) {
    const header = /^(\s*)def\s+(\w+)\s*\(/.exec(lines[at] ?? '');
    if (header === null) continue;
    const indent = (header[1] ?? '').length;
    let first = at;
    while (first > 0 && /^\s*@/.test(lines[first - 1] ?? '')) first -= 1;
    const body: string[] = [];
    let end = at + 1;
    for (; end < lines.length; end += 1) {
      const line = lines[end] ?? '';
      if (line.trim() !== '' && (/^\s*/.exec(line)?.[0].length ?? 0) <= indent) break;
      body.push(line);
    }
    out.push({ name: header[2] ?? '', decorators: lines.slice(first, at).join('\n'), body: body.join('\n') });
  }
  return out;
}

/** The string literals of a call's arguments, up to its closing parenthesis. */
function literalArguments(text: string, open: number): string[] {
  const out: string[] = [];
  let depth = 0;
  for (let at = open; at < text.length; at += 1) {
    const char = text[at] ?? '';
    if (char === '(') depth += 1;
    else if (char === ')' && (depth -= 1) === 0) break;
    else if (char === '"' || char === "'") {
      const close = text.indexOf(char, at + 1);
      if (close < 0) break;
      if (depth === 1) out.push(text.slice(at + 1, close));
      at = close;
    }
  }
  return out;
}

/**
 * The commands a noxfile runs for `sessions` (all of its sessions when none is named): each
 * `session.run("python", "bench/score.py")` of a function decorated `@nox.session`, by its name or the
 * decorator's `name=`.
 */
export function noxRecipes(text: string, sessions: readonly string[]): { target: string; command: string }[] {
  const rules = new Map<string, Rule>();
  for (const fn of pythonFunctions(text)) {
    if (!/@(?:nox\.)?session\b/.test(fn.decorators)) continue;
    const name = /\bname\s*=\s*["']([^"']+)["']/.exec(fn.decorators)?.[1] ?? fn.name;
    const recipe = [...fn.body.matchAll(/\bsession\s*\.\s*run(?:_always|_install)?\s*\(/g)].map((call) =>
      literalArguments(fn.body, (call.index ?? 0) + call[0].length - 1)
        .map((word) => (/\s/.test(word) ? `'${word}'` : word))
        .join(' '),
    );
    rules.set(name, { prereqs: [], recipe: recipe.filter(Boolean) });
  }
  return recipesFor(rules, sessions.length > 0 ? sessions : [...rules.keys()]);
}

/** The sessions `nox` is asked for (`-s a b`, `--session a`, `-s=a`), in the words given to it. */
export function noxSessions(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at] ?? '';
    if (word === ';' || word === '&&' || word === '||') break;
    const inline = /^(?:-s|--sessions?|-e)=(.+)$/.exec(word);
    if (inline !== null) out.push(...(inline[1] ?? '').split(','));
    if (!/^(?:-s|--sessions?|-e)$/.test(word)) continue;
    while (at + 1 < words.length && !(words[at + 1] ?? '-').startsWith('-')) out.push(words[(at += 1)] ?? '');
  }
  return out.filter(Boolean);
}

/**
 * The commands an invoke `tasks.py` runs for `tasks`: each `c.run("…")` of a function decorated
 * `@task`, named as invoke names it (`run_bench` is `run-bench`), with the tasks of its `pre=[…]`
 * and `post=[…]`.
 */
export function invokeRecipes(text: string, tasks: readonly string[]): { target: string; command: string }[] {
  const rules = new Map<string, Rule>();
  for (const fn of pythonFunctions(text)) {
    if (!/@(?:invoke\.)?task\b/.test(fn.decorators)) continue;
    const prereqs = [...fn.decorators.matchAll(/\b(?:pre|post)\s*=\s*\[([^\]]*)\]/g)].flatMap((list) =>
      (list[1] ?? '')
        .split(',')
        .map((name) => name.trim().replace(/_/g, '-'))
        .filter(Boolean),
    );
    const recipe = [...fn.body.matchAll(/\.\s*(?:run|sudo)\s*\(/g)].map(
      (call) => literalArguments(fn.body, (call.index ?? 0) + call[0].length - 1)[0] ?? '',
    );
    rules.set(fn.name.replace(/_/g, '-'), { prereqs, recipe: recipe.filter(Boolean) });
  }
  return recipesFor(
    rules,
    tasks.map((task) => task.replace(/_/g, '-')),
  );
}

/**
 * The commands the task a runner is asked for (in `own`, the words given to `program`) runs, from its
 * task file `path` in the tree at `cwd`, with how they were named.
 */
export async function taskCommands(
  cwd: string,
  runner: TaskRunner,
  program: string,
  own: readonly string[],
  path: string,
): Promise<{ command: string; via: string }[]> {
  const positional = positionals(program === 'npm' ? NPM_WORKSPACE : runner, own);
  if (path.endsWith('package.json')) {
    const name = scriptName(program, positional);
    if (name === undefined) return [];
    const text = await readFileIfExists(join(cwd, path)).catch(() => undefined);
    const scripts = parseScripts(text);
    return [`pre${name}`, name, `post${name}`].flatMap((key) => {
      const command = scripts[key];
      return typeof command === 'string' ? [{ command, via: `${path}'s "${key}" script` }] : [];
    });
  }
  if (isMakefile(runner, path)) {
    const texts = [path, ...(await makeIncludes(cwd, path))];
    let all = '';
    for (const file of texts) all += `${(await readFileIfExists(join(cwd, file)).catch(() => '')) ?? ''}\n`;
    const targets = positional.filter((word) => !word.includes('='));
    return makeRecipes(all, targets).map(({ target, command }) => ({
      command,
      via: `${path}'s "${target}" recipe`,
    }));
  }
  if (runner.programs.includes('tox')) {
    let text = (await readFileIfExists(join(cwd, path)).catch(() => undefined)) ?? '';
    // tox reads pyproject.toml's `legacy_tox_ini`, an INI file in a string.
    if (path.endsWith('.toml'))
      text = /legacy_tox_ini\s*=\s*(?:"""|''')([\s\S]*?)(?:"""|''')/.exec(text)?.[1] ?? '';
    return toxRecipes(text, toxEnvironments(own)).map(({ target, command }) => ({
      command,
      via: `${path}'s "${target}" environment`,
    }));
  }
  if (runner.programs.includes('nox') || runner.programs.includes('invoke')) {
    const text = (await readFileIfExists(join(cwd, path)).catch(() => undefined)) ?? '';
    const nox = runner.programs.includes('nox');
    const found = nox
      ? noxRecipes(text, noxSessions(own))
      : invokeRecipes(
          text,
          positional.filter((word) => /^[\w-]+$/.test(word)),
        );
    return found.map(({ target, command }) => ({
      command,
      via: `${path}'s "${target}" ${nox ? 'session' : 'task'}`,
    }));
  }
  if (runner.programs.includes('task')) {
    const text = (await readFileIfExists(join(cwd, path)).catch(() => undefined)) ?? '';
    return taskfileRecipes(
      text,
      positional.filter((word) => !word.includes('=')),
    ).map(({ target, command }) => ({ command, via: `${path}'s "${target}" task` }));
  }
  if (runner.programs.includes('just')) {
    const text = (await readFileIfExists(join(cwd, path)).catch(() => undefined)) ?? '';
    return justRecipes(
      text,
      positional.filter((word) => !word.includes('=')),
    ).map(({ target, command }) => ({
      command,
      via: `${path}'s "${target}" recipe`,
    }));
  }
  return [];
}
