// The scripted Messages API server on its own: wire format, turn selection, faults, recording, self-close.
import { connect } from 'node:net';
import { describe, expect, it, onTestFinished } from 'vitest';
import { bash, execCommand, startModelServer, text, write, type ModelServer } from './index.js';

async function serve(options: Parameters<typeof startModelServer>[0] = {}): Promise<ModelServer> {
  const server = await startModelServer(options);
  onTestFinished(() => server.close());
  return server;
}

const TOOLS = [{ name: 'Write', description: 'w', input_schema: { type: 'object' } }];

function messagesBody(messages: unknown[], extra: Record<string, unknown> = {}) {
  return JSON.stringify({ model: 'claude-test-1', max_tokens: 100, tools: TOOLS, messages, ...extra });
}

async function post(server: ModelServer, path: string, body: string, headers: Record<string, string> = {}) {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': 'sk-secret', ...headers },
    body,
  });
}

/** Parses an SSE body into [event, data] pairs. */
function parseSse(raw: string): { event: string; data: Record<string, unknown> }[] {
  return raw
    .split('\n\n')
    .filter((chunk) => chunk.trim() !== '')
    .map((chunk) => {
      const event = /^event: (.*)$/m.exec(chunk)?.[1] ?? '';
      const data = JSON.parse(/^data: (.*)$/m.exec(chunk)?.[1] ?? '{}') as Record<string, unknown>;
      return { event, data };
    });
}

const user = (content: unknown) => ({ role: 'user', content });
const assistant = (content: unknown) => ({ role: 'assistant', content });

describe('scripted model server', () => {
  it('answers the rule whose marker the prompt contains, turn by turn, with deterministic usage', async () => {
    const server = await serve({
      rules: [
        { name: 'other', match: 'marker:other', turns: [text('wrong rule')] },
        { name: 'doer', match: 'marker:doer', turns: [write('/tmp/x', 'hi'), text('done')] },
      ],
    });
    const first = (await (
      await post(server, '/v1/messages', messagesBody([user('do marker:doer')]))
    ).json()) as {
      content: { type: string; id: string; name: string; input: unknown }[];
      stop_reason: string;
      usage: { input_tokens: number; output_tokens: number };
    };
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content[0]).toMatchObject({
      type: 'tool_use',
      name: 'Write',
      input: { file_path: '/tmp/x' },
    });
    expect(first.usage).toEqual({ input_tokens: 1000, output_tokens: 200 });

    const toolId = first.content[0]!.id;
    const second = (await (
      await post(
        server,
        '/v1/messages',
        messagesBody([
          user('do marker:doer'),
          assistant(first.content),
          user([{ type: 'tool_result', tool_use_id: toolId, content: 'written' }]),
        ]),
      )
    ).json()) as { content: { text: string }[]; stop_reason: string };
    expect(second).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'done' }] });

    expect(server.turnsOf('doer').map((r) => r.response?.turnIndex)).toEqual([0, 1]);
    const recorded = server.turnsOf('doer')[1]!;
    expect(recorded.latestToolResults).toEqual([{ toolUseId: toolId, text: 'written', isError: false }]);
    expect(recorded.headers['x-api-key']).toBe('<redacted>');
    expect(JSON.stringify(server.requests)).not.toContain('sk-secret');
  });

  it('streams text and tool use as the Messages API does, input as partial JSON that joins back', async () => {
    const command = 'git commit -m "a \\"quoted\\" message that is long enough to need several chunks"';
    const server = await serve({
      rules: [
        {
          name: 'r',
          match: 'go',
          turns: [{ blocks: [...text('Let me commit.').blocks, ...bash(command).blocks] }],
        },
      ],
    });
    const response = await post(server, '/v1/messages', messagesBody([user('go')], { stream: true }));
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = parseSse(await response.text());
    const names = events.map((e) => e.event);
    expect(names[0]).toBe('message_start');
    expect(names.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(names.filter((n) => n === 'content_block_start')).toHaveLength(2);
    expect(names.filter((n) => n === 'content_block_stop')).toHaveLength(2);

    const deltas = events
      .filter((e) => e.event === 'content_block_delta')
      .map((e) => e.data.delta as Record<string, string>);
    const textOut = deltas
      .filter((d) => d.type === 'text_delta')
      .map((d) => d.text)
      .join('');
    const json = deltas.filter((d) => d.type === 'input_json_delta').map((d) => d.partial_json);
    expect(textOut).toBe('Let me commit.');
    expect(json.length).toBeGreaterThan(1);
    expect(JSON.parse(json.join(''))).toEqual({ command, description: 'run a command' });
    expect(events.at(-2)!.data).toMatchObject({
      delta: { stop_reason: 'tool_use' },
      usage: { output_tokens: 200 },
    });
  });

  it('serves faults with the real error bodies: 429 twice with retry-after, then the scripted turn', async () => {
    const server = await serve({ rules: [{ name: 'r', match: 'x', turns: [text('ok')] }] });
    server.fail({ status: 429, times: 2, retryAfterSeconds: 3 });
    const statuses: number[] = [];
    for (let i = 0; i < 3; i += 1) {
      const response = await post(server, '/v1/messages', messagesBody([user('x')]));
      statuses.push(response.status);
      if (response.status === 429) {
        expect(response.headers.get('retry-after')).toBe('3');
        expect(await response.json()).toEqual({
          type: 'error',
          error: { type: 'rate_limit_error', message: expect.any(String) as string },
        });
      } else await response.body?.cancel();
    }
    expect(statuses).toEqual([429, 429, 200]);
  });

  it('answers 401 and 529 on demand, only to the requests a fault matches', async () => {
    const server = await serve();
    server.fail({ status: 401, times: 'always', match: 'bad-key' });
    server.fail({ status: 529, times: 1 });
    const auth = await post(server, '/v1/messages', messagesBody([user('bad-key')]));
    expect(auth.status).toBe(401);
    expect(await auth.json()).toMatchObject({ error: { type: 'authentication_error' } });
    const overloaded = await post(server, '/v1/messages', messagesBody([user('fine')]));
    expect(overloaded.status).toBe(529);
    expect(await overloaded.json()).toMatchObject({ type: 'error', error: { type: 'overloaded_error' } });
    expect((await post(server, '/v1/messages', messagesBody([user('fine')]))).status).toBe(200);
    expect((await post(server, '/v1/messages', messagesBody([user('bad-key again')]))).status).toBe(401);
  });

  it('answers count_tokens, probes of other paths, and says which request matched no rule', async () => {
    const server = await serve();
    const count = (await (
      await post(server, '/v1/messages/count_tokens', messagesBody([user('hi')]))
    ).json()) as {
      input_tokens: number;
    };
    expect(count.input_tokens).toBeGreaterThan(0);
    expect((await fetch(`${server.url}/api/hello`)).status).toBe(200);
    expect((await fetch(server.url, { method: 'HEAD' })).status).toBe(200);
    await (await post(server, '/v1/messages', messagesBody([user('unscripted prompt')]))).text();
    expect(server.describe()).toContain('matched no rule: unscripted prompt');
  });

  it('turns a rule that throws into a final text and reports it as a script error', async () => {
    const server = await serve({
      rules: [
        {
          name: 'broken',
          match: 'x',
          turns: () => {
            throw new Error('no path in the prompt');
          },
        },
      ],
    });
    const answer = (await (await post(server, '/v1/messages', messagesBody([user('x')]))).json()) as {
      content: { text: string }[];
    };
    expect(answer.content[0]!.text).toContain('no path in the prompt');
    expect(server.describe()).toContain('SCRIPT ERROR (broken): no path in the prompt');
  });

  it('speaks the Responses API for Codex: function calls in, outputs back, streamed events, OpenAI errors', async () => {
    const server = await serve({
      rules: [{ name: 'codex', match: 'marker:codex', turns: [execCommand('ls', '/repo'), text('listed')] }],
    });
    const body = (input: unknown[]) =>
      JSON.stringify({
        model: 'gpt-x',
        stream: true,
        instructions: 'You are Codex.',
        tools: [{ type: 'function', name: 'exec_command', parameters: {} }],
        input,
      });
    const userItem = {
      type: 'message',
      role: 'user',
      content: [{ type: 'input_text', text: 'go marker:codex' }],
    };
    const first = parseSse(await (await post(server, '/v1/responses', body([userItem]))).text());
    expect(first.map((e) => e.event)).toEqual([
      'response.created',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    const call = (first[4]!.data.item ?? {}) as { call_id: string; name: string; arguments: string };
    expect(call.name).toBe('exec_command');
    expect(JSON.parse(call.arguments)).toEqual({ cmd: 'ls', workdir: '/repo' });
    expect(first.at(-1)!.data).toMatchObject({
      response: { usage: { input_tokens: 1000, output_tokens: 200 } },
    });

    const second = parseSse(
      await (
        await post(
          server,
          '/v1/responses',
          body([
            userItem,
            { type: 'function_call', call_id: call.call_id, name: 'exec_command', arguments: call.arguments },
            { type: 'function_call_output', call_id: call.call_id, output: 'a.txt' },
          ]),
        )
      ).text(),
    );
    expect(second.find((e) => e.event === 'response.output_text.delta')?.data.delta).toBe('listed');
    const recorded = server.turnsOf('codex');
    expect(recorded.map((r) => r.response?.turnIndex)).toEqual([0, 1]);
    expect(recorded[1]!.system).toBe('You are Codex.');
    expect(recorded[1]!.latestToolResults).toEqual([
      { toolUseId: call.call_id, text: 'a.txt', isError: false },
    ]);

    server.fail({ status: 429, times: 1 });
    const limited = await post(server, '/v1/responses', body([userItem]));
    expect(limited.status).toBe(429);
    expect(await limited.json()).toMatchObject({ error: { code: 'rate_limit_exceeded' } });
  });

  it('closes itself after the idle timeout', async () => {
    const server = await serve({ idleTimeoutMs: 100 });
    // Poll without sending requests (each one would re-arm the timer): probe the port with a raw connect.
    const port = Number(new URL(server.url).port);
    const refused = () =>
      new Promise<boolean>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.once('connect', () => {
          socket.destroy();
          resolve(false);
        });
        socket.once('error', () => resolve(true));
      });
    const deadline = Date.now() + 20_000;
    while (!(await refused())) {
      expect(Date.now(), 'the server was still listening 20s after its 100ms idle timeout').toBeLessThan(
        deadline,
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  });
});
