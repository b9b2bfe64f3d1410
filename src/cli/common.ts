// Options and helpers shared by both programs: the one commander setup, global flags, store opening,
// argument parsers.
//
// Every command module imports this file, and `ralph-loop status` is polled while loops run: at load
// time it needs only commander and node:path; the store and config code load inside openStoreFor.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { OpenedStore } from '../beads/open-store.js';
import type { BeadStore } from '../beads/types.js';
import type { CliDeps } from './deps.js';
import { UsageError } from '../infra/errors.js';
import { parseSize } from '../infra/size-limits.js';
import type { ForgeConfig } from './forge-config.js';
import { workingDir, type GlobalOptions } from './global-options.js';

export { workingDir, type GlobalOptions } from './global-options.js';

/**
 * The one commander setup, for a program and every command under it: commander's own messages go to
 * the sinks, and a usage error is thrown (reported with an exit code) instead of ending the process.
 * Commands built separately and added with addCommand do not inherit it, so it walks the whole tree;
 * running it again (after a lazy command is defined) is harmless.
 */
export function configureCommand(command: Command, deps: Pick<CliDeps, 'stdout' | 'stderr'>): Command {
  command
    .exitOverride()
    .configureOutput({
      writeOut: (text) => deps.stdout.write(text),
      writeErr: (text) => deps.stderr.write(text),
    })
    .showHelpAfterError('(run with --help for usage)');
  for (const sub of command.commands) configureCommand(sub, deps);
  return command;
}

/** A program: the setup above, the global options both programs share, and --version. */
export function configureProgram(program: Command, deps: CliDeps, actor: string): Command {
  return configureCommand(program, deps)
    .option('--json', 'print machine-readable JSON on stdout')
    .option('--debug', 'show stack traces for errors')
    .option('-C, --cwd <dir>', 'run as if started in <dir>')
    .version(deps.version, '-V, --version', 'print the version')
    .addOption(storeOption())
    .option('--actor <name>', `name recorded on bead changes (default: ${actor})`)
    .hook('preAction', (_program, action) => refuseMissingCwd(deps, action.optsWithGlobals<GlobalOptions>()));
}

/**
 * `-C <dir>` naming no directory is the command line's fault, said as such: without this check each
 * command met it its own way ("no bead store in <dir>/.beads", create one), sending a user who mistyped
 * the path off to initialise a project there.
 */
function refuseMissingCwd(deps: Pick<CliDeps, 'cwd'>, options: GlobalOptions): void {
  if (options.cwd === undefined) return;
  const dir = resolve(deps.cwd, options.cwd);
  let isDirectory = false;
  try {
    isDirectory = statSync(dir).isDirectory();
  } catch {
    // Not there (or not readable): said below.
  }
  if (!isDirectory) {
    throw new UsageError(`-C ${options.cwd}: ${dir} is not a directory.`, {
      hint: 'Give -C the project directory to run in (it must exist).',
    });
  }
}

export function storeOption(): Option {
  return new Option('--store <store>', 'bead store: br, embedded, or auto (br when it is on PATH)').choices([
    'auto',
    'br',
    'embedded',
  ]);
}

export function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

/** A file the user named on the command line: relative to where they are (or to `-C <dir>`). */
export function userPath(deps: CliDeps, options: GlobalOptions, file: string): string {
  return resolve(deps.cwd, options.cwd ?? '.', file);
}

export interface StoreContext {
  config: ForgeConfig;
  opened: OpenedStore;
  cwd: string;
}

/**
 * Loads `.forge/config.json` and opens the store the flags and config ask for. For an epic's loop,
 * the store the loop was created on (in `.forge/loops.json`) comes before the config: its beads are there.
 * `early`: see OpenStoreOptions.early. A config error is reported before a store error.
 */
export async function openStoreFor(
  deps: CliDeps,
  options: GlobalOptions,
  epicId?: string,
  early?: (store: BeadStore) => void,
): Promise<StoreContext> {
  const asked = openStoreThenConfig(deps, options, epicId, early);
  const config = await asked.config;
  return { config, opened: await asked.opened, cwd: asked.cwd };
}

/**
 * The store and the config, as two promises. The store opens on the config's store settings, read by hand
 * (store-settings.ts); the whole config is read and checked once the store is open, or has failed to. So
 * on br the first calls start before zod and the config's schemas load (~40 ms here), which then load
 * while br answers. Await `config` before acting on a failed `opened`: a config error comes first.
 */
export function openStoreThenConfig(
  deps: CliDeps,
  options: GlobalOptions,
  epicId?: string,
  early?: (store: BeadStore) => void,
): { opened: Promise<OpenedStore>; config: Promise<ForgeConfig>; cwd: string } {
  const cwd = workingDir(deps, options);
  const opened = import('./store-settings.js').then(async ({ openStoreWith, readStoreSettings }) =>
    openStoreWith(deps, options, cwd, await readStoreSettings(cwd), epicId, early),
  );
  const config = opened
    .catch(() => undefined)
    .then(async () => (await import('./forge-config.js')).loadForgeConfig(cwd));
  opened.catch(() => undefined);
  config.catch(() => undefined);
  return { opened, config, cwd };
}

export function parseInteger(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`expected a whole number, got '${value}'.`);
    const parsed = Number(value);
    if (parsed < min || parsed > max)
      throw new InvalidArgumentError(`expected a number from ${min} to ${max}.`);
    return parsed;
  };
}

export function parseList(value: string, previous: string[] = []): string[] {
  return [
    ...previous,
    ...value
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  ];
}

/** A number option (decimals and exponents allowed), e.g. a loop's --target or --min-delta. */
export function parseNumberArg(value: string): number {
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(value.trim())) {
    throw new InvalidArgumentError(`expected a number, got '${value}'.`);
  }
  return Number(value);
}

/** A size option, `100M`, `1.5G`, `0` (binary units; see parseSize), to whole bytes. */
export function parseSizeArg(value: string): number {
  const bytes = parseSize(value);
  if (bytes === undefined) {
    throw new InvalidArgumentError(`expected a size such as 100M, 2G or a number of bytes, got '${value}'.`);
  }
  return bytes;
}

/** Reads a text file the user named (see userPath); a usage error naming the file when it cannot. */
export async function readUserFile(
  deps: CliDeps,
  options: GlobalOptions,
  file: string,
  what: string,
): Promise<string> {
  const [{ readFile }, { UsageError }] = await Promise.all([
    import('node:fs/promises'),
    import('../infra/errors.js'),
  ]);
  try {
    return await readFile(userPath(deps, options, file), 'utf8');
  } catch {
    throw new UsageError(`Cannot read ${what} ${file}.`);
  }
}
