// The files a loop's commands (its metric, guards and tracks) read as their own definition: the ones
// their argv names, and the file of the task runner they go through. `npm test` runs what package.json's
// `scripts.test` says, `make score` what the Makefile says: a doer whose scope holds that file could
// make the metric print any score it liked, while the argv, the script it once named and the tests
// stayed as they were.
import { isAbsolute, join, posix, relative } from 'node:path';
import { pathExists, readFileIfExists } from '../infra/atomic-file.js';
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

/**
 * Files named in the metric command (a scoring script, a test file) that exist in the tree, relative
 * to it; for a soft metric, the rubric; and those named by the guard and track commands (a doer that
 * could edit a guard's test would pass it). Nobody but the user may change these.
 */
export async function metricFiles(config: LoopConfig, cwd: string): Promise<string[]> {
  const files: string[] = config.metric.type === 'soft' ? [config.metric.rubric_path] : [];
  for (const arg of loopCommands(config).flat()) {
    if (arg.startsWith('-') || arg.includes('=')) continue;
    const file = inTree(cwd, arg);
    if (
      file !== undefined &&
      /[/\\.]/.test(arg) &&
      !files.includes(file) &&
      (await pathExists(join(cwd, file)))
    ) {
      files.push(file);
    }
  }
  return files;
}

/** Past this, a named file is data, not a script that runs a task. */
const MAX_SCRIPT_CHARS = 1_000_000;

/**
 * The metric files, and the task files of the runners the loop's commands go through, in their argv or
 * in a script they name (`bash score.sh` whose script runs `npm test`), where they exist: what the
 * guards keep as they were. Setup refuses a scope holding a metric file; a task file in a scope is only
 * put back when changed, since a scope holding a package holds its package.json and the doer's work
 * rarely lies there.
 */
export async function commandFiles(config: LoopConfig, cwd: string): Promise<string[]> {
  const files = await metricFiles(config, cwd);
  const scripts: string[][] = [];
  for (const file of files) {
    // A folder, a FIFO or an unreadable file is no script.
    const text = await readFileIfExists(join(cwd, file)).catch(() => undefined);
    if (text !== undefined && text.length <= MAX_SCRIPT_CHARS && !text.includes('\0')) scripts.push([text]);
  }
  for (const file of await taskFiles([...loopCommands(config), ...scripts], cwd)) {
    if (!files.includes(file)) files.push(file);
  }
  return files;
}

function loopCommands(config: LoopConfig): (readonly string[])[] {
  return [
    ...(config.metric.type === 'hard' ? [config.metric.argv] : []),
    ...(config.guards ?? []).map((guard) => guard.argv),
    ...(config.tracks ?? []).map((track) => track.argv),
  ];
}

/** `arg` as a `/`-separated path relative to `cwd`, when it lies inside it. */
function inTree(cwd: string, arg: string): string | undefined {
  const path = (isAbsolute(arg) ? relative(cwd, arg) : arg).split('\\').join('/');
  const normal = posix.normalize(path);
  return normal === '' || normal === '.' || normal.startsWith('../') || normal === '..' ? undefined : normal;
}

/**
 * The task files, relative to `cwd`, that the commands' runners read. Each argv is read word by word,
 * its shell strings (`sh -c "npm test && make"`) split too: a runner named anywhere counts, since a
 * word that only looks like one costs no more than a guarded file.
 */
export async function taskFiles(commands: readonly (readonly string[])[], cwd: string): Promise<string[]> {
  const found: string[] = [];
  const add = async (path: string | undefined) => {
    if (path === undefined || found.includes(path) || !(await pathExists(join(cwd, path)))) return false;
    found.push(path);
    return true;
  };
  for (const argv of commands) {
    // A shell's separators become words of their own, where a runner's flags end.
    const words = argv
      .flatMap((arg) => arg.replace(/[;&|()`]+/g, ' ; ').split(/[\s'"]+/))
      .filter((word) => word !== '');
    for (const [at, word] of words.entries()) {
      const program = posix.basename(word.split('\\').join('/')).replace(/\.(?:cmd|bat|exe)$/, '');
      const runner = RUNNERS.find((r) => r.programs.includes(program));
      if (runner === undefined) continue;
      const { dir, file } = flagValues(runner, words.slice(at + 1));
      const base = dir === undefined ? '.' : inTree(cwd, dir);
      if (base === undefined) continue; // run in a folder outside the tree, which no doer's scope holds
      // A file given by flag is read instead of the runner's own names.
      const names = file === undefined ? runner.files : [file];
      for (const name of names.map((f) => inTree(cwd, isAbsolute(f) ? f : `${base}/${f}`))) {
        if ((await add(name)) && name !== undefined && isMakefile(runner, name)) {
          for (const included of await makeIncludes(cwd, name)) await add(included);
        }
      }
    }
  }
  return found;
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

/**
 * The files a Makefile includes by plain name (`include rules.mk`, `-include local.mk`), relative to
 * the folder make reads it in, followed once level down. Names built from variables are left: make
 * would have to run to know them.
 */
async function makeIncludes(cwd: string, makefile: string): Promise<string[]> {
  // Not a regular file (a FIFO an agent left) or not readable: no includes to follow.
  const text = await readFileIfExists(join(cwd, makefile)).catch(() => undefined);
  if (text === undefined) return [];
  const dir = posix.dirname(makefile);
  const names: string[] = [];
  for (const match of text.matchAll(/^[ \t]*[-s]?include[ \t]+([^\n#]+)/gm)) {
    for (const name of (match[1] ?? '').trim().split(/\s+/)) {
      if (name === '' || name.includes('$') || name.includes('*')) continue;
      const path = inTree(cwd, dir === '.' ? name : `${dir}/${name}`);
      if (path !== undefined) names.push(path);
    }
  }
  return names;
}
