// The shipped skills: valid frontmatter, and every forge-pack/ralph-loop command and flag they mention
// exists in the programs as they are registered (the commander trees behind `--help`).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { createDeps, type CliDeps } from '../../src/cli/deps.js';
import { createForgePackProgram } from '../../src/cli/forge-pack.js';
import { loadAllCommands } from '../../src/cli/lazy-command.js';
import { createRalphLoopProgram } from '../../src/cli/ralph-loop.js';
import { ROOT } from '../support/cli.js';

const SKILLS_DIR = join(ROOT, 'skills');
const SKILL_NAMES = readdirSync(SKILLS_DIR, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();

const REQUIRED_SKILLS = [
  'autoresearch-loop',
  'forge-init',
  'ralph-loop-ops',
  'spec-intake',
  'spec-clarification-loop',
  'spec-completeness-scoring',
  'spec-adversarial-review',
  'spec-plan-handoff',
  'spec-beads-generation',
  'spec-beads-review',
  'spec-pipeline',
];

// ---- frontmatter ----

interface Skill {
  frontmatter: Record<string, string>;
  body: string;
}

/**
 * Reads `---`-delimited frontmatter of `key: value` lines. Values must be YAML plain scalars that
 * mean the same in any YAML parser: no `: ` or ` #` inside, no leading indicator character.
 */
function parseSkill(text: string): Skill | { error: string } {
  const match = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (match === null) return { error: 'no frontmatter: the file must start with a --- block' };
  const frontmatter: Record<string, string> = {};
  for (const line of (match[1] ?? '').split('\n')) {
    const pair = /^([a-z][a-z-]*): (.*)$/.exec(line);
    if (pair === null) return { error: `frontmatter line is not "key: value": ${line}` };
    const [, key = '', value = ''] = pair;
    if (/: | #/.test(value) || /^[-?:,[\]{}#&*!|>'"%@`]/.test(value)) {
      return { error: `frontmatter ${key}: not a plain YAML scalar (quote-free, no ": " or " #")` };
    }
    frontmatter[key] = value.trim();
  }
  return { frontmatter, body: text.slice(match[0].length) };
}

// ---- the command trees ----

interface CommandNode {
  path: string;
  /** Flag → whether it takes a value. */
  options: Map<string, boolean>;
  subcommands: Map<string, CommandNode>;
  maxArgs: number;
  parent: CommandNode | undefined;
  /** What `--help` prints for this command. */
  help: string;
}

function indexCommand(command: Command, parent?: CommandNode): CommandNode {
  const node: CommandNode = {
    path: parent === undefined ? command.name() : `${parent.path} ${command.name()}`,
    options: new Map([
      ['--help', false],
      ['-h', false],
    ]),
    subcommands: new Map(),
    maxArgs: command.registeredArguments.some((arg) => arg.variadic)
      ? Infinity
      : command.registeredArguments.length,
    parent,
    help: command.helpInformation(),
  };
  for (const option of command.options) {
    if (option.hidden) continue;
    const takesValue = option.required || option.optional;
    if (option.long !== undefined) node.options.set(option.long, takesValue);
    if (option.short !== undefined) node.options.set(option.short, takesValue);
  }
  for (const sub of command.commands) {
    const child = indexCommand(sub, node);
    for (const name of [sub.name(), ...sub.aliases()]) node.subcommands.set(name, child);
  }
  return node;
}

/**
 * A flag is known on the command or on any command above it (program options apply everywhere), and
 * is printed by that command's `--help`.
 */
function lookupFlag(node: CommandNode, flag: string): boolean | undefined {
  for (let at: CommandNode | undefined = node; at !== undefined; at = at.parent) {
    const takesValue = at.options.get(flag);
    if (takesValue !== undefined && new RegExp(`(^|[\\s,])${flag}\\b`, 'm').test(at.help)) return takesValue;
  }
  return undefined;
}

function allFlags(node: CommandNode, into = new Set<string>()): Set<string> {
  for (const flag of node.options.keys()) into.add(flag);
  for (const child of node.subcommands.values()) allFlags(child, into);
  return into;
}

// ---- finding mentions ----

const OPERATORS = new Set(['|', '||', '&&', ';', '>', '>>', '2>', '&']);

/** Splits a line into words like a shell (quotes, backslashes); `#` starts a comment. */
function tokenize(line: string): string[] {
  const tokens: string[] = [];
  let word = '';
  let inWord = false;
  let quote: string | undefined;
  for (let i = 0; i < line.length; i += 1) {
    const c = line[i] ?? '';
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else word += c;
      continue;
    }
    if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === '\\' && i + 1 < line.length) {
      word += line[i + 1];
      inWord = true;
      i += 1;
    } else if (/\s/.test(c)) {
      if (inWord) tokens.push(word);
      word = '';
      inWord = false;
    } else if (c === '#' && !inWord) {
      break;
    } else if ((c === '|' || c === ';' || c === '&' || c === '>') && !inWord) {
      const two = line.slice(i, i + 2);
      const op = OPERATORS.has(two) ? two : c;
      tokens.push(op);
      i += op.length - 1;
    } else {
      word += c;
      inWord = true;
    }
  }
  if (inWord) tokens.push(word);
  return tokens;
}

interface Mention {
  program: 'forge-pack' | 'ralph-loop';
  args: string[];
  text: string;
}

function mentionsIn(line: string): Mention[] {
  const tokens = tokenize(line);
  const found: Mention[] = [];
  tokens.forEach((token, index) => {
    if (token !== 'forge-pack' && token !== 'ralph-loop') return;
    const rest = tokens.slice(index + 1);
    const end = rest.findIndex((t) => OPERATORS.has(t));
    found.push({ program: token, args: end === -1 ? rest : rest.slice(0, end), text: line.trim() });
  });
  return found;
}

interface Extracted {
  mentions: Mention[];
  /** Flags written on their own (in an inline code span, or in prose). */
  looseFlags: string[];
}

function extract(text: string): Extracted {
  const mentions: Mention[] = [];
  const looseFlags: string[] = [];
  const fence = /^```[^\n]*\n([\s\S]*?)^```/gm;
  for (const block of text.matchAll(fence)) {
    for (const line of (block[1] ?? '').replace(/\\\n/g, ' ').split('\n')) mentions.push(...mentionsIn(line));
  }
  const prose = text.replace(fence, '');
  for (const span of prose.matchAll(/`([^`\n]+)`/g)) {
    const code = span[1] ?? '';
    const inSpan = mentionsIn(code);
    mentions.push(...inSpan);
    if (inSpan.length === 0 && /^--?[A-Za-z]/.test(code)) looseFlags.push(tokenize(code)[0] ?? code);
  }
  for (const flag of prose.replace(/`[^`\n]+`/g, '').matchAll(/(?<![\w-])--[a-z][a-z0-9-]*/g)) {
    looseFlags.push(flag[0]);
  }
  return { mentions, looseFlags };
}

/** What is wrong with one invocation: unknown subcommands, unknown flags, too many arguments. */
function checkMention(mention: Mention, root: CommandNode): string[] {
  const problems: string[] = [];
  let node = root;
  let positionals = 0;
  const args = mention.args;
  for (let i = 0; i < args.length; i += 1) {
    const token = args[i] ?? '';
    if (token === '…' || token === '...') continue;
    if (token.startsWith('-') && token.length > 1) {
      const flag = token.includes('=') ? token.slice(0, token.indexOf('=')) : token;
      const takesValue = lookupFlag(node, flag);
      if (takesValue === undefined) {
        problems.push(`\`${node.path}\` has no option ${flag}`);
        // Unknown arity: take a following word as its value rather than report it as well.
        if (!token.includes('=') && !(args[i + 1] ?? '-').startsWith('-')) i += 1;
      } else if (takesValue && !token.includes('=')) i += 1;
      continue;
    }
    if (positionals === 0 && node.subcommands.size > 0) {
      const sub = node.subcommands.get(token);
      if (sub !== undefined) {
        node = sub;
        continue;
      }
      if (node.maxArgs === 0) {
        problems.push(`\`${node.path}\` has no command "${token}"`);
        break;
      }
    }
    positionals += 1;
    if (positionals > node.maxArgs) {
      problems.push(`\`${node.path}\` takes ${node.maxArgs} argument(s), got "${token}" too`);
      break;
    }
  }
  return problems.map((problem) => `${problem}, in: ${mention.text}`);
}

// ---- the programs, as registered ----

const quiet = { write: () => undefined };
const deps: CliDeps = createDeps({ stdout: quiet, stderr: quiet, stderrIsTTY: false });
/** A program with its lazily loaded commands defined, as they are once they run. */
async function defined(program: Command): Promise<Command> {
  await loadAllCommands(program);
  return program;
}
const TREES = {
  'forge-pack': indexCommand(await defined(createForgePackProgram(deps))),
  'ralph-loop': indexCommand(await defined(createRalphLoopProgram(deps))),
};
const EVERY_FLAG = new Set([...allFlags(TREES['forge-pack']), ...allFlags(TREES['ralph-loop'])]);

function problemsIn(text: string): string[] {
  const { mentions, looseFlags } = extract(text);
  return [
    ...mentions.flatMap((mention) => checkMention(mention, TREES[mention.program])),
    ...looseFlags
      .filter((flag) => !EVERY_FLAG.has(flag))
      .map((flag) => `no forge-pack or ralph-loop command has the option ${flag}`),
  ];
}

const skillText = (name: string): string => readFileSync(join(SKILLS_DIR, name, 'SKILL.md'), 'utf8');

describe('skills', () => {
  it('ships every skill of the Forge workflow and the spec pipeline', () => {
    expect(SKILL_NAMES).toEqual(expect.arrayContaining(REQUIRED_SKILLS));
  });

  it.each(SKILL_NAMES)('%s has frontmatter naming it, with a description', (name) => {
    const skill = parseSkill(skillText(name));
    if ('error' in skill) throw new Error(`skills/${name}/SKILL.md: ${skill.error}`);
    expect(skill.frontmatter.name).toBe(name);
    expect(skill.frontmatter.description?.length ?? 0).toBeGreaterThan(40);
    expect(skill.frontmatter.description?.length ?? 0).toBeLessThanOrEqual(1024);
    expect(skill.body.trim()).not.toBe('');
  });

  it.each(SKILL_NAMES)('%s mentions only commands and options the programs have', (name) => {
    const problems = problemsIn(skillText(name));
    expect(problems, `skills/${name}/SKILL.md:\n${problems.join('\n')}`).toEqual([]);
  });

  it('finds the commands in the skills (the check above is not vacuous)', () => {
    const mentions = SKILL_NAMES.flatMap((name) => extract(skillText(name)).mentions);
    const distinct = new Set(
      mentions.map((m) => `${m.program} ${m.args.find((a) => /^[a-z]/.test(a)) ?? ''}`),
    );
    expect(mentions.length).toBeGreaterThan(60);
    for (const command of ['forge-pack init', 'forge-pack doctor', 'forge-pack loop', 'forge-pack beads']) {
      expect(distinct).toContain(command);
    }
    for (const command of ['ralph-loop status', 'ralph-loop resume', 'ralph-loop logs', 'ralph-loop stop']) {
      expect(distinct).toContain(command);
    }
  });

  it('reports a made-up command, option or extra argument', () => {
    const text = [
      '```sh',
      'forge-pack beads frobnicate x',
      'forge-pack beads create "t" --parent bd-1 --colour red \\',
      '  --deps bd-2',
      'ralph-loop stop bd-1 bd-2',
      '```',
      'Use `ralph-loop bd-1 --dry-run --wat` or `--no-such-flag`; a shell pipe `forge-pack beads ready --parent e | jq .`.',
    ].join('\n');
    const problems = problemsIn(text);
    expect(problems).toEqual([
      expect.stringContaining('`forge-pack beads` has no command "frobnicate"'),
      expect.stringContaining('`forge-pack beads create` has no option --colour'),
      expect.stringContaining('`ralph-loop stop` takes 1 argument(s), got "bd-2" too'),
      expect.stringContaining('`ralph-loop` has no option --wat'),
      'no forge-pack or ralph-loop command has the option --no-such-flag',
    ]);
  });
});
