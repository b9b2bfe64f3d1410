// The Codex adapter: `codex exec --json … -`, prompt on stdin, outcome from the JSONL events.
import { z } from 'zod';
import type { Command } from '../infra/process.js';
import { formatDuration, formatResetAt, lastLine, notify, parseStreamEvent } from './agent-process.js';
import type { AgentProcessResult } from './agent-process.js';
import { howItEnded, runAdapter, startVerdict, stopForAuth } from './adapter-run.js';
import type { Verdict } from './adapter-run.js';
import { apiErrorKind, parseResetTime } from './limits.js';
import type {
  AgentActivity,
  AgentMode,
  AgentRequest,
  AgentResult,
  AgentRunner,
  AgentRunnerOptions,
  AgentSpec,
  PermissionDenial,
  TokenUsage,
} from './types.js';

/** Codex retries network errors forever; without a timeout from the runner it gets this one. */
export const CODEX_DEFAULT_TIMEOUT_MS = 60 * 60 * 1000;

export function codexCommand(mode: AgentMode, cwd: string, model: string | undefined): Command {
  // `--disable memories` (0.169; off by default, a user's config can turn it on): otherwise each run
  // starts a consolidation of earlier runs into ~/.codex/memories_v2/memory_summary.md, which is put at
  // the head of every later session. Every run starts fresh.
  const args = ['exec', '--json', '--skip-git-repo-check', '--disable', 'memories', '-C', cwd];
  if (model !== undefined) args.push('-m', model);
  if (mode === 'full') args.push('--dangerously-bypass-approvals-and-sandbox');
  // A judge's session (`--ephemeral`, codex exec since early 2026): kept, it would hold what it judged in
  // ~/.codex/sessions for a copy that is gone. A doer's session is saved as usual.
  else args.push('-s', 'read-only', '-c', 'approval_policy=never', '--ephemeral');
  args.push('-');
  return { file: 'codex', args };
}

export function createCodexRunner(spec: AgentSpec, options: AgentRunnerOptions = {}): AgentRunner {
  return { name: spec.text, run: (request) => runCodex(spec, options, request) };
}

async function runCodex(
  spec: AgentSpec,
  options: AgentRunnerOptions,
  request: AgentRequest,
): Promise<AgentResult> {
  const model = request.model ?? spec.model;
  const timeoutMs = request.timeoutMs || (options.codexDefaultTimeoutMs ?? CODEX_DEFAULT_TIMEOUT_MS);
  const stream = new CodexStream(request.mode === 'read-only', (event) => notify(request, event));
  return runAdapter({
    request,
    runner: options,
    command: codexCommand(request.mode, request.cwd, model),
    env: request.env,
    timeoutMs,
    onLine: (line, stop) => {
      if (stream.push(line) === 'auth') stopForAuth(request, stop);
    },
    classify: (child, now) => classifyCodexRun({ stream, child, mode: request.mode, model, timeoutMs, now }),
  });
}

const CodexItemSchema = z.object({
  type: z.string(),
  text: z.string().optional(),
  command: z.string().optional(),
  exit_code: z.number().nullable().optional(),
  status: z.string().optional(),
  aggregated_output: z.string().optional(),
  changes: z.array(z.object({ path: z.string() })).optional(),
  server: z.string().optional(),
  tool: z.string().optional(),
  error: z.object({ message: z.string() }).nullable().optional(),
});
const CodexEventSchema = z.object({
  type: z.string(),
  item: CodexItemSchema.optional(),
  usage: z
    .object({
      input_tokens: z.number().optional(),
      cached_input_tokens: z.number().optional(),
      output_tokens: z.number().optional(),
    })
    .optional(),
  error: z.object({ message: z.string() }).optional(),
  message: z.string().optional(),
});
type CodexItem = z.infer<typeof CodexItemSchema>;

/** What a `codex exec --json` run said, accumulated line by line. */
export class CodexStream {
  finalText = '';
  turnCompleted = false;
  turnFailed: string | undefined;
  /** The last `error` event that was not a reconnect notice. */
  lastError: string | undefined;
  /** The last "Reconnecting… (cause)" notice: Codex retrying by itself. */
  lastRetry: string | undefined;
  readonly usage: TokenUsage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
  readonly toolErrors: string[] = [];
  readonly permissionDenials: PermissionDenial[] = [];
  readonly readOnlyAttempts: string[] = [];

  constructor(
    private readonly readOnly: boolean,
    private readonly onActivity: (event: AgentActivity) => void,
  ) {}

  /** Takes one stdout line; returns `auth` when the run should be stopped at once. */
  push(line: string): 'auth' | undefined {
    const event = parseStreamEvent(line, CodexEventSchema);
    if (event === undefined) return undefined;
    switch (event.type) {
      case 'item.started':
        if (event.item?.type === 'command_execution' && event.item.command !== undefined) {
          this.onActivity({ type: 'tool', name: 'shell', detail: event.item.command.slice(0, 120) });
        }
        return undefined;
      case 'item.completed':
        if (event.item !== undefined) this.onItem(event.item);
        return undefined;
      case 'turn.completed':
        this.turnCompleted = true;
        this.usage.inputTokens += Math.max(
          0,
          (event.usage?.input_tokens ?? 0) - (event.usage?.cached_input_tokens ?? 0),
        );
        this.usage.cacheReadTokens += event.usage?.cached_input_tokens ?? 0;
        this.usage.outputTokens += event.usage?.output_tokens ?? 0;
        return undefined;
      case 'turn.failed':
        this.turnFailed = event.error?.message ?? 'turn failed';
        return undefined;
      case 'error':
        return this.onError(event.message ?? event.error?.message ?? 'error');
      default:
        return undefined;
    }
  }

  private onItem(item: CodexItem): void {
    if (item.type === 'agent_message' && item.text !== undefined) {
      this.finalText = item.text;
      this.onActivity({ type: 'text', text: item.text.slice(0, 500) });
    } else if (item.type === 'command_execution') {
      const command = item.command ?? '';
      if (item.status === 'declined') this.permissionDenials.push({ tool: 'shell', input: { command } });
      else if (item.status === 'failed') {
        const output = lastLine(item.aggregated_output ?? '', 160);
        this.toolErrors.push(
          `shell: ${command} (exit ${item.exit_code ?? '?'})${output ? `: ${output}` : ''}`,
        );
      }
    } else if (item.type === 'file_change') {
      const paths = (item.changes ?? []).map((change) => change.path).join(', ');
      this.onActivity({ type: 'tool', name: 'edit', detail: paths });
      if (item.status === 'failed') this.toolErrors.push(`edit: ${paths}`);
      if (this.readOnly) this.readOnlyAttempts.push(`edit ${paths}`);
    } else if (item.type === 'mcp_tool_call' && (item.status === 'failed' || item.error)) {
      this.toolErrors.push(
        `${item.server ?? 'mcp'}.${item.tool ?? 'tool'}: ${item.error?.message ?? 'failed'}`,
      );
    }
  }

  private onError(message: string): 'auth' | undefined {
    if (/^Reconnecting/i.test(message)) {
      this.lastRetry = message;
      const status = /\b([45]\d\d)\b/.exec(message)?.[1];
      this.onActivity({ type: 'retry', error: message, ...(status ? { status: Number(status) } : {}) });
    } else {
      this.lastError = message;
    }
    return codexErrorOutcome(message) === 'auth' ? 'auth' : undefined;
  }
}

/** Codex reports API failures only as text; this reads the ones it can recognise. */
export const codexErrorOutcome = apiErrorKind;

export interface CodexRunFacts {
  stream: CodexStream;
  child: AgentProcessResult;
  mode: AgentMode;
  model: string | undefined;
  timeoutMs: number;
  now: number;
}

export function classifyCodexRun(facts: CodexRunFacts): AgentResult {
  const { stream, child, mode } = facts;
  return {
    ...decide(facts),
    finalText: stream.finalText,
    exitCode: child.exitCode ?? null,
    durationMs: child.durationMs,
    usage: { ...stream.usage },
    permissionDenials: [...stream.permissionDenials],
    toolErrors: [...stream.toolErrors],
    agent: 'codex',
    model: facts.model,
    scripted: false,
    ...(mode === 'read-only'
      ? { readOnly: { enforcement: 'sandbox', attempts: [...stream.readOnlyAttempts] } }
      : {}),
  };
}

function decide(facts: CodexRunFacts): Verdict {
  const { stream, child, now } = facts;
  const started = startVerdict('Codex', 'codex', child);
  if (started !== undefined) return started;
  const failure = stream.turnFailed ?? stream.lastError;
  if (child.stoppedFor === 'auth') {
    return {
      outcome: 'auth',
      message: `Codex could not authenticate (${lastLine(failure ?? stream.lastRetry ?? '401')}), so Forge stopped it; check OPENAI_API_KEY or run \`codex login\`.`,
    };
  }
  if (child.timedOut) {
    const retrying = stream.lastRetry ?? failure;
    const kind = retrying === undefined ? undefined : codexErrorOutcome(retrying);
    if (kind === 'rate_limited' || kind === 'overloaded') {
      return {
        outcome: kind,
        message: `Codex was still retrying (${lastLine(retrying ?? '')}) when its ${formatDuration(facts.timeoutMs)} timeout stopped it.`,
      };
    }
    return {
      outcome: 'timeout',
      message: `Codex did not finish within ${formatDuration(facts.timeoutMs)}; it was stopped with everything it started.`,
    };
  }

  if (child.exitCode === 0 && stream.turnCompleted && stream.turnFailed === undefined) {
    return { outcome: 'ok', message: 'Codex finished.' };
  }
  const text = failure ?? lastLine(child.stderr);
  const detail = lastLine(text);
  switch (codexErrorOutcome(text)) {
    case 'auth':
      return {
        outcome: 'auth',
        message: `Codex could not authenticate (${detail}); check OPENAI_API_KEY or run \`codex login\`.`,
      };
    case 'rate_limited': {
      const resetAt = parseResetTime(text, now);
      const until = resetAt === undefined ? '' : `; it resets at ${formatResetAt(resetAt)}`;
      return {
        outcome: 'rate_limited',
        message: `Codex was rate-limited (${detail})${until}.`,
        resetAt,
        retryAfterMs: resetAt === undefined ? undefined : Math.max(0, resetAt - now),
      };
    }
    case 'overloaded':
      return { outcome: 'overloaded', message: `The Codex API was overloaded (${detail}).` };
    default: {
      const how = howItEnded(child);
      const what = stream.turnCompleted || stream.turnFailed !== undefined ? '' : ' without finishing a turn';
      return { outcome: 'error', message: `Codex ${how}${what}${detail ? `: ${detail}` : ''}.` };
    }
  }
}
