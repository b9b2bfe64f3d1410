// `forge-pack spec record` flags turned into what the run state records: each flag checked here, so a
// bad value is a usage error naming the flag before the run state is touched.
import { InvalidArgumentError, type Command } from 'commander';
import type { RecordInput } from '../autoresearch/spec-state/record.js';
import { DIMENSIONS, type Dimension } from '../autoresearch/spec-state/schema.js';
import { UsageError } from '../infra/errors.js';
import { parseInteger, parseList } from './common.js';

export interface RecordFlags {
  prompt?: 'sparse' | 'rich';
  evidence?: string;
  source?: string;
  claim?: string;
  cite?: string;
  from?: string[];
  reducer?: string;
  gap?: string[];
  gapsNone?: boolean;
  questionRound?: number;
  answered?: number;
  score?: [Dimension, number][];
  blocker?: string[];
  resolve?: string[];
  review?: string;
  material?: number;
  minor?: number;
  beadsEpic?: string;
  draft?: string;
}

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export function addRecordOptions(command: Command): Command {
  return command
    .option('--prompt <kind>', 'intake: the request is "sparse" or "rich"', parseChoice(['sparse', 'rich']))
    .option('--evidence <summary>', 'evidence fan-out: one finding (with --source)')
    .option('--source <where>', 'where the evidence comes from: a path, a URL, "user"')
    .option('--claim <text>', 'reduce and merge, draft: a canonical claim (with --from, its evidence)')
    .option('--cite <claim-id>', 'add evidence (--from) to a claim already recorded, e.g. C3')
    .option('--from <evidence-ids>', 'evidence ids, comma-separated: E1,E4', parseList)
    .option('--reducer <name>', 'reduce and merge: the one reducer that merged the fan-out')
    .option('--gap <text>', 'gap analysis: a gap, "<dimension>: what is missing" (repeatable)', collect)
    .option('--gaps-none', 'gap analysis: it ran and found no gaps')
    .option('--question-round <asked>', 'user input: a round of questions asked', parseInteger(0))
    .option('--answered <n>', 'how many of the round were answered (default: all)', parseInteger(0))
    .option('--score <dimension=n>', 'verify: a completeness score 0-100 (repeatable)', parseScore)
    .option(
      '--blocker <reason>',
      'a blocker reason; the gate stays shut while it is open (repeatable)',
      collect,
    )
    .option('--resolve <blocker-id>', 'resolve a blocker, e.g. B2; --reason says how (repeatable)', collect)
    .option('--review <reviewer>', "adversarial review: one reviewer's report (with --material)")
    .option('--material <n>', 'material findings in that report', parseInteger(0))
    .option('--minor <n>', 'minor findings in that report (default 0)', parseInteger(0))
    .option('--draft <path>', 'draft: the draft spec written (its content hash is recorded)')
    .option('--beads-epic <id>', 'beads generation: the build epic created');
}

function parseChoice<T extends string>(choices: readonly T[]) {
  return (value: string): T => {
    const found = choices.find((choice) => choice === value);
    if (found === undefined) throw new InvalidArgumentError(`expected ${choices.join(' or ')}.`);
    return found;
  };
}

function parseScore(value: string, previous: [Dimension, number][] = []): [Dimension, number][] {
  const match = /^([a-z_]+)=(\d{1,3})$/.exec(value.trim());
  const dimension = DIMENSIONS.find((d) => d === match?.[1]);
  const score = Number(match?.[2]);
  if (match === null || dimension === undefined || score > 100)
    throw new InvalidArgumentError(
      `expected <dimension>=<0-100> with a dimension among ${DIMENSIONS.join(', ')}; got '${value}'.`,
    );
  return [...previous, [dimension, score]];
}

/** The flags as one record; refuses combinations that cannot be meant. */
export function recordInputOf(flags: RecordFlags): RecordInput {
  const input: RecordInput = {};
  const pairs: [keyof RecordFlags, keyof RecordFlags][] = [
    ['evidence', 'source'],
    ['source', 'evidence'],
    ['review', 'material'],
    ['material', 'review'],
    ['minor', 'review'],
    ['answered', 'questionRound'],
  ];
  for (const [given, needed] of pairs) {
    if (flags[given] !== undefined && flags[needed] === undefined)
      throw new UsageError(`--${kebab(given)} needs --${kebab(needed)}.`);
  }
  if (flags.from !== undefined && (flags.claim === undefined) === (flags.cite === undefined))
    throw new UsageError('--from goes with exactly one of --claim or --cite.');
  if (flags.cite !== undefined && flags.from === undefined) throw new UsageError('--cite needs --from.');
  if (flags.prompt !== undefined) input.prompt = flags.prompt;
  if (flags.evidence !== undefined && flags.source !== undefined)
    input.evidence = [
      { source: nonEmpty(flags.source, '--source'), summary: nonEmpty(flags.evidence, '--evidence') },
    ];
  if (flags.claim !== undefined)
    input.claims = [{ text: nonEmpty(flags.claim, '--claim'), evidence: flags.from ?? [] }];
  if (flags.cite !== undefined) input.cites = [{ claim: flags.cite, evidence: flags.from ?? [] }];
  if (flags.reducer !== undefined) input.reducer = nonEmpty(flags.reducer, '--reducer');
  if (flags.gap !== undefined) input.gaps = flags.gap.map(parseGap);
  if (flags.gapsNone === true) input.noGaps = true;
  if (flags.questionRound !== undefined)
    input.questionRound = { asked: flags.questionRound, answered: flags.answered ?? flags.questionRound };
  if (flags.score !== undefined) input.scores = Object.fromEntries(flags.score);
  if (flags.blocker !== undefined) input.blockers = flags.blocker.map((b) => nonEmpty(b, '--blocker'));
  if (flags.resolve !== undefined) input.resolve = flags.resolve;
  if (flags.review !== undefined && flags.material !== undefined)
    input.review = {
      reviewer: nonEmpty(flags.review, '--review'),
      material: flags.material,
      minor: flags.minor ?? 0,
    };
  if (flags.beadsEpic !== undefined) input.beadsEpic = nonEmpty(flags.beadsEpic, '--beads-epic');
  return input;
}

/** `errors_and_edge_cases: what happens when the store is locked`, or a gap under no dimension. */
function parseGap(text: string): { dimension: Dimension | null; missing: string } {
  const colon = text.indexOf(':');
  const head = colon === -1 ? '' : text.slice(0, colon).trim();
  const dimension = DIMENSIONS.find((d) => d === head) ?? null;
  const missing = dimension === null ? text : text.slice(colon + 1);
  return { dimension, missing: nonEmpty(missing, '--gap') };
}

function nonEmpty(value: string, flag: string): string {
  const trimmed = value.trim();
  if (trimmed === '') throw new UsageError(`${flag} needs a non-empty value.`);
  return trimmed;
}

function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
