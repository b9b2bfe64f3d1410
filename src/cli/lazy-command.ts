// Commands whose module loads only when they run: a program registers each with its name, description
// and help-list usage, and imports the module (one dynamic import) when commander dispatches to it,
// when `help <command>` asks for it, or when the completion script needs every flag.
import { Help, type Command } from 'commander';
import type { CliDeps } from './deps.js';
import { configureCommand } from './common.js';

/** What a command module exports: adds the arguments, options, help text and action to the command. */
export type DefineCommand = (command: Command, deps: CliDeps) => void;

export interface LazyCommandSpec {
  name: string;
  description: string;
  /** What `program --help` shows after the name until the module is loaded, e.g. "[options] <epic-id>". */
  usage: string;
  load: () => Promise<DefineCommand>;
}

interface Pending {
  spec: LazyCommandSpec;
  deps: CliDeps;
  loading?: Promise<void>;
}

const pending = new WeakMap<Command, Pending>();

/** Adds the command as a stub (name and description only); see loadCommand. */
export function addLazyCommand(program: Command, spec: LazyCommandSpec, deps: CliDeps): Command {
  const command = program.command(spec.name).description(spec.description);
  pending.set(command, { spec, deps });
  if (!hooked.has(program)) {
    hooked.add(program);
    program.hook('preSubcommand', (_program, sub) => loadCommand(sub));
    program.configureHelp({ ...program.configureHelp(), ...lazyHelp });
  }
  return command;
}

const hooked = new WeakSet<Command>();

/** Defines a stub command from its module (once); any other command is left as it is. */
export async function loadCommand(command: Command): Promise<void> {
  const entry = pending.get(command);
  if (entry === undefined) return;
  entry.loading ??= entry.spec.load().then((define) => {
    define(command, entry.deps);
    configureCommand(command, entry.deps);
    pending.delete(command);
  });
  await entry.loading;
}

/** Every command of the program, defined: what the completion script lists. */
export async function loadAllCommands(program: Command): Promise<void> {
  await Promise.all(program.commands.map((command) => loadCommand(command)));
}

/** Help that lists a stub as it will read once defined (commander's own term needs its options). */
const lazyHelp: Partial<Help> = {
  subcommandTerm(this: Help, command: Command): string {
    const entry = pending.get(command);
    return entry === undefined
      ? Help.prototype.subcommandTerm.call(this, command)
      : `${entry.spec.name} ${entry.spec.usage}`.trimEnd();
  },
};

/**
 * `help [command]` as a command of its own: commander's built-in one shows a command's help without
 * dispatching to it, so a stub would show no options. Listed last, with commander's own wording.
 */
export function addHelpCommand(program: Command): void {
  program.helpCommand(false);
  program
    .command('help')
    .description('display help for command')
    .argument('[command]')
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments()
    .action(async (name: string | undefined) => {
      const command = name === undefined ? undefined : program.commands.find((c) => c.name() === name);
      if (command === undefined || command.name() === 'help') {
        program.help(name === undefined ? undefined : { error: true });
      }
      await loadCommand(command);
      command.help();
    });
}
