// Figure 10, counting: the tokens of each role's prompt as Forge renders it, beside what Claude Code
// adds to the same request (its system prompt and tool definitions), read off the scripted server's log.
import type { RecordedRequest } from '../../test/support/model-server/index.js';
import { num, type Row } from './report.js';

/**
 * The tokenizer estimate every figure here uses: 4 characters per token (Anthropic's rule of thumb for
 * English text; the scripted server has no tokenizer, and a real count would need the network).
 */
export function textTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

export interface PromptSize {
  /** doer, judge, strategist, retrospective, or bead (a plain bead of an epic). */
  role: string;
  /** The prompt Forge sends: the one user text block that ends with the runner's footer. */
  promptTokens: number;
  /** The rest of the first user message: what Claude Code adds around the prompt (reminders, context). */
  userExtraTokens: number;
  systemTokens: number;
  toolsTokens: number;
  /** The whole first request body (system, tools, messages, settings), JSON as sent. */
  requestTokens: number;
  toolCount: number;
}

const ROLE_HEADING = /^# (Doer|Judge|Strategist), iteration (\d+):|^# (Retrospective):/m;
/** beadPrompt (src/loop/agent-executor.ts) ends every prompt with this footer line. */
const FOOTER = /\n---\nBead \S+ of epic \S+\./;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The text blocks of the first user message of a Messages request body. */
function firstUserTexts(body: unknown): string[] {
  if (!isRecord(body) || !Array.isArray(body.messages)) return [];
  const first = body.messages.find((message) => isRecord(message) && message.role === 'user');
  if (!isRecord(first)) return [];
  if (typeof first.content === 'string') return [first.content];
  if (!Array.isArray(first.content)) return [];
  return first.content.flatMap((block) =>
    isRecord(block) && block.type === 'text' && typeof block.text === 'string' ? [block.text] : [],
  );
}

/**
 * One row per role: the first agent turn (a Messages request offering tools, with no assistant turn yet)
 * whose user message holds a Forge prompt. Iteration 0 (the soft baseline judge) counts only when no
 * later iteration of the role was seen.
 */
export function promptSizes(requests: readonly RecordedRequest[]): PromptSize[] {
  const found = new Map<string, { iter: number; size: PromptSize }>();
  for (const request of requests) {
    if (request.path !== '/v1/messages' || request.tools.length === 0 || request.assistantTurns > 0) continue;
    const texts = firstUserTexts(request.body);
    const prompt = texts.find((text) => FOOTER.test(text));
    if (prompt === undefined) continue;
    const heading = ROLE_HEADING.exec(prompt);
    const role = heading === null ? 'bead' : (heading[1] ?? heading[3] ?? 'bead').toLowerCase();
    const iter = heading?.[2] === undefined ? 1 : Number(heading[2]);
    const known = found.get(role);
    if (known !== undefined && (known.iter >= 1 || iter === 0)) continue;
    const body = isRecord(request.body) ? request.body : {};
    const all = texts.join('\n');
    found.set(role, {
      iter,
      size: {
        role,
        promptTokens: textTokens(prompt),
        userExtraTokens: Math.max(0, textTokens(all) - textTokens(prompt)),
        systemTokens: textTokens(request.system),
        toolsTokens: textTokens(JSON.stringify(body.tools ?? [])),
        requestTokens: textTokens(JSON.stringify(request.body ?? {})),
        toolCount: request.tools.length,
      },
    });
  }
  return [...found.values()].map((entry) => entry.size);
}

export interface PromptTokens {
  claudeVersion: string;
  prompts: PromptSize[];
  /** Per hard-metric iteration, as the runner's events recorded them (the scripted server's usage). */
  hardIteration: { input: number; output: number } | undefined;
}

/**
 * Each role's prompt budget in the bench's fixture loops: what its template renders to today (after
 * the cut of #14), with a little room, so a prompt that grows shows up as a miss. The doer's grew by
 * about 55 tokens (353 before) for the two rules the runner holds it to as tamper, the tests and the
 * checkers: told, an honest doer does not lose its iteration to them.
 */
export const PROMPT_BUDGETS: Readonly<Record<string, number>> = {
  doer: 420,
  judge: 260,
  strategist: 680,
  retrospective: 520,
  bead: 60,
};

const int = (value: number) => Math.round(value).toLocaleString('en-US');

export function promptTokenRows(p: PromptTokens | { skipped: string }): Row[] {
  if ('skipped' in p)
    return [
      { figure: '10', measure: 'prompt tokens per role', value: p.skipped, budget: '', verdict: 'n/a' },
    ];
  const rows: Row[] = p.prompts.map((size, i) => {
    const budget = PROMPT_BUDGETS[size.role];
    return {
      figure: i === 0 ? '10' : '',
      measure: `${size.role} prompt, tokens (est. 4 chars/token); whole first request: system + ${size.toolCount} tools + messages`,
      value: `${int(size.promptTokens)} of ${int(size.requestTokens)} (system ${int(size.systemTokens)}, tools ${int(size.toolsTokens)})`,
      budget: budget === undefined ? '' : `≤${budget}`,
      verdict:
        budget === undefined
          ? 'info'
          : size.promptTokens <= budget
            ? 'meets'
            : `misses (${int(size.promptTokens)})`,
    };
  });
  if (p.hardIteration !== undefined) {
    rows.push({
      figure: '',
      measure: `tokens per hard-metric iteration as the runner records them: input / output (claude ${p.claudeVersion.split(' ')[0] ?? ''})`,
      value: `${int(p.hardIteration.input)} / ${num(p.hardIteration.output, 0)}`,
      budget: '',
      verdict: 'info',
    });
  }
  return rows;
}
