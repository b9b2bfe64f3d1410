// The files a loop's commands (its metric, guards and tracks) read as their own definition: the ones
// their argv names, the file of the task runner they go through, and what that runs in turn. `npm test`
// runs what package.json's `scripts.test` says, `make score` what the Makefile's recipe says, and
// `bash score.sh` what the script says, in the folder it `cd`s to: a doer whose scope holds any file
// along that way could make the metric print any score it liked, while the argv, the script it once
// named and the tests stayed as they were.
import { isAbsolute, join, posix } from 'node:path';
import { pathExists, readFileIfExists } from '../infra/atomic-file.js';
import { fileStat } from '../infra/fs-ops.js';
import type { LoopConfig } from './config.js';
import {
  CODE_FLAGS,
  isInterpreter,
  isShellScript,
  SCRIPT_DIR,
  SCRIPT_FLAGS,
  shellWords,
  SHELL_KEYWORDS,
  SHELLS,
  SUBCOMMANDS,
  WRAPPERS,
  WRITE_TO,
} from './shell-words.js';
import {
  flagValues,
  inTree,
  isMakefile,
  makeIncludes,
  NPM_WORKSPACE,
  RUN_IN_FLAGS,
  RUNNERS,
  type TaskRunner,
} from './task-runners.js';
import { taskCommands } from './runner-recipes.js';

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

/** The commands a loop runs to measure: its metric's, its guards' and its tracks'. */
export function loopCommands(config: LoopConfig): (readonly string[])[] {
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
        const args = source.words.slice(at + 1).map(expand);
        // Its task is followed where a command starts; a runner's name elsewhere (`echo "then npm
        // test"`) only guards its task file, the cheaper wrong guess.
        next.push(...(await this.runner(runner, program, args, base, { ...source, followTasks: command })));
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
      if (WRAPPERS.includes(program) || SHELL_KEYWORDS.includes(word)) {
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
    source: Source & { followTasks: boolean },
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
      if (source.runnersOnly || source.depth >= MAX_DEPTH || !source.followTasks) continue;
      const tasks = await taskCommands(this.cwd, runner, program, own, path);
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
}
