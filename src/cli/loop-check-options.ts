// `forge-pack loop`'s guard and track options: `--guard [name=]<cmd>`, `--track name=<cmd>` with
// `--track-score`, `--track-max`, `--track-min name=<value>`, turned into the loop's setup options.
// Light on purpose (commander and the error types only): loop-command.ts loads it when `forge-pack loop` runs.
import type { Command } from 'commander';
import type { GuardOptions, TrackOptions } from '../autoresearch/guard-setup.js';
import { UsageError } from '../infra/errors.js';

export interface CheckFlags {
  guard?: string[];
  track?: string[];
  trackScore?: string[];
  trackMax?: string[];
  trackMin?: string[];
}

/** Config fields these options set, so a config error names the flag the user typed. */
export const CHECK_FLAG_FOR_FIELD: Record<string, string> = {
  guards: '--guard',
  'guards.name': '--guard',
  'guards.command': '--guard',
  tracks: '--track',
  'tracks.name': '--track',
  'tracks.command': '--track',
  'tracks.score': '--track-score',
  'tracks.score.pattern': '--track-score regex:…',
  'tracks.score.path': '--track-score json:…',
  'tracks.max': '--track-max',
  'tracks.min': '--track-min',
};

function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

export function addCheckOptions(command: Command): Command {
  return command
    .option(
      '--guard <[name=]cmd>',
      'a command that must exit 0 after every doer for its work to be kept, run without a shell (repeatable; name defaults to its first words)',
      collect,
    )
    .option(
      '--track <name=cmd>',
      'a second figure recorded every iteration beside the score, without deciding (repeatable)',
      collect,
    )
    .option(
      '--track-score <name=source>',
      "how a track's figure is read, as --score: exit-code, regex:<pattern>, json:<path>, tap, junit",
      collect,
    )
    .option(
      '--track-max <name=limit>',
      'revert an iteration whose track goes above this: a number, or a change from the baseline such as +5%',
      collect,
    )
    .option(
      '--track-min <name=limit>',
      'revert an iteration whose track goes below this: a number, or a change from the baseline such as -10%',
      collect,
    );
}

export const CHECK_HELP = `
  # guards must pass after every doer; tracks are recorded beside the score
  forge-pack loop "faster parser" --program-file program.md --scope src/parser/ \\
    --metric-command "node bench/parse.js --json" --score json:ops_per_sec \\
    --guard tests="npm test" --track size="node scripts/size.js" --track-score size=json:bytes \\
    --track-max size=+5%`;

/** `name=rest` → [name, rest]; the name is what comes before the first `=` when it is one word. */
function splitNamed(text: string): [string, string] | undefined {
  const match = /^([A-Za-z0-9][\w.-]*)=([\s\S]*)$/.exec(text);
  return match === null ? undefined : [match[1] ?? '', match[2] ?? ''];
}

function named(flag: string, text: string, what: string): [string, string] {
  const pair = splitNamed(text);
  if (pair === undefined || pair[1].trim() === '') {
    throw new UsageError(`${flag}: expected <name>=<${what}>, got ${JSON.stringify(text)}.`, {
      hint: `Example: ${flag} size=${what === 'cmd' ? '"node scripts/size.js"' : what === 'limit' ? '+5%' : 'json:bytes'}`,
    });
  }
  return pair;
}

/** A threshold as config.json holds it: a number stays a number, anything else goes to the schema as text. */
function limitValue(text: string): number | string {
  const trimmed = text.trim();
  return /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/.test(trimmed) ? Number(trimmed) : trimmed;
}

/**
 * The guards and tracks the flags describe. A `--track-*` option for a track no `--track` defines, or
 * given twice for one track, is refused; malformed values are left to the config schema, which names
 * the field (and the flag, through CHECK_FLAG_FOR_FIELD).
 */
export function checkOptionsFrom(
  flags: CheckFlags,
  parseScore: (text: string) => NonNullable<TrackOptions['score']>,
): { guards?: GuardOptions[]; tracks?: TrackOptions[] } {
  const guards = (flags.guard ?? []).map((text): GuardOptions => {
    const pair = splitNamed(text);
    return pair === undefined ? { command: text } : { name: pair[0], command: pair[1] };
  });
  const tracks = new Map<string, TrackOptions>();
  for (const text of flags.track ?? []) {
    const [name, command] = named('--track', text, 'cmd');
    if (tracks.has(name)) throw new UsageError(`--track: the track ${name} is given twice.`);
    tracks.set(name, { name, command });
  }
  const attach = (
    flag: string,
    values: string[] | undefined,
    what: string,
    set: (t: TrackOptions, v: string) => void,
  ) => {
    const seen = new Set<string>();
    for (const text of values ?? []) {
      const [name, value] = named(flag, text, what);
      const track = tracks.get(name);
      if (track === undefined) {
        throw new UsageError(`${flag}: there is no track named ${name}.`, {
          hint: `Define it first: --track ${name}="<cmd>"${tracks.size > 0 ? ` (tracks: ${[...tracks.keys()].join(', ')})` : ''}`,
        });
      }
      if (seen.has(name)) throw new UsageError(`${flag}: the track ${name} is given twice.`);
      seen.add(name);
      set(track, value);
    }
  };
  attach('--track-score', flags.trackScore, 'source', (t, v) => {
    try {
      t.score = parseScore(v);
    } catch {
      throw new UsageError(
        `--track-score ${t.name}: expected exit-code, regex:<pattern>, json:<path>, tap or junit, got ${JSON.stringify(v)}.`,
        { hint: 'Example: --track-score size=json:bytes' },
      );
    }
  });
  attach('--track-max', flags.trackMax, 'limit', (t, v) => {
    t.max = limitValue(v);
  });
  attach('--track-min', flags.trackMin, 'limit', (t, v) => {
    t.min = limitValue(v);
  });
  return {
    ...(guards.length === 0 ? {} : { guards }),
    ...(tracks.size === 0 ? {} : { tracks: [...tracks.values()] }),
  };
}
