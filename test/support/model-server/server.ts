// A scripted model API on 127.0.0.1 (Anthropic Messages for Claude Code and opencode, OpenAI Responses for
// Codex, Gemini generateContent for Gemini CLI):
// rules pick each answer, faults answer errors on demand, every request is recorded.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describeRequest, redactHeaders, summarizeRequest, type RecordedRequest } from './requests.js';
import { matches, text, turnFor, type Matcher, type Rule, type Turn } from './turns.js';
import { openAiErrorBody, renderResponse, renderResponseEvents } from './responses-wire.js';
import { errorBody, renderEvents, renderMessage, type ApiErrorType } from './messages-wire.js';
import { geminiErrorBody, renderGeminiEvents, renderGeminiResponse } from './gemini-wire.js';

/** Gemini's `/v1beta/models/<model>:<method>`; the model travels in the path, not the body. */
const GEMINI_PATH =
  /^\/v1(?:beta|alpha)?\/models\/([^/:]+):(generateContent|streamGenerateContent|countTokens)$/;

type Api = 'messages' | 'responses' | 'gemini';

export type FaultStatus = 401 | 429 | 500 | 529;

/** An error answer served instead of a turn, `times` times (or always), to requests it matches. */
export interface Fault {
  status: FaultStatus;
  times: number | 'always';
  /** Only requests whose prompt matches (default: every agent turn, i.e. a request that offers tools). */
  match?: Matcher;
  /** Sent as `retry-after` (seconds) on 429 and 529. */
  retryAfterSeconds?: number;
  message?: string;
}

export interface ModelServerOptions {
  rules?: Rule[];
  /** Closes itself after this long without a request (default 10 minutes), so a leak ends on its own. */
  idleTimeoutMs?: number;
  /** Model named in answers when the request names none. */
  model?: string;
}

export interface ModelServer {
  /** `http://127.0.0.1:<port>`: ANTHROPIC_BASE_URL for Claude Code; `<url>/v1` is Codex's base_url. */
  readonly url: string;
  /** Every request, in arrival order. */
  readonly requests: readonly RecordedRequest[];
  /** Messages (Claude) and Responses (Codex) requests that offer tools: the agent's own turns. */
  agentTurns(): RecordedRequest[];
  /** Agent turns answered by the named rule. */
  turnsOf(ruleName: string): RecordedRequest[];
  /** Session ids (Claude Code's or Codex's header) of the runs the rule answered: one per agent process. */
  sessionsOf(ruleName: string): string[];
  addRule(rule: Rule): void;
  fail(fault: Fault): void;
  /** The last few requests, for assertion messages. */
  describe(count?: number): string;
  close(): Promise<void>;
}

const FAULT_ERRORS: Record<FaultStatus, { type: ApiErrorType; message: string }> = {
  401: { type: 'authentication_error', message: 'invalid x-api-key' },
  429: {
    type: 'rate_limit_error',
    message: 'This request would exceed the rate limit for your organization of 50 requests per minute.',
  },
  500: { type: 'api_error', message: 'Internal server error' },
  529: { type: 'overloaded_error', message: 'Overloaded' },
};

const DEFAULT_IDLE_MS = 10 * 60_000;

export async function startModelServer(options: ModelServerOptions = {}): Promise<ModelServer> {
  const rules: Rule[] = [...(options.rules ?? [])];
  const faults: (Fault & { served: number })[] = [];
  const requests: RecordedRequest[] = [];
  let messageSeq = 0;
  let idleTimer: NodeJS.Timeout | undefined;

  const server = createServer((req, res) => {
    armIdleTimer();
    void handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(errorBody('api_error', `scripted server failed: ${String(error)}`));
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    const method = req.method ?? 'GET';
    const recorded = describeRequest(
      requests.length + 1,
      method,
      path,
      redactHeaders(req.headers),
      parseJson(raw),
    );
    requests.push(recorded);

    const gemini = GEMINI_PATH.exec(path);
    if (method === 'POST' && gemini !== null) {
      recorded.model = decodeURIComponent(gemini[1] ?? '');
      if (gemini[2] === 'countTokens') {
        return sendJson(res, recorded, 200, { totalTokens: Math.ceil((raw.length || 1) / 4) });
      }
      recorded.stream = gemini[2] === 'streamGenerateContent';
      return answerTurn(recorded, res, 'gemini');
    }
    if (method === 'POST' && path === '/v1/messages') return answerTurn(recorded, res, 'messages');
    if (method === 'POST' && path === '/v1/responses') return answerTurn(recorded, res, 'responses');
    // Codex tries a WebSocket upgrade of /v1/responses first; the harness turns that off, refuse it anyway.
    if (path === '/v1/responses')
      return sendJson(res, recorded, 404, { error: { message: 'no websockets here' } });
    if (method === 'POST' && path === '/v1/messages/count_tokens') {
      // Deterministic: a quarter of the characters, as a rough tokenizer would.
      return sendJson(res, recorded, 200, {
        input_tokens: Math.ceil(JSON.stringify(recorded.body ?? '').length / 4),
      });
    }
    if (path === '/v1/models') {
      return sendJson(res, recorded, 200, { data: [], has_more: false, first_id: null, last_id: null });
    }
    // Start-up probes (feature flags, metrics, account lookups): a harmless empty answer.
    return sendJson(res, recorded, 200, {});
  }

  function answerTurn(request: RecordedRequest, res: ServerResponse, api: Api): void {
    const fault = faults.find(
      (candidate) =>
        (candidate.times === 'always' || candidate.served < candidate.times) &&
        (candidate.match === undefined ? request.tools.length > 0 : matches(candidate.match, request)),
    );
    if (fault !== undefined) {
      fault.served += 1;
      const error = FAULT_ERRORS[fault.status];
      const headers: Record<string, string> = {
        'content-type': 'application/json',
        'request-id': `req_fault_${request.seq}`,
      };
      if (fault.retryAfterSeconds !== undefined) headers['retry-after'] = String(fault.retryAfterSeconds);
      // Claude Code retries what the API marks retryable; say so explicitly for the statuses that are.
      if (fault.status !== 401) headers['x-should-retry'] = 'true';
      request.response = { status: fault.status, fault: `${fault.status} ${error.type}` };
      res.writeHead(fault.status, headers);
      const message = fault.message ?? error.message;
      res.end(
        api === 'messages'
          ? errorBody(error.type, message)
          : api === 'gemini'
            ? geminiErrorBody(fault.status, message)
            : openAiErrorBody(fault.status, message),
      );
      return;
    }

    const agentTurn = request.tools.length > 0;
    const rule = agentTurn ? rules.find((candidate) => matches(candidate.match, request)) : undefined;
    const turnIndex = request.assistantTurns;
    let scriptError: string | undefined;
    let turn: Turn;
    try {
      turn = rule
        ? turnFor(rule, { request, turnIndex, toolResults: request.toolResults })
        : agentTurn
          ? text('No scripted rule matched this request.')
          : text('Scripted answer.');
    } catch (error) {
      // A script that cannot decide ends the agent's run with the reason, and the test can say so.
      scriptError = error instanceof Error ? error.message : String(error);
      turn = text(`The scripted rule "${rule?.name ?? '?'}" failed: ${scriptError}`);
    }
    messageSeq += 1;
    request.response = {
      status: 200,
      ...(rule ? { rule: rule.name } : {}),
      turnIndex,
      ...(scriptError === undefined ? {} : { scriptError }),
    };
    const model = request.model ?? options.model ?? 'claude-sonnet-4-5';
    if (api === 'gemini') {
      const response = renderGeminiResponse(turn, model, messageSeq);
      if (!request.stream) sendRaw(res, 200, 'application/json', JSON.stringify(response));
      else
        sendRaw(res, 200, 'text/event-stream', renderGeminiEvents(response), { 'cache-control': 'no-cache' });
      return;
    }
    if (api === 'responses') {
      const response = renderResponse(turn, model, messageSeq);
      if (!request.stream) sendRaw(res, 200, 'application/json', JSON.stringify(response));
      else
        sendRaw(res, 200, 'text/event-stream', renderResponseEvents(response), {
          'cache-control': 'no-cache',
        });
      return;
    }
    const message = renderMessage(turn, model, messageSeq);
    if (!request.stream) sendRaw(res, 200, 'application/json', JSON.stringify(message));
    else sendRaw(res, 200, 'text/event-stream', renderEvents(message), { 'cache-control': 'no-cache' });
  }

  function sendJson(res: ServerResponse, request: RecordedRequest, status: number, value: unknown): void {
    request.response = { status };
    sendRaw(res, status, 'application/json', JSON.stringify(value));
  }

  function armIdleTimer(): void {
    if (idleTimer !== undefined) clearTimeout(idleTimer);
    idleTimer = setTimeout(() => void close(), options.idleTimeoutMs ?? DEFAULT_IDLE_MS);
    idleTimer.unref();
  }

  let closing: Promise<void> | undefined;
  function close(): Promise<void> {
    if (idleTimer !== undefined) clearTimeout(idleTimer);
    closing ??= new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
    return closing;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  // A server a test forgot to close must not keep the test process alive.
  server.unref();
  armIdleTimer();
  const { port } = server.address() as AddressInfo;

  const isTurnPath = (path: string) =>
    path === '/v1/messages' ||
    path === '/v1/responses' ||
    (GEMINI_PATH.test(path) && !path.endsWith(':countTokens'));
  const agentTurns = () =>
    requests.filter(
      (request) => request.method === 'POST' && isTurnPath(request.path) && request.tools.length > 0,
    );
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    agentTurns,
    turnsOf: (name) => agentTurns().filter((request) => request.response?.rule === name),
    addRule: (rule) => rules.push(rule),
    fail: (fault) => faults.push({ ...fault, served: 0 }),
    sessionsOf: (name) => [
      ...new Set(
        agentTurns()
          .filter((request) => request.response?.rule === name)
          .map(
            (request) =>
              request.headers['x-claude-code-session-id'] ??
              request.headers['session-id'] ??
              `#${request.seq}`,
          ),
      ),
    ],
    describe(count = 3) {
      const lines: string[] = [];
      // Script errors and unmatched turns anywhere in the run are usually the first thing to know.
      for (const request of agentTurns()) {
        if (request.response?.scriptError !== undefined)
          lines.push(
            `#${request.seq} SCRIPT ERROR (${request.response.rule}): ${request.response.scriptError}`,
          );
        else if (request.response?.status === 200 && request.response.rule === undefined)
          lines.push(
            `#${request.seq} matched no rule: ${request.userText.replace(/\s+/g, ' ').slice(0, 300)}`,
          );
      }
      const last = requests.filter((request) => isTurnPath(request.path)).slice(-count);
      if (last.length === 0) {
        lines.push(`model server ${port}: no Messages request recorded (${requests.length} other).`);
        return lines.join('\n');
      }
      lines.push(
        `model server ${port}: last ${last.length} Messages request(s) of ${requests.length} recorded:`,
      );
      return lines.concat(last.map((request) => summarizeRequest(request))).join('\n');
    },
    close,
  };
}

function sendRaw(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': contentType,
    'request-id': `req_scripted_${Date.now()}`,
    ...extra,
  });
  res.end(body);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseJson(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw) as unknown;
  } catch {
    return raw;
  }
}
