// Shell completion for both programs (bash, zsh, fish), generated from the commander definitions, so
// it lists exactly the subcommands and flags that exist.
import type { Command, Option } from 'commander';
import { UsageError } from '../infra/errors.js';
import { loadAllCommands } from './lazy-command.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  /** Subcommand names from the program down, e.g. ['beads', 'create']. */
  path: string[];
  subcommands: string[];
  flags: string[];
}

/** Every command of the program, with its subcommands and flags (inherited global flags included). */
export function commandTree(program: Command): Node[] {
  const nodes: Node[] = [];
  const visit = (command: Command, path: string[], inherited: string[]) => {
    const own = command.options.flatMap((option: Option) =>
      [option.long, option.short].filter((flag): flag is string => flag !== undefined),
    );
    const flags = [...new Set([...inherited, ...own, '--help'])].sort();
    const children = command.commands.filter((child) => child.name() !== 'help');
    nodes.push({ path, subcommands: children.map((child) => child.name()).sort(), flags });
    for (const child of children) visit(child, [...path, child.name()], flags);
  };
  visit(program, [], []);
  return nodes;
}

export function completionScript(program: Command, shell: string): string {
  if (!(SHELLS as readonly string[]).includes(shell)) {
    throw new UsageError(`No completion for "${shell}": choose one of ${SHELLS.join(', ')}.`);
  }
  const name = program.name();
  const nodes = commandTree(program);
  return shell === 'fish' ? fishScript(name, nodes) : bashScript(name, nodes, shell === 'zsh');
}

function bashScript(name: string, nodes: Node[], zsh: boolean): string {
  const fn = `_${name.replace(/[^A-Za-z0-9]/g, '_')}`;
  const cases = (pick: (node: Node) => string[]) =>
    nodes.map((node) => `    "${node.path.join(' ')}") echo "${pick(node).join(' ')}" ;;`).join('\n');
  return `# ${name} completion for ${zsh ? 'zsh' : 'bash'}. Load it with:
#   source <(${name} completion ${zsh ? 'zsh' : 'bash'})
${zsh ? 'autoload -U +X bashcompinit && bashcompinit\n' : ''}${fn}_subcommands() {
  case "$1" in
${cases((node) => node.subcommands)}
  esac
}
${fn}_words() {
  case "$1" in
${cases((node) => [...node.subcommands, ...node.flags])}
  esac
}
${fn}() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" path="" i word
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="\${COMP_WORDS[i]}"
    case " $(${fn}_subcommands "$path") " in
      *" $word "*) path="\${path:+$path }$word" ;;
    esac
  done
  COMPREPLY=($(compgen -W "$(${fn}_words "$path")" -- "$cur"))
}
complete -o default -F ${fn} ${name}
`;
}

function fishScript(name: string, nodes: Node[]): string {
  const lines = [`# ${name} completion for fish. Load it with:`, `#   ${name} completion fish | source`];
  for (const node of nodes) {
    // At this command: all of its path has been typed, and none of its own subcommands yet.
    const seen = node.path.map((part) => `__fish_seen_subcommand_from ${part}`);
    const notDeeper =
      node.subcommands.length > 0 ? [`not __fish_seen_subcommand_from ${node.subcommands.join(' ')}`] : [];
    const condition = [...seen, ...notDeeper].join('; and ');
    const where = condition === '' ? '' : ` -n '${condition}'`;
    if (node.subcommands.length > 0) {
      lines.push(`complete -c ${name} -f${where} -a '${node.subcommands.join(' ')}'`);
    }
    for (const flag of node.flags) {
      const option = flag.startsWith('--') ? `-l ${flag.slice(2)}` : `-s ${flag.slice(1)}`;
      lines.push(`complete -c ${name}${where} ${option}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** `<program> completion <shell>`: prints the script on stdout. */
export function addCompletionCommand(program: Command, write: (text: string) => void): void {
  program
    .command('completion')
    .description(`print a shell completion script (${SHELLS.join(', ')})`)
    .argument('<shell>', SHELLS.join(' | '))
    .addHelpText(
      'after',
      `
Examples:
  source <(${program.name()} completion bash)     # in ~/.bashrc
  source <(${program.name()} completion zsh)      # in ~/.zshrc
  ${program.name()} completion fish | source      # in ~/.config/fish/config.fish`,
    )
    .action(async (shell: string) => {
      // Commands loaded on demand are stubs until now: the script lists their flags too.
      await loadAllCommands(program);
      write(completionScript(program, shell));
    });
}
