// Figure 5: model requests and tokens per autoresearch iteration, with the real `claude` binary against the
// scripted Messages API server on 127.0.0.1, for a hard-metric loop and a soft-metric loop of one
// iteration each. The scripted turns are the fewest a role needs to do what its bead asks.
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, realpath, symlink, writeFile } from 'node:fs/promises';
import { delimiter, dirname, join } from 'node:path';
import {
  bash,
  startModelServer,
  text,
  toolUse,
  write,
  type RecordedRequest,
  type Rule,
  type Turn,
  type TurnContext,
} from '../../test/support/model-server/index.js';
import { promptSizes, type PromptSize } from './prompt-sizes.js';
import {
  BIN,
  cleanEnv,
  expectSuccess,
  NODE,
  ROOT,
  runTimed,
  SYSTEM_PATH,
  tempDir,
  type Timed,
} from './support.js';

export const CLAUDE_BIN = join(ROOT, 'node_modules', '.bin', 'claude');

export type LoopKind = 'hard' | 'soft';

export interface RoleCount {
  /** Agent processes (Claude Code sessions). */
  sessions: number;
  /** Messages API calls with tools: the agent's own turns. */
  agentTurns: number;
  /** Other Messages API calls Claude Code makes by itself (titles, probes), and count_tokens. */
  sideRequests: number;
  /** Input tokens, estimated at 4 characters per token of each Messages request body. */
  inputTokensEst: number;
  /** Output tokens of the scripted answers (4 characters per token); the server reports the same. */
  outputTokens: number;
}

export interface LoopRequests {
  kind: LoopKind;
  iterations: number;
  /** Per iteration (iter ≥ 1), by role; the baseline and the retrospective are reported apart. */
  perIteration: Record<string, RoleCount>;
  perIterationTotal: RoleCount;
  /** The soft baseline judge and the retrospective: once per loop, not per iteration. */
  perLoop: Record<string, RoleCount>;
  /** Tokens as the runner's event log recorded them (claude's own usage report), per iteration. */
  eventTokensPerIteration: { input: number; output: number };
  /** Each role's first request: its Forge prompt and what Claude Code adds (figure 10). */
  prompts: PromptSize[];
  wallMs: number;
}

export type ModelRequests =
  { available: true; claudeVersion: string; loops: LoopRequests[] } | { available: false; reason: string };

// ---- scripted roles: the fewest turns that do what each bead asks ----

function promptMatch(context: TurnContext, pattern: RegExp, what: string): string {
  const found = pattern.exec(context.request.userText)?.[1];
  if (found === undefined) throw new Error(`the scripted model found no ${what} in its prompt (${pattern})`);
  return found.trim();
}

/** Estimated tokens: 4 characters per token, as a rough tokenizer would count. */
export function estimateTokens(value: unknown): number {
  return Math.ceil((JSON.stringify(value ?? '') ?? '').length / 4);
}

/** Output tokens of the scripted answers, by Claude Code session. */
type OutputLedger = Map<string, number>;

function rule(
  name: string,
  match: RegExp,
  output: OutputLedger,
  turns: (context: TurnContext) => Turn,
): Rule {
  return {
    name,
    match,
    turns: (context) => {
      const turn = turns(context);
      const usage = {
        input_tokens: estimateTokens(context.request.body),
        output_tokens: estimateTokens(turn.blocks),
      };
      const session = context.request.headers['x-claude-code-session-id'] ?? '?';
      output.set(session, (output.get(session) ?? 0) + usage.output_tokens);
      return { ...turn, usage };
    },
  };
}

function roleRules(repo: string, kind: LoopKind, output: OutputLedger): Rule[] {
  const rules = [
    rule('doer', /# Doer, iteration \d+:/, output, (context) => {
      const iter = promptMatch(context, /# Doer, iteration (\d+):/, 'iteration');
      if (context.turnIndex === 0)
        return kind === 'hard'
          ? write(join(repo, 'src', `idea-${iter}.txt`), `idea ${iter}\n`)
          : write(join(repo, 'docs', `notes-${iter}.md`), `# Notes ${iter}\n`);
      return text(`Done.\nHYPOTHESIS: a small note for iteration ${iter}`);
    }),
    rule('strategist', /# Strategist, iteration \d+:/, output, (context) => {
      const signalPath = promptMatch(context, /1\. `([^`]+)`: the decision on iteration/, 'signal path');
      if (context.turnIndex === 0) return toolUse('Read', { file_path: signalPath });
      const terminal = /"type":\s*"terminal"/.test(context.toolResults[0]?.text ?? '');
      if (terminal) {
        if (context.turnIndex === 1)
          return bash(promptMatch(context, /^\s*(forge-pack .*--retrospective.*)$/m, 'retrospective stamp'));
        return text('The loop has ended; I stamped the retrospective.');
      }
      if (context.turnIndex === 1) {
        const path = promptMatch(context, /iteration\s+\d+ to `([^`]+)`/, 'directive path');
        return write(path, 'Try one more small note.\n');
      }
      if (context.turnIndex === 2)
        return bash(promptMatch(context, /^\s*(forge-pack .*--iter \d+.*)$/m, 'stamp command'));
      return text('Stamped the next iteration.');
    }),
    rule('retrospective', /# Retrospective:/, output, (context) => {
      const paths = [...context.request.userText.matchAll(/^\d\. `([^`]+)`: /gm)].map((m) => m[1] ?? '');
      const retro = paths.find((p) => p.endsWith('retrospective.md'));
      const rubric = paths.find((p) => p.endsWith('rubric-suggestions.md'));
      if (retro === undefined || rubric === undefined) throw new Error('the retrospective names no files');
      if (context.turnIndex === 0) return write(retro, '# Retrospective\n\nNothing to learn.\n');
      if (context.turnIndex === 1) return write(rubric, '- none\n');
      return text('Retrospective written.');
    }),
  ];
  if (kind === 'soft') {
    rules.push(
      rule('judge', /# Judge, iteration \d+:/, output, (context) => {
        const iter = Number(promptMatch(context, /# Judge, iteration (\d+):/, 'iteration'));
        if (context.turnIndex === 0) return toolUse('Read', { file_path: join(repo, 'docs', 'spec.md') });
        return text(JSON.stringify({ score: 40 + iter, findings: ['still vague'], strengths: ['short'] }));
      }),
    );
  }
  return rules;
}

// ---- counting ----

const ROLE_HEADING = /# (Doer|Judge|Strategist), iteration (\d+):|# (Retrospective):/;

function emptyCount(): RoleCount {
  return { sessions: 0, agentTurns: 0, sideRequests: 0, inputTokensEst: 0, outputTokens: 0 };
}

function add(into: RoleCount, from: RoleCount): void {
  into.sessions += from.sessions;
  into.agentTurns += from.agentTurns;
  into.sideRequests += from.sideRequests;
  into.inputTokensEst += from.inputTokensEst;
  into.outputTokens += from.outputTokens;
}

/** Groups the server's requests by Claude Code session and names each session's role and iteration. */
export function countBySession(
  requests: readonly RecordedRequest[],
  output: ReadonlyMap<string, number> = new Map(),
): { role: string; iter: number | null; count: RoleCount }[] {
  const sessions = new Map<string, { role: string; iter: number | null; count: RoleCount }>();
  const unattributed = emptyCount();
  for (const request of requests) {
    if (!request.path.startsWith('/v1/messages')) continue;
    const id = request.headers['x-claude-code-session-id'];
    let session = id === undefined ? undefined : sessions.get(id);
    if (session === undefined && id !== undefined) {
      session = {
        role: '?',
        iter: null,
        count: { ...emptyCount(), sessions: 1, outputTokens: output.get(id) ?? 0 },
      };
      sessions.set(id, session);
    }
    const count = session?.count ?? unattributed;
    const agentTurn = request.path === '/v1/messages' && request.tools.length > 0;
    if (agentTurn) count.agentTurns += 1;
    else count.sideRequests += 1;
    if (request.path === '/v1/messages') count.inputTokensEst += estimateTokens(request.body);
    if (session !== undefined && session.role === '?' && agentTurn) {
      const heading = ROLE_HEADING.exec(request.userText);
      if (heading !== null) {
        session.role = (heading[1] ?? heading[3] ?? '?').toLowerCase();
        session.iter = heading[2] === undefined ? null : Number(heading[2]);
      }
    }
  }
  const result = [...sessions.values()];
  if (unattributed.agentTurns + unattributed.sideRequests > 0)
    result.push({ role: '?', iter: null, count: unattributed });
  return result;
}

interface EventLine {
  type: string;
  role?: string;
  title?: string;
  input_tokens?: number;
  output_tokens?: number;
}

async function readEvents(workspace: string): Promise<EventLine[]> {
  const dir = join(workspace, 'runs');
  const files = (await readdir(dir)).filter((name) => name.endsWith('.jsonl'));
  const lines: EventLine[] = [];
  for (const file of files) {
    const content = await readFile(join(dir, file), 'utf8');
    for (const line of content.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as EventLine);
  }
  return lines;
}

// ---- running a loop ----

/** A temp repo wired to the real claude and the scripted server: the CLIs under test on PATH, no inherited env. */
export interface ClaudeWorld {
  repo: string;
  env: Record<string, string>;
  run(args: string[], timeoutMs?: number): Promise<Timed>;
}

/** Builds the world in `root` with `files` in its first commit and the embedded store initialised. */
export async function claudeWorld(
  root: string,
  serverUrl: string,
  files: Record<string, string>,
): Promise<ClaudeWorld> {
  const home = join(root, 'home');
  const bin = join(root, 'bin');
  const repo = join(root, 'repo');
  await Promise.all([mkdir(home), mkdir(bin), mkdir(repo)]);
  await symlink(await realpath(CLAUDE_BIN), join(bin, 'claude'));
  for (const [name, script] of [
    ['forge-pack', BIN.forgePack],
    ['ralph-loop', BIN.ralphLoop],
  ] as const) {
    await writeFile(join(bin, name), `#!/bin/sh\nexec '${NODE}' '${script}' "$@"\n`);
    await chmod(join(bin, name), 0o755);
  }
  const env = cleanEnv(home, {
    PATH: [bin, SYSTEM_PATH].join(delimiter),
    TMPDIR: root,
    ANTHROPIC_BASE_URL: serverUrl,
    ANTHROPIC_API_KEY: 'bench-key',
    // Root in CI: Claude Code refuses to skip permissions as root unless told it is sandboxed.
    IS_SANDBOX: '1',
    DISABLE_AUTOUPDATER: '1',
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
    DISABLE_TELEMETRY: '1',
    DISABLE_ERROR_REPORTING: '1',
    DISABLE_BUG_COMMAND: '1',
  });
  const run = async (args: string[], timeoutMs = 120_000) =>
    expectSuccess(await runTimed(NODE, args, { cwd: repo, env, timeoutMs }), args.slice(1, 4).join(' '));
  const git = async (...args: string[]) =>
    expectSuccess(await runTimed('git', args, { cwd: repo, env }), 'git');
  await git('init', '-q', '-b', 'main');
  await git('config', 'commit.gpgSign', 'false');
  const all = { ...files, '.gitignore': '.forge/\n.beads/\n.autoresearch/\n' };
  for (const [path, content] of Object.entries(all)) {
    await mkdir(dirname(join(repo, path)), { recursive: true });
    await writeFile(join(repo, path), content);
  }
  await git('add', '-A');
  await git('commit', '-q', '-m', 'initial');
  await run([BIN.forgePack, '--store', 'embedded', 'beads', 'init']);
  return { repo, env, run };
}

async function runLoop(kind: LoopKind): Promise<LoopRequests> {
  const root = await tempDir(`model-${kind}`);
  const server = await startModelServer({ rules: [] });
  try {
    const files: Record<string, string> =
      kind === 'hard'
        ? {
            'src/value.txt': '11\n',
            'metric/score.mjs':
              "import { readFileSync } from 'node:fs';\nconsole.log(JSON.stringify({ score: Number(readFileSync('src/value.txt', 'utf8')) }));\n",
          }
        : {
            'docs/spec.md': '# Rate limiter\n\nIt limits things, roughly.\n',
            'rubrics/spec.md': 'Score clarity 0-100.\n',
          };
    const { repo, env, run } = await claudeWorld(root.path, server.url, files);
    const output: OutputLedger = new Map();
    for (const item of roleRules(repo, kind, output)) server.addRule(item);
    const metric =
      kind === 'hard'
        ? ['--metric-command', 'node metric/score.mjs', '--score', 'json:score', '--scope', 'src/']
        : ['--rubric', 'rubrics/spec.md', '--artifact', 'docs/spec.md'];
    const created = await run([
      BIN.forgePack,
      '--store',
      'embedded',
      'loop',
      `${kind} bench`,
      '--program',
      'Improve the artifact, one small step per iteration.',
      ...metric,
      '--max-iterations',
      '1',
    ]);
    const epic = created.stdout.trim();
    const loop = await runTimed(
      NODE,
      [
        BIN.ralphLoop,
        '--store',
        'embedded',
        epic,
        '--agent',
        'claude',
        '--timeout',
        '180',
        '--max-attempts',
        '1',
      ],
      { cwd: repo, env, timeoutMs: 600_000 },
    );
    if (loop.exitCode !== 0) {
      throw new Error(
        `ralph-loop (${kind}, real claude) exited ${String(loop.exitCode)}:\n${loop.stderr.slice(-2000)}\n${server.describe()}`,
      );
    }

    const ledger = (await readFile(join(repo, '.autoresearch', 'research-log.jsonl'), 'utf8'))
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { iter: number });
    const iterations = ledger.filter((line) => line.iter >= 1).length;
    const perIteration: Record<string, RoleCount> = {};
    const perLoop: Record<string, RoleCount> = {};
    const total = emptyCount();
    for (const session of countBySession(server.requests, output)) {
      const inLoop = session.iter === null || session.iter === 0;
      const target = inLoop ? perLoop : perIteration;
      const name = session.iter === 0 ? `${session.role}-0` : session.role;
      target[name] ??= emptyCount();
      add(target[name], session.count);
      if (!inLoop) add(total, session.count);
    }
    const events = await readEvents(join(repo, '.autoresearch'));
    const eventTokens = { input: 0, output: 0 };
    for (const event of events) {
      // Per iteration: the soft baseline judge (iteration 0) and the retrospective happen once per loop.
      const once = event.role === 'retrospective' || (event.title ?? '').startsWith('judge-0:');
      if (event.type !== 'attempt_finished' || once) continue;
      eventTokens.input += event.input_tokens ?? 0;
      eventTokens.output += event.output_tokens ?? 0;
    }
    const per = (value: number) => (iterations === 0 ? Number.NaN : value / iterations);
    const divide = (count: RoleCount): RoleCount => ({
      sessions: per(count.sessions),
      agentTurns: per(count.agentTurns),
      sideRequests: per(count.sideRequests),
      inputTokensEst: per(count.inputTokensEst),
      outputTokens: per(count.outputTokens),
    });
    return {
      kind,
      iterations,
      perIteration: Object.fromEntries(Object.entries(perIteration).map(([role, c]) => [role, divide(c)])),
      perIterationTotal: divide(total),
      perLoop,
      eventTokensPerIteration: { input: per(eventTokens.input), output: per(eventTokens.output) },
      prompts: promptSizes(server.requests),
      wallMs: loop.ms,
    };
  } finally {
    await server.close();
    await root.remove();
  }
}

export async function measureModelRequests(kinds: readonly LoopKind[]): Promise<ModelRequests> {
  if (!existsSync(CLAUDE_BIN)) {
    return { available: false, reason: `the claude binary is not installed (${CLAUDE_BIN}); run npm ci` };
  }
  const version = await runTimed(CLAUDE_BIN, ['--version'], {
    cwd: ROOT,
    env: cleanEnv(ROOT, { DISABLE_AUTOUPDATER: '1' }),
    timeoutMs: 60_000,
  });
  if (version.exitCode !== 0) {
    return { available: false, reason: `claude --version failed: ${version.stderr.trim().slice(0, 200)}` };
  }
  const loops: LoopRequests[] = [];
  for (const kind of kinds) loops.push(await runLoop(kind));
  return { available: true, claudeVersion: version.stdout.trim(), loops };
}
