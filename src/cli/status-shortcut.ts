// The executable's short path for `ralph-loop status <epic>`, which scripts and `watch` poll while loops
// run: plain arguments (the epic, --json, --ascii, --beads, --workspace, --store, -C/--cwd, --actor,
// --debug) run status without building the commander program. Anything else (help, an unknown or
// repeated flag, a missing epic) and any status that fails go to the full program, which prints what
// it always printed: the short path writes nothing until status has succeeded.
import type { GlobalOptions } from './global-options.js';
import type { StatusFlags } from './status-run.js';

export interface StatusArgs {
  epicId: string;
  options: GlobalOptions;
  flags: StatusFlags;
}

type ValueOption = ({ to: 'options'; key: 'store' | 'cwd' | 'actor' } | { to: 'flags'; key: 'workspace' }) & {
  statusOnly: boolean;
};
type Switch = ({ to: 'options'; key: 'json' | 'debug' } | { to: 'flags'; key: 'beads' | 'ascii' }) & {
  statusOnly: boolean;
};

/** Options taking a value: the program's (anywhere on the line) and status's own (after `status`). */
const VALUE_OPTIONS = new Map<string, ValueOption>([
  ['--store', { to: 'options', key: 'store', statusOnly: false }],
  ['--cwd', { to: 'options', key: 'cwd', statusOnly: false }],
  ['-C', { to: 'options', key: 'cwd', statusOnly: false }],
  ['--actor', { to: 'options', key: 'actor', statusOnly: false }],
  ['--workspace', { to: 'flags', key: 'workspace', statusOnly: true }],
]);

const SWITCHES = new Map<string, Switch>([
  ['--json', { to: 'options', key: 'json', statusOnly: false }],
  ['--debug', { to: 'options', key: 'debug', statusOnly: false }],
  ['--beads', { to: 'flags', key: 'beads', statusOnly: true }],
  ['--ascii', { to: 'flags', key: 'ascii', statusOnly: true }],
]);

/**
 * The arguments after `node ralph-loop`, when they are a status the short path can run; undefined
 * sends them to the full program.
 */
export function parseStatusArgs(args: readonly string[]): StatusArgs | undefined {
  let inStatus = false;
  let epicId: string | undefined;
  const options: GlobalOptions = {};
  const flags: StatusFlags = {};
  const seen = new Set<string>();
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] ?? '';
    if (!arg.startsWith('-')) {
      if (!inStatus && arg !== 'status') return undefined;
      if (inStatus && (epicId !== undefined || arg === '')) return undefined;
      if (inStatus) epicId = arg;
      inStatus = true;
      continue;
    }
    const equals = arg.startsWith('--') ? arg.indexOf('=') : -1;
    const name = equals === -1 ? arg : arg.slice(0, equals);
    const valueOption = VALUE_OPTIONS.get(name);
    const switchOption = SWITCHES.get(name);
    const option = valueOption ?? switchOption;
    if (option === undefined || (option.statusOnly && !inStatus)) return undefined;
    // -C and --cwd are one option: given twice, commander keeps the last; the full program decides.
    if (seen.has(option.key)) return undefined;
    seen.add(option.key);
    if (switchOption !== undefined) {
      if (equals !== -1) return undefined;
      if (switchOption.to === 'options') options[switchOption.key] = true;
      else flags[switchOption.key] = true;
      continue;
    }
    if (valueOption === undefined) return undefined;
    const value = equals === -1 ? args[(index += 1)] : arg.slice(equals + 1);
    if (value === undefined || value === '' || value.startsWith('-')) return undefined;
    if (valueOption.to === 'flags') flags.workspace = value;
    else if (valueOption.key !== 'store') options[valueOption.key] = value;
    else if (value === 'auto' || value === 'br' || value === 'embedded') options.store = value;
    else return undefined;
  }
  return epicId === undefined ? undefined : { epicId, options, flags };
}
