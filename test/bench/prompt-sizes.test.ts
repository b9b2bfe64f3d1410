// Figure 10's counting: which request is a role's first turn, which text block is Forge's prompt.
import { describe, expect, it } from 'vitest';
import { promptSizes, promptTokenRows, textTokens } from '../../scripts/bench/prompt-sizes.js';
import type { RecordedRequest } from '../support/model-server/index.js';

let seq = 0;

/** A Messages request as the server records it: the first user message holds `blocks`. */
function request(
  blocks: string[],
  options: { assistantTurns?: number; tools?: string[]; system?: string } = {},
): RecordedRequest {
  const tools = options.tools ?? ['Bash', 'Read'];
  const system = options.system ?? 'You are Claude Code.';
  const body = {
    model: 'claude-test',
    system,
    tools: tools.map((name) => ({ name, description: `the ${name} tool`, input_schema: {} })),
    messages: [{ role: 'user', content: blocks.map((text) => ({ type: 'text', text })) }],
  };
  seq += 1;
  return {
    seq,
    method: 'POST',
    path: '/v1/messages',
    headers: {},
    body,
    model: 'claude-test',
    stream: true,
    system,
    userText: blocks.join('\n'),
    prompt: `${system}\n${blocks.join('\n')}`,
    tools,
    assistantTurns: options.assistantTurns ?? 0,
    toolResults: [],
    latestToolResults: [],
  };
}

const footer = (bead: string) =>
  `\n\n---\nBead ${bead} of epic ep-1. Do the work it describes, then finish; the runner closes the bead.\n`;
const doer = `# Doer, iteration 1: speed\n\nMake one change.${footer('ep-1.2')}`;
const judge = (iter: number) => `# Judge, iteration ${iter}: speed\n\nScore it.${footer(`ep-1.j${iter}`)}`;
const bead = `# Write the file\n\nCreate it.${footer('ep-1.1')}`;

describe('prompt sizes per role (bench figure 10)', () => {
  it('counts the Forge prompt block apart from what Claude Code adds around it', () => {
    const reminder = '<system-reminder>Context Claude Code adds.</system-reminder>';
    const [size, ...rest] = promptSizes([request([reminder, doer], { system: 'S'.repeat(400) })]);
    expect(rest).toEqual([]);
    expect(size).toMatchObject({
      role: 'doer',
      promptTokens: textTokens(doer),
      systemTokens: 100,
      toolCount: 2,
    });
    expect(size!.userExtraTokens).toBe(textTokens(`${reminder}\n${doer}`) - textTokens(doer));
    expect(size!.requestTokens).toBeGreaterThan(size!.promptTokens + size!.systemTokens);
  });

  it("takes each role's first turn only, and a later iteration over the baseline judge", () => {
    const sizes = promptSizes([
      request([judge(0)], { tools: ['Read'] }),
      request([doer]),
      request([`${doer}\nand a longer second turn`], { assistantTurns: 1 }),
      request([judge(1), 'padding '.repeat(50)], { tools: ['Read'] }),
      request([bead]),
      // Claude Code's own side requests (no tools) and requests without the footer are not prompts.
      request([`${bead} title request`], { tools: [] }),
      request(['# Doer, iteration 2: speed, with no footer']),
    ]);
    expect(sizes.map((s) => s.role)).toEqual(['judge', 'doer', 'bead']);
    expect(sizes[0]!.userExtraTokens).toBeGreaterThan(0);
    expect(sizes[1]!.promptTokens).toBe(textTokens(doer));
  });

  it('renders a row per role with its budget and verdict', () => {
    const rows = promptTokenRows({
      claudeVersion: '2.1.330 (Claude Code)',
      prompts: [
        {
          role: 'bead',
          promptTokens: 59,
          userExtraTokens: 0,
          systemTokens: 1,
          toolsTokens: 1,
          requestTokens: 70,
          toolCount: 1,
        },
        {
          role: 'doer',
          promptTokens: 9000,
          userExtraTokens: 0,
          systemTokens: 1,
          toolsTokens: 1,
          requestTokens: 9100,
          toolCount: 1,
        },
      ],
      hardIteration: { input: 1234, output: 56 },
    });
    expect(rows.map((row) => row.verdict)).toEqual(['meets', 'misses (9,000)', 'info']);
    expect(rows[2]!.value).toBe('1,234 / 56');
  });
});
