// How the task runners a loop's commands go through read their tasks: the file each reads (package.json,
// a Makefile, a justfile, …) in the folder its flags send it to, and the commands the task asked for
// runs (package.json's script, a recipe with what it depends on). metric-files.ts walks these.
import { isAbsolute, join, posix, relative } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';

/** A task runner: the programs that run it, the files it reads its tasks from, and its flags for them. */
export interface TaskRunner {
  programs: readonly string[];
  files: readonly string[];
  /** Flags whose value is the folder it reads its files in. */
  dirFlags?: readonly string[];
  /** Flags whose value is the file it reads instead. */
  fileFlags?: readonly string[];
}

const PYPROJECT = ['pyproject.toml'];
const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];

export const RUNNERS: readonly TaskRunner[] = [
  {
    programs: ['npm', 'pnpm', 'yarn', 'bun'],
    files: ['package.json'],
    dirFlags: ['--prefix', '-C', '--cwd', '--dir'],
  },
  {
    programs: ['make', 'gmake'],
    files: MAKEFILES,
    dirFlags: ['-C', '--directory'],
    fileFlags: ['-f', '--file', '--makefile'],
  },
  {
    programs: ['just'],
    files: ['justfile', 'Justfile', '.justfile'],
    dirFlags: ['-d', '--working-directory'],
    fileFlags: ['-f', '--justfile'],
  },
  {
    programs: ['task', 'go-task'],
    files: [
      'Taskfile.yml',
      'Taskfile.yaml',
      'taskfile.yml',
      'taskfile.yaml',
      'Taskfile.dist.yml',
      'Taskfile.dist.yaml',
    ],
    dirFlags: ['-d', '--dir'],
    fileFlags: ['-t', '--taskfile'],
  },
  {
    programs: ['rake'],
    files: ['Rakefile', 'rakefile', 'Rakefile.rb', 'rakefile.rb'],
    fileFlags: ['-f', '--rakefile'],
  },
  { programs: ['nox'], files: ['noxfile.py'], fileFlags: ['-f', '--noxfile'] },
  { programs: ['tox'], files: ['tox.ini', 'setup.cfg', ...PYPROJECT], fileFlags: ['-c', '--conf'] },
  { programs: ['invoke', 'inv'], files: ['tasks.py', 'invoke.yaml'] },
  { programs: ['doit'], files: ['dodo.py'], fileFlags: ['-f', '--file'] },
  { programs: ['poe', 'hatch', 'pdm', 'poetry', 'uv', 'rye'], files: PYPROJECT },
  { programs: ['pipenv'], files: ['Pipfile'] },
  { programs: ['mvn', 'mvnw'], files: ['pom.xml'], fileFlags: ['-f', '--file'] },
  {
    programs: ['gradle', 'gradlew'],
    files: ['build.gradle', 'build.gradle.kts', 'settings.gradle', 'settings.gradle.kts'],
    dirFlags: ['-p', '--project-dir'],
  },
  { programs: ['cargo'], files: ['Cargo.toml'], fileFlags: ['--manifest-path'] },
  { programs: ['go'], files: ['go.mod'] },
  { programs: ['deno'], files: ['deno.json', 'deno.jsonc'], fileFlags: ['-c', '--config'] },
  { programs: ['composer'], files: ['composer.json'], dirFlags: ['-d', '--working-dir'] },
  { programs: ['cmake', 'ctest'], files: ['CMakeLists.txt'] },
  { programs: ['mix'], files: ['mix.exs'] },
  { programs: ['sbt'], files: ['build.sbt'] },
  { programs: ['swift'], files: ['Package.swift'] },
];

/** `arg` as a `/`-separated path relative to `cwd`, when it lies inside it. */
export function inTree(cwd: string, arg: string): string | undefined {
  const path = (isAbsolute(arg) ? relative(cwd, arg) : arg).split('\\').join('/');
  const normal = posix.normalize(path);
  return normal === '' || normal === '.' || normal.startsWith('../') || normal === '..' ? undefined : normal;
}

/** The words given to a runner that are neither flags nor a flag's value. */
export function positionals(runner: TaskRunner, words: readonly string[]): string[] {
  const out: string[] = [];
  const valued = [...(runner.dirFlags ?? []), ...(runner.fileFlags ?? [])];
  for (let at = 0; at < words.length; at += 1) {
    const word = words[at] ?? '';
    if (word.startsWith('-')) {
      if (valued.includes(word)) at += 1;
      continue;
    }
    out.push(word);
  }
  return out;
}

/** The flags that send a task runner to the folder it runs in. */
export const RUN_IN_FLAGS = new Set([
  ...RUNNERS.flatMap((runner) => runner.dirFlags ?? []),
  '-w',
  '--workspace',
]);

/** npm, with its workspace flag (`-w packages/app`) read as the folder it runs a script in. */
export const NPM_WORKSPACE: TaskRunner = {
  ...(RUNNERS[0] as TaskRunner),
  dirFlags: [...(RUNNERS[0]?.dirFlags ?? []), '-w', '--workspace'],
};

const NPM_OWN_SCRIPTS: Readonly<Record<string, string>> = {
  test: 'test',
  t: 'test',
  tst: 'test',
  start: 'start',
  stop: 'stop',
  restart: 'restart',
};

/** The package.json script `npm run score`, `npm test`, `yarn score` or `pnpm run score` runs. */
export function scriptName(program: string, positional: readonly string[]): string | undefined {
  const [first, second] = positional;
  if (first === undefined) return undefined;
  if (['run', 'run-script', 'rum', 'urn'].includes(first)) return second;
  if (program === 'npm') return NPM_OWN_SCRIPTS[first];
  // yarn, pnpm and bun run a script named as their command.
  return first;
}

export function parseScripts(text: string | undefined): Record<string, unknown> {
  try {
    const scripts = (JSON.parse(text ?? '{}') as { scripts?: unknown }).scripts;
    return typeof scripts === 'object' && scripts !== null ? (scripts as Record<string, unknown>) : {};
  } catch {
    return {}; // not JSON: the runner fails on it as well
  }
}

/**
 * The recipe lines a Makefile runs for `targets` (its first target when none is given) and the targets
 * they depend on. A reading of make's syntax that is enough for what a metric's recipe runs: rules by
 * plain name, recipes on tab-led lines or after `;`; pattern rules and names built from variables are
 * left, since make would have to run to know them.
 */
export function makeRecipes(text: string, targets: readonly string[]): { target: string; command: string }[] {
  const rules = new Map<string, { prereqs: string[]; recipe: string[] }>();
  let first: string | undefined;
  let current: string[] = [];
  for (const line of text.replace(/\\\r?\n/g, ' ').split('\n')) {
    if (line.startsWith('\t')) {
      for (const target of current) rules.get(target)?.recipe.push(line.slice(1));
      continue;
    }
    const bare = line.replace(/#.*/, '');
    if (bare.trim() === '') continue;
    const colon = bare.indexOf(':');
    const equals = bare.indexOf('=');
    const isAssignment = equals >= 0 && (colon < 0 || equals < colon || /^:{1,3}=/.test(bare.slice(colon)));
    if (colon < 0 || isAssignment || /^\s*(?:define|endef|export|override|vpath)\b/.test(bare)) {
      current = [];
      continue;
    }
    const names = bare
      .slice(0, colon)
      .trim()
      .split(/\s+/)
      .filter((name) => name !== '' && !name.includes('%'));
    const [prereqPart = '', inline] = bare
      .slice(colon + 1)
      .replace(/^:/, '')
      .split(/;(.*)/s);
    if (prereqPart.includes('=')) {
      current = []; // a target's own variable (`score: N = 3`)
      continue;
    }
    current = names;
    for (const name of names) {
      const rule = rules.get(name) ?? { prereqs: [], recipe: [] };
      rule.prereqs.push(
        ...prereqPart
          .trim()
          .split(/\s+/)
          .filter((prereq) => prereq !== '' && prereq !== '|'),
      );
      if (inline !== undefined && inline.trim() !== '') rule.recipe.push(inline);
      rules.set(name, rule);
      if (first === undefined && !name.startsWith('.')) first = name;
    }
  }
  return recipesFor(rules, targets.length > 0 ? targets : first === undefined ? [] : [first]);
}

export interface Rule {
  prereqs: string[];
  recipe: string[];
}

/** The recipe lines of `targets` and of the targets they depend on, each once. */
export function recipesFor(
  rules: ReadonlyMap<string, Rule>,
  targets: readonly string[],
): { target: string; command: string }[] {
  const out: { target: string; command: string }[] = [];
  const queue = [...targets];
  const seen = new Set<string>();
  for (let target = queue.shift(); target !== undefined; target = queue.shift()) {
    if (seen.has(target) || seen.size >= 200) continue;
    seen.add(target);
    const rule = rules.get(target);
    if (rule === undefined) continue;
    for (const command of rule.recipe) out.push({ target, command: command.replace(/^\s*[@+-]+/, '') });
    queue.push(...rule.prereqs);
  }
  return out;
}

/**
 * The recipe lines a justfile runs for `recipes` (its first recipe when none is given) and the recipes
 * they depend on: a header `name params: deps` at the line's start, its body the indented lines under
 * it. A body in another language (`#!/usr/bin/env python3`) runs no shell commands and is left.
 */
export function justRecipes(text: string, recipes: readonly string[]): { target: string; command: string }[] {
  const rules = new Map<string, Rule>();
  let first: string | undefined;
  let current: Rule | undefined;
  for (const line of text.replace(/\\\r?\n/g, ' ').split('\n')) {
    if (/^[ \t]+\S/.test(line)) {
      current?.recipe.push(line.trim());
      continue;
    }
    if (line.trim() === '' || /^\s*(?:#|\[)/.test(line)) continue;
    const header = /^@?([A-Za-z_][\w-]*)([^:]*?):(?!=)(.*)$/.exec(line.replace(/\s#.*$/, ''));
    if (header === null || /^(?:set|export|alias|import|mod)\b/.test(line)) {
      current = undefined;
      continue;
    }
    const name = header[1] ?? '';
    // Dependencies, with the arguments some take: `score: build (fetch "x")`.
    const deps = [
      ...(header[3] ?? '')
        .replace(/"[^"]*"|'[^']*'/g, '')
        .matchAll(/\(\s*([A-Za-z_][\w-]*)[^)]*\)|([A-Za-z_][\w-]*)/g),
    ].map((match) => match[1] ?? match[2] ?? '');
    current = { prereqs: deps, recipe: [] };
    rules.set(name, current);
    first ??= name;
  }
  for (const rule of rules.values()) {
    const shebang = /^#!(.*)/.exec(rule.recipe[0] ?? '')?.[1];
    if (shebang !== undefined && !/(?:^|[\s/])(?:ba|z|k|da)?sh(?:\s|$)/.test(shebang)) rule.recipe = [];
  }
  return recipesFor(rules, recipes.length > 0 ? recipes : first === undefined ? [] : [first]);
}

/** The folder and file flags given to a runner, up to the end of its command. */
export function flagValues(runner: TaskRunner, words: readonly string[]): { dir?: string; file?: string } {
  const out: { dir?: string; file?: string } = {};
  for (let i = 0; i < words.length; i += 1) {
    const word = words[i] ?? '';
    if (word === ';') break;
    const [flag = '', inline] = word.startsWith('--') && word.includes('=') ? word.split(/=(.*)/s) : [word];
    const value = inline ?? words[i + 1];
    if (value === undefined) break;
    if (runner.dirFlags?.includes(flag)) out.dir = value;
    else if (runner.fileFlags?.includes(flag)) out.file = value;
    else continue;
    if (inline === undefined) i += 1;
  }
  return out;
}

export function isMakefile(runner: TaskRunner, path: string): boolean {
  return runner.programs.includes('make') && !path.endsWith('.json');
}

/** How many levels of `include` are followed. */
const MAX_INCLUDE_DEPTH = 5;

/**
 * The files a Makefile includes by plain name (`include rules.mk`, `-include local.mk`), relative to
 * the folder make reads it in, and those they include in turn. Names built from variables are left:
 * make would have to run to know them.
 */
export async function makeIncludes(cwd: string, makefile: string): Promise<string[]> {
  const dir = posix.dirname(makefile);
  const found: string[] = [];
  let level = [makefile];
  for (let depth = 0; depth < MAX_INCLUDE_DEPTH && level.length > 0; depth += 1) {
    const nextLevel: string[] = [];
    for (const file of level) {
      // Not a regular file (a FIFO an agent left), not readable or not there: no includes to follow.
      const text = await readFileIfExists(join(cwd, file)).catch(() => undefined);
      if (text === undefined) continue;
      for (const match of text.matchAll(/^[ \t]*[-s]?include[ \t]+([^\n#]+)/gm)) {
        for (const name of (match[1] ?? '').trim().split(/\s+/)) {
          if (name === '' || name.includes('$') || name.includes('*')) continue;
          // make reads an include's name from the folder it runs in, not the including file's.
          const path = inTree(cwd, dir === '.' ? name : `${dir}/${name}`);
          if (path === undefined || path === makefile || found.includes(path)) continue;
          found.push(path);
          nextLevel.push(path);
        }
      }
    }
    level = nextLevel;
  }
  return found;
}
