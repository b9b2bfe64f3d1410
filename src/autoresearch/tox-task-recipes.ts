// The commands tox and Task (go-task) run for what they are asked: a tox environment's `commands`, a
// Taskfile task's `cmds` with the tasks it depends on and calls. metric-files.ts walks them as it does
// package.json's scripts and a Makefile's recipes: a metric run as `tox -e score` or `task score` runs
// the script these name, which the doer must not reach.
import { posix } from 'node:path';
import { recipesFor, type Rule } from './task-runners.js';

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
