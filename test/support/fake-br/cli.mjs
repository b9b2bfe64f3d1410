// The fake br's command line: clap's rules (globals anywhere, `--x=v`, `--`, no hyphen values), gated by version.

const flag = (short) => ({ kind: 'flag', short });
const value = (short) => ({ kind: 'value', short });
const many = (short, delimiter) => ({ kind: 'many', short, delimiter });
const since = (version, option) => ({ ...option, since: version });

const GLOBALS = {
  json: flag(),
  actor: value(),
  'lock-timeout': value(),
  db: value(),
  'no-auto-flush': flag(),
  'no-auto-import': flag(),
  'allow-stale': flag(),
  'no-db': flag(),
  verbose: flag('v'),
  quiet: flag('q'),
  'no-color': flag(),
  'no-daemon': flag(),
};

/** Subcommands: their options and positional names (`name...` takes the rest, `name?` is optional). */
const COMMANDS = {
  version: { options: {}, positionals: [] },
  init: { options: { prefix: value(), force: flag(), backend: value() }, positionals: [] },
  create: {
    options: {
      title: value(),
      type: value('t'),
      priority: value('p'),
      description: value('d'),
      assignee: value('a'),
      labels: many('l', ','),
      parent: value(),
      deps: many(undefined, ','),
      status: value('s'),
    },
    positionals: ['title?'],
  },
  show: { options: {}, positionals: ['ids...'] },
  list: {
    options: {
      status: many('s'),
      type: many('t'),
      label: many('l'),
      all: flag('a'),
      limit: value(),
      assignee: value(),
    },
    positionals: [],
  },
  ready: {
    options: {
      limit: value(),
      assignee: value(),
      unassigned: flag(),
      label: many('l'),
      type: many('t'),
      sort: value(),
      parent: since('0.1.13', value()),
      recursive: since('0.1.13', flag('r')),
      epic: since('0.2.12', value()),
    },
    positionals: [],
  },
  update: {
    options: {
      claim: flag(),
      status: value('s'),
      'add-label': many(),
      'remove-label': many(),
      assignee: value(),
      title: value(),
      description: value(),
      priority: value('p'),
      force: flag(),
    },
    positionals: ['ids...'],
  },
  close: { options: { reason: value('r'), force: flag('f') }, positionals: ['ids...'] },
  reopen: { options: { reason: value('r') }, positionals: ['ids...'] },
  'dep add': { options: { type: value('t') }, positionals: ['issue', 'depends_on'] },
  'dep list': { options: { direction: value(), type: value('t') }, positionals: ['issue'] },
  'comments add': { options: { message: value(), author: value() }, positionals: ['id', 'text...'] },
  sync: {
    options: { 'flush-only': flag(), 'import-only': flag(), status: flag(), force: flag() },
    positionals: [],
  },
};

const GROUPS = new Set(['dep', 'comments']);

export class UsageError extends Error {}

function usage(command, message) {
  return new UsageError(
    `error: ${message}\n\nUsage: br ${command ?? '<COMMAND>'} [OPTIONS]\n\nFor more information, try '--help'.\n`,
  );
}

function atLeast(version, minimum) {
  const a = version.split('.').map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

/** Options of a command as this version knows them (a later flag is "unexpected" on an older br). */
function optionsFor(command, version) {
  const known = { ...GLOBALS };
  for (const [name, option] of Object.entries(COMMANDS[command]?.options ?? {})) {
    if (option.since === undefined || atLeast(version, option.since)) known[name] = option;
  }
  return known;
}

/**
 * Parses argv into `{ command, options, positionals }`; throws UsageError with clap's wording (exit 2).
 * Options are keyed by long name: flags are booleans, `many` options arrays.
 */
export function parseArgv(argv, version) {
  const words = [];
  const rest = [];
  const options = {};
  let command;
  let known = { ...GLOBALS };
  let literal = false;

  const store = (name, option, raw) => {
    if (option.kind === 'many') {
      const values = option.delimiter === undefined ? [raw] : raw.split(option.delimiter);
      options[name] = [...(options[name] ?? []), ...values];
    } else options[name] = raw;
  };

  for (let i = 0; i < argv.length; i += 1) {
    const token = argv[i];
    if (literal || !token.startsWith('-') || token === '-') {
      if (command === undefined) {
        words.push(token);
        const joined = words.join(' ');
        if (GROUPS.has(words[0]) && words.length === 1) continue;
        if (COMMANDS[joined] === undefined) throw usage(undefined, `unrecognized subcommand '${joined}'`);
        command = joined;
        known = optionsFor(command, version);
      } else rest.push(token);
      continue;
    }
    if (token === '--') {
      literal = true;
      continue;
    }
    let name;
    let inline;
    if (token.startsWith('--')) {
      const eq = token.indexOf('=');
      name = eq === -1 ? token.slice(2) : token.slice(2, eq);
      inline = eq === -1 ? undefined : token.slice(eq + 1);
    } else {
      const short = token[1];
      name = Object.keys(known).find((key) => known[key].short === short);
      inline = token.length > 2 ? token.slice(token[2] === '=' ? 3 : 2) : undefined;
    }
    const option = name === undefined ? undefined : known[name];
    if (option === undefined) throw usage(command, `unexpected argument '${token}' found`);
    if (option.kind === 'flag') {
      if (inline !== undefined) throw usage(command, `unexpected value '${inline}' for '--${name}' found`);
      options[name] = true;
      continue;
    }
    let raw = inline;
    if (raw === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.startsWith('-') && next !== '-')) {
        throw usage(
          command,
          `a value is required for '--${name} <${name.toUpperCase()}>' but none was supplied`,
        );
      }
      raw = next;
      i += 1;
    }
    store(name, option, raw);
  }
  if (command === undefined)
    throw usage(undefined, words.length > 0 ? `'${words[0]}' requires a subcommand` : 'no command given');

  const positionals = {};
  const names = COMMANDS[command].positionals;
  let index = 0;
  for (const spec of names) {
    const name = spec.replace(/[.?]+$/, '');
    if (spec.endsWith('...')) {
      positionals[name] = rest.slice(index);
      index = rest.length;
    } else if (index < rest.length) positionals[name] = rest[index++];
    else if (!spec.endsWith('?')) {
      throw usage(command, `the following required arguments were not provided:\n  <${name.toUpperCase()}>`);
    }
  }
  if (index < rest.length) throw usage(command, `unexpected argument '${rest[index]}' found`);
  return { command, options, positionals };
}

export const WRITE_COMMANDS = new Set([
  'init',
  'create',
  'update',
  'close',
  'reopen',
  'dep add',
  'comments add',
  'sync',
]);
