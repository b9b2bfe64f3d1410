// `codex exec --json` event lines in the shapes the real CLI prints, for the fake `codex`.

export const threadStarted = () => ({
  type: 'thread.started',
  thread_id: '0199a213-81c0-7800-8aa1-bbab2a035a53',
});
export const turnStarted = () => ({ type: 'turn.started' });

export const agentMessage = (text: string, id = 'item_3') => ({
  type: 'item.completed',
  item: { id, type: 'agent_message', text },
});

export const reasoning = (text: string) => ({
  type: 'item.completed',
  item: { id: 'item_0', type: 'reasoning', text },
});

export const commandStarted = (command: string) => ({
  type: 'item.started',
  item: {
    id: 'item_1',
    type: 'command_execution',
    command,
    aggregated_output: '',
    exit_code: null,
    status: 'in_progress',
  },
});

export const commandCompleted = (
  command: string,
  exitCode: number,
  output = '',
  status = exitCode === 0 ? 'completed' : 'failed',
) => ({
  type: 'item.completed',
  item: {
    id: 'item_1',
    type: 'command_execution',
    command,
    aggregated_output: output,
    exit_code: exitCode,
    status,
  },
});

export const fileChange = (path: string, status = 'completed') => ({
  type: 'item.completed',
  item: { id: 'item_2', type: 'file_change', changes: [{ path, kind: 'add' }], status },
});

export const turnCompleted = (input = 2400, cached = 1800, output = 350) => ({
  type: 'turn.completed',
  usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output },
});

export const turnFailed = (message: string) => ({ type: 'turn.failed', error: { message } });
export const error = (message: string) => ({ type: 'error', message });
