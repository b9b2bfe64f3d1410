// The files a loop's commands (its metric, guards and tracks) read as their own definition: the ones
// their argv names, the file of the task runner they go through, and what that runs in turn. `npm test`
// runs what package.json's `scripts.test` says, `make score` what the Makefile's recipe says, and
// `bash score.sh` what the script says, in the folder it `cd`s to: a doer whose scope holds any file
// along that way could make the metric print any score it liked, while the argv, the script it once
// named and the tests stayed as they were.
import { isAbsolute, join, posix, relative } from 'node:path';
import { pathExists, readFileIfExists } from '../infra/atomic-file.js';
import { fileStat } from '../infra/fs-ops.js';
import type { LoopConfig } from './config.js';

/** A task runner: the programs that run it, the files it reads its tasks from, and its flags for them. */
interface TaskRunner {
  programs: readonly string[];
  files: readonly string[];
  /** Flags whose value is the folder it reads its files in. */
  dirFlags?: readonly string[];
  /** Flags whose value is the file it reads instead. */
  fileFlags?: readonly string[];
}

const PYPROJECT = ['pyproject.toml'];
const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];

const RUNNERS: readonly TaskRunner[] = [
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

/** A file the loop's commands read as their own, and how they reach it when no argv names it. */
export interface MetricFile {
  path: string;
  /** E.g. `package.json's "score" script`; undefined for a file an argv names (or the rubric). */
  via?: string | undefined;
}

/**
 * Files the metric command (a scoring script, a test file) names that exist in the tree, relative to
 * it; for a soft metric, the rubric; those named by the guard and track commands (a doer that could
 * edit a guard's test would pass it); and the files named by what those run in turn: the script a task
 * runner's task runs (package.json's `scripts`, a Makefile's recipe), what a shell script they name runs.
 * Nobody but the user may change these.
 */
export async function metricFiles(config: LoopConfig, cwd: string): Promise<string[]> {
  return (await metricFilesVia(config, cwd)).map((file) => file.path);
}

/** metricFiles, each with how the commands reach it. */
export async function metricFilesVia(config: LoopConfig, cwd: string): Promise<MetricFile[]> {
  return (await reach(config, cwd)).named;
}

/**
 * The metric files, and the task files of the runners the loop's commands go through, where they
 * exist: what the guards keep as they were. Setup refuses a scope holding a metric file; a task file in
 * a scope is only put back when changed, since a scope holding a package holds its package.json and
 * the doer's work rarely lies there.
 */
export async function commandFiles(config: LoopConfig, cwd: string): Promise<string[]> {
  const { named, tasks } = await reach(config, cwd);
  const files = named.map((file) => file.path);
  for (const file of tasks) if (!files.includes(file)) files.push(file);
  return files;
}

/** The task files, relative to `cwd`, that the commands' runners read, and those of what they run. */
export async function taskFiles(commands: readonly (readonly string[])[], cwd: string): Promise<string[]> {
  const walk = new Walk(cwd);
  await walk.run(commands.map((argv) => walk.argvSource(argv)));
  return walk.tasks;
}

function loopCommands(config: LoopConfig): (readonly string[])[] {
  return [
    ...(config.metric.type === 'hard' ? [config.metric.argv] : []),
    ...(config.guards ?? []).map((guard) => guard.argv),
    ...(config.tracks ?? []).map((track) => track.argv),
  ];
}

async function reach(config: LoopConfig, cwd: string): Promise<{ named: MetricFile[]; tasks: string[] }> {
  const named: MetricFile[] = config.metric.type === 'soft' ? [{ path: config.metric.rubric_path }] : [];
  const commands = loopCommands(config);
  // Each argument as a whole (a folder the metric reads, a path with a space) …
  for (const argv of commands) {
    for (const [at, arg] of argv.entries()) {
      if (arg.startsWith('-') || arg.includes('=')) continue;
      const file = inTree(cwd, arg);
      if (file === undefined || !/[/\\.]/.test(arg) || named.some((known) => known.path === file)) continue;
      const stats = await fileStat(join(cwd, file));
      if (stats === undefined) continue;
      // The folder a task runner is sent to (`npm --prefix packages/app`, `make -C sub`) is where it
      // runs, not what it reads: the package's task file and scripts are found on the walk.
      if (!stats.regular && RUN_IN_FLAGS.has(argv[at - 1] ?? '')) continue;
      named.push({ path: file });
    }
  }
  // … and word by word, with what it runs in turn.
  const walk = new Walk(cwd);
  await walk.run(commands.map((argv) => walk.argvSource(argv)));
  for (const file of walk.named) if (!named.some((known) => known.path === file.path)) named.push(file);
  return { named, tasks: walk.tasks };
}

/** `arg` as a `/`-separated path relative to `cwd`, when it lies inside it. */
function inTree(cwd: string, arg: string): string | undefined {
  const path = (isAbsolute(arg) ? relative(cwd, arg) : arg).split('\\').join('/');
  const normal = posix.normalize(path);
  return normal === '' || normal === '.' || normal.startsWith('../') || normal === '..' ? undefined : normal;
}

/** Past this, a named file is data, not a script that runs a task. */
const MAX_SCRIPT_BYTES = 1_000_000;
/** How many scripts deep a chain is followed (argv → task → script → task …), and how many are read. */
const MAX_DEPTH = 5;
const MAX_SOURCES = 100;

/** Commands to read: their words, the folder they run in and that of the file holding them. */
interface Source {
  words: string[];
  /** The folder the commands start in, relative to the tree (`.` for its root). */
  base: string;
  /** The folder of the script holding them (what `$(dirname "$0")` names). */
  scriptDir: string;
  depth: number;
  /** How the chain reached these commands, for a file they name. */
  via: string | undefined;
  /**
   * A program in another language (a JavaScript or Python script the argv names): only read for the
   * runners it starts, since its words are not commands and the paths it holds are its own business.
   */
  runnersOnly: boolean;
}

/** The word standing for a redirection of output: the file after it is written, not read. */
const WRITE_TO = '\u0002>';
/** The word standing for the folder of the script holding a command (`$(dirname "$0")`). */
const SCRIPT_DIR = '\u0001';

/**
 * A shell's text as words: separators (`;`, `&&`, `|`, newlines) become `;` words of their own, where a
 * command and its flags end; comments go, a redirection of output becomes WRITE_TO, and the script's
 * own folder (`$(dirname "$0")`, `${0%/*}`) SCRIPT_DIR. Quotes go (`"$DIR"/x` is one word); nothing is
 * expanded here.
 */
export function shellWords(text: string): string[] {
  return text
    .replace(/\\\r?\n/g, ' ')
    .replace(/\$\(\s*dirname\s+(?:--\s+)?["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?\s*\)/g, SCRIPT_DIR)
    .replace(/\$\{(?:0|BASH_SOURCE(?:\[0\])?)%\/\*\}/g, SCRIPT_DIR)
    .replace(/\$[({]MAKE[)}]/g, 'make')
    .replace(/(^|[\s;&|(])#[^\n]*/g, '$1')
    .replace(/\d*[<>]&\d+/g, ' ')
    .replace(/(?:\d+|&)?>>?\|?/g, ` ${WRITE_TO} `)
    .replace(/<+/g, ' ')
    .replace(/[;&|()`\n]+/g, ' ; ')
    .replace(/["']/g, '')
    .split(/\s+/)
    .filter((word) => word !== '');
}

/** Whether a script is shell: by its name, or by its `#!` line. */
function isShellScript(path: string, text: string): boolean {
  if (/\.(?:sh|bash|zsh|ksh|dash)$/.test(path)) return true;
  const shebang = /^#!([^\n]*)/.exec(text)?.[1] ?? '';
  return /(?:^|[\s/])(?:ba|z|k|da)?sh(?:\s|$)/.test(shebang);
}

/** Programs that run the command after them (and their flags). */
const WRAPPERS = [
  'time',
  'exec',
  'env',
  'nice',
  'nohup',
  'command',
  'builtin',
  'sudo',
  'stdbuf',
  'ionice',
  'taskset',
  'timeout',
  'xvfb-run',
  'npx',
  'bunx',
  'pnpx',
  'dotenv',
];
const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'source', '.'];
/** Flags of an interpreter whose value is a script it runs too. */
const SCRIPT_FLAGS = ['-r', '--require', '--import', '--loader', '--experimental-loader', '--preload'];
/** Flags of an interpreter after which it runs code or a module, not a script file. */
const CODE_FLAGS = ['-e', '--eval', '-p', '--print', '-c', '-m'];
/** An interpreter's subcommands that come before its script. */
const SUBCOMMANDS = ['run', 'exec'];

/** A program that runs the script it is given: node, python3.12, ruby, … (shells apart). */
function isInterpreter(program: string): boolean {
  return /^(?:node(?:js)?|tsx|ts-node|bun|deno|python[\d.]*|pypy[\d.]*|ruby|perl|php|Rscript|julia|luajit|lua[\d.]*|elixir|groovy|kotlin|swift|pwsh|osascript|java)$/.test(
    program,
  );
}

/** A walk along what a loop's commands run: the files they name and the task files they go through. */
class Walk {
  readonly named: MetricFile[] = [];
  readonly tasks: string[] = [];
  private readonly read = new Set<string>();
  private sources = 0;

  constructor(private readonly cwd: string) {}

  argvSource(argv: readonly string[]): Source {
    return {
      words: argv.flatMap((arg) => shellWords(arg)),
      base: '.',
      scriptDir: '.',
      depth: 0,
      via: undefined,
      runnersOnly: false,
    };
  }

  async run(sources: Source[]): Promise<void> {
    const queue = [...sources];
    for (let source = queue.shift(); source !== undefined; source = queue.shift()) {
      if (this.sources >= MAX_SOURCES) return;
      this.sources += 1;
      queue.push(...(await this.readSource(source)));
    }
  }

  /** `word` in the folder `base` as a path in the tree, when it lies there. */
  private resolve(base: string, word: string): string | undefined {
    return inTree(this.cwd, isAbsolute(word) || base === '.' ? word : `${base}/${word}`);
  }

  /**
   * Reads one source's commands; returns what they run in turn. A file counts where it is run: as a
   * command (`./score.sh`), as the script an interpreter is given (`node bench/score.mjs`, `python3 -u
   * bench.py`, `node -r ./setup.cjs …`), through a wrapper (`time`, `env X=1`, `uv run`). The files a
   * command only reads or writes (`python bench.py src/solver.py`, `> out.json`) are its data: the
   * artifact often among them.
   */
  private async readSource(source: Source): Promise<Source[]> {
    const next: Source[] = [];
    const vars = new Map<string, string>();
    let base = source.base;
    /** The next word starts a command. */
    let command = true;
    /** The interpreter whose script the next plain word is, while its flags go by. */
    let interpreter: string | undefined;
    const expand = (word: string) =>
      word
        .replaceAll(SCRIPT_DIR, join(this.cwd, source.scriptDir))
        .replace(
          /\$(?:\{(\w+)\}|(\w+))/g,
          (whole, braced?: string, bare?: string) => vars.get(braced ?? bare ?? '') ?? whole,
        );
    const name = async (word: string) => {
      if (source.runnersOnly || word.includes('$') || word.startsWith('-')) return;
      const file = this.resolve(base, word);
      if (file !== undefined) next.push(...(await this.file(file, base, source)));
    };
    for (let at = 0; at < source.words.length; at += 1) {
      const word = expand(source.words[at] ?? '');
      if (word === ';') {
        command = true;
        interpreter = undefined;
        continue;
      }
      if (word === WRITE_TO) {
        if (!source.runnersOnly) at += 1; // a file the command writes is its output, not what it runs
        continue;
      }
      const program = posix.basename(word.split('\\').join('/')).replace(/\.(?:cmd|bat|exe)$/, '');
      const runner = RUNNERS.find((r) => r.programs.includes(program));
      if (runner !== undefined) {
        next.push(
          ...(await this.runner(runner, program, source.words.slice(at + 1).map(expand), base, source)),
        );
        // `uv run python x.py`, `npx tsx x.ts`: what follows the runner's `run` or `exec` is a command.
        command = false;
        interpreter = undefined;
        const sub = source.words[at + 1];
        if (sub === 'run' || sub === 'exec' || sub === 'x') {
          at += 1;
          command = true;
        }
        continue;
      }
      if (interpreter !== undefined) {
        if (word.startsWith('-')) {
          const [flag = '', inline] = word.split(/=(.*)/s);
          if (SCRIPT_FLAGS.includes(flag)) {
            // node -r ./x.cjs: a script it runs first
            await name(inline ?? expand(source.words[at + 1] ?? ''));
            if (inline === undefined) at += 1;
          } else if (interpreter !== 'shell' && CODE_FLAGS.includes(flag)) {
            interpreter = undefined; // code in the argv (`node -e …`, `python -m pkg`): no script to name
          } else if (interpreter === 'shell' && flag === '-c') {
            interpreter = undefined;
            command = true; // sh -c "…": what follows is a command line
          }
          continue;
        }
        if (SUBCOMMANDS.includes(word)) continue; // deno run, go run
        interpreter = undefined;
        await name(word);
        continue;
      }
      if (!command) continue;
      const assignment = /^([A-Za-z_]\w*)=(.*)$/s.exec(word);
      if (assignment !== null) {
        if (!assignment[2]?.includes('$')) vars.set(assignment[1] ?? '', assignment[2] ?? '');
        continue;
      }
      if (word === 'cd' || word === 'pushd') {
        command = false;
        const target = expand(source.words[at + 1] ?? ';');
        if (target === ';') continue;
        at += 1;
        // A folder only known when the command runs keeps the one before: more is guarded, never less.
        if (!target.includes('$')) base = this.resolve(base, target) ?? '.';
        continue;
      }
      if (WRAPPERS.includes(program)) {
        if (program === 'timeout' && /^\d/.test(source.words[at + 1] ?? '')) at += 1;
        continue;
      }
      if (word.startsWith('-')) continue; // a wrapper's flag
      command = false;
      if (SHELLS.includes(program)) interpreter = 'shell';
      else if (isInterpreter(program)) interpreter = program;
      else if (/[/\\.]/.test(word)) await name(word);
    }
    return next;
  }

  /** A file a command names: the metric's own; a script among them is read for what it runs. */
  private async file(file: string, base: string, source: Source): Promise<Source[]> {
    const stats = await fileStat(join(this.cwd, file));
    if (stats === undefined || !stats.regular) return [];
    if (!this.named.some((known) => known.path === file)) this.named.push({ path: file, via: source.via });
    if (source.depth >= MAX_DEPTH || stats.size > MAX_SCRIPT_BYTES || this.read.has(file)) return [];
    this.read.add(file);
    // Not a regular file any more, or not readable: nothing to read.
    const text = await readFileIfExists(join(this.cwd, file)).catch(() => undefined);
    if (text === undefined || text.includes('\0')) return [];
    return [
      {
        words: shellWords(text),
        base,
        scriptDir: posix.dirname(file),
        depth: source.depth + 1,
        via: source.via ?? `${file}`,
        runnersOnly: !isShellScript(file, text),
      },
    ];
  }

  /** A task runner a command goes through: its task file, and what the task it is asked for runs. */
  private async runner(
    runner: TaskRunner,
    program: string,
    rest: readonly string[],
    base: string,
    source: Source,
  ): Promise<Source[]> {
    const end = rest.indexOf(';');
    const own = end < 0 ? rest : rest.slice(0, end);
    // npm's workspace flag names the package a script runs in, by its folder (or by its name, which
    // only npm can resolve: then the root's package.json is what is known).
    const plain = flagValues(runner, own);
    const withWorkspace = program === 'npm' ? flagValues(NPM_WORKSPACE, own) : plain;
    const workspace =
      withWorkspace.dir === plain.dir ? undefined : this.resolve(base, withWorkspace.dir ?? '');
    const isPackage =
      workspace !== undefined && (await pathExists(join(this.cwd, workspace, 'package.json')));
    const { dir, file } = isPackage ? withWorkspace : plain;
    const folder = dir === undefined ? base : this.resolve(base, dir);
    if (folder === undefined) return []; // run in a folder outside the tree, which no doer's scope holds
    // A file given by flag is read instead of the runner's own names.
    const names = file === undefined ? runner.files : [file];
    const next: Source[] = [];
    for (const name of names) {
      const path = await this.taskFile(runner, folder, name, dir === undefined && file === undefined);
      if (path === undefined) continue;
      // A program in another language names runners in its strings and comments: their files are
      // guarded, but which task it asks for is not known.
      if (source.runnersOnly || source.depth >= MAX_DEPTH) continue;
      const tasks = await this.tasksRun(runner, program, own, path);
      for (const task of tasks) {
        next.push({
          words: shellWords(task.command),
          base: posix.dirname(path),
          scriptDir: posix.dirname(path),
          depth: source.depth + 1,
          via: source.via ?? task.via,
          runnersOnly: false,
        });
      }
    }
    return next;
  }

  /**
   * The task file `name` a runner reads in `folder`, added to the task files where it exists. npm and
   * its kin look for package.json upward from where they run, when no flag names the folder.
   */
  private async taskFile(
    runner: TaskRunner,
    folder: string,
    name: string,
    upward: boolean,
  ): Promise<string | undefined> {
    let at = folder;
    for (;;) {
      const path = this.resolve(at, name);
      if (path !== undefined && (await pathExists(join(this.cwd, path)))) {
        if (!this.tasks.includes(path)) this.tasks.push(path);
        if (isMakefile(runner, path)) {
          for (const included of await makeIncludes(this.cwd, path)) {
            if (!this.tasks.includes(included) && (await pathExists(join(this.cwd, included))))
              this.tasks.push(included);
          }
        }
        return path;
      }
      if (!upward || !runner.files.includes('package.json') || at === '.') return undefined;
      at = posix.dirname(at);
    }
  }

  /** The commands the task a runner is asked for runs, from its task file, with how they were named. */
  private async tasksRun(
    runner: TaskRunner,
    program: string,
    own: readonly string[],
    path: string,
  ): Promise<{ command: string; via: string }[]> {
    const positional = positionals(program === 'npm' ? NPM_WORKSPACE : runner, own);
    if (path.endsWith('package.json')) {
      const name = scriptName(program, positional);
      if (name === undefined) return [];
      const text = await readFileIfExists(join(this.cwd, path)).catch(() => undefined);
      const scripts = parseScripts(text);
      return [`pre${name}`, name, `post${name}`].flatMap((key) => {
        const command = scripts[key];
        return typeof command === 'string' ? [{ command, via: `${path}'s "${key}" script` }] : [];
      });
    }
    if (isMakefile(runner, path)) {
      const texts = [path, ...(await makeIncludes(this.cwd, path))];
      let all = '';
      for (const file of texts)
        all += `${(await readFileIfExists(join(this.cwd, file)).catch(() => '')) ?? ''}\n`;
      const targets = positional.filter((word) => !word.includes('='));
      return makeRecipes(all, targets).map(({ target, command }) => ({
        command,
        via: `${path}'s "${target}" recipe`,
      }));
    }
    if (runner.programs.includes('just')) {
      const text = (await readFileIfExists(join(this.cwd, path)).catch(() => undefined)) ?? '';
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
}

/** The words given to a runner that are neither flags nor a flag's value. */
function positionals(runner: TaskRunner, words: readonly string[]): string[] {
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
const RUN_IN_FLAGS = new Set([...RUNNERS.flatMap((runner) => runner.dirFlags ?? []), '-w', '--workspace']);

/** npm, with its workspace flag (`-w packages/app`) read as the folder it runs a script in. */
const NPM_WORKSPACE: TaskRunner = {
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
function scriptName(program: string, positional: readonly string[]): string | undefined {
  const [first, second] = positional;
  if (first === undefined) return undefined;
  if (['run', 'run-script', 'rum', 'urn'].includes(first)) return second;
  if (program === 'npm') return NPM_OWN_SCRIPTS[first];
  // yarn, pnpm and bun run a script named as their command.
  return first;
}

function parseScripts(text: string | undefined): Record<string, unknown> {
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

interface Rule {
  prereqs: string[];
  recipe: string[];
}

/** The recipe lines of `targets` and of the targets they depend on, each once. */
function recipesFor(
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
function flagValues(runner: TaskRunner, words: readonly string[]): { dir?: string; file?: string } {
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

function isMakefile(runner: TaskRunner, path: string): boolean {
  return runner.programs.includes('make') && !path.endsWith('.json');
}

/** How many levels of `include` are followed. */
const MAX_INCLUDE_DEPTH = 5;

/**
 * The files a Makefile includes by plain name (`include rules.mk`, `-include local.mk`), relative to
 * the folder make reads it in, and those they include in turn. Names built from variables are left:
 * make would have to run to know them.
 */
async function makeIncludes(cwd: string, makefile: string): Promise<string[]> {
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
