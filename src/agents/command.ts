// The generic adapter: the user's own command as argv, prompt on stdin, outcome by exit code.
import { UsageError } from '../infra/errors.js';
import { emptyUsage, formatDuration, lastLine } from './agent-process.js';
import type { AgentProcessResult } from './agent-process.js';
import { howItEnded, runAdapter, startVerdict } from './adapter-run.js';
import type { AgentRequest, AgentResult, AgentRunner, AgentRunnerOptions, AgentSpec } from './types.js';

/** How much of stdout becomes the final text. */
const FINAL_TEXT_CHARS = 8000;

/**
 * The command learns what it is asked through its environment, so a wrapper script can honour it:
 * FORGE_AGENT_MODE (`full` or `read-only`), FORGE_AGENT_MODEL (when a model was asked for), FORGE_BEAD_ID.
 */
export function commandEnv(request: AgentRequest): Record<string, string | undefined> {
  return {
    ...request.env,
    FORGE_AGENT_MODE: request.mode,
    ...(request.model !== undefined ? { FORGE_AGENT_MODEL: request.model } : {}),
    ...(request.bead !== undefined ? { FORGE_BEAD_ID: request.bead.id } : {}),
  };
}

export function createCommandRunner(spec: AgentSpec, options: AgentRunnerOptions = {}): AgentRunner {
  const [file, ...args] = spec.argv ?? [];
  if (file === undefined) throw new UsageError(`agent "${spec.text}": no command to run`);
  const label = `\`${file}\``;
  return {
    name: spec.text,
    run: (request) =>
      runAdapter({
        request,
        runner: options,
        command: { file, args },
        env: commandEnv(request),
        timeoutMs: request.timeoutMs,
        keepStdoutChars: FINAL_TEXT_CHARS,
        classify: (child) => classifyCommandRun(label, file, child, request),
      }),
  };
}

function classifyCommandRun(
  label: string,
  file: string,
  child: AgentProcessResult,
  request: AgentRequest,
): AgentResult {
  const readOnly = request.mode === 'read-only';
  const base = {
    finalText: child.stdout.replace(/^\[\u2026truncated\u2026\]\n/, '').trimEnd(),
    exitCode: child.exitCode ?? null,
    durationMs: child.durationMs,
    usage: emptyUsage(),
    permissionDenials: [],
    toolErrors: [],
    agent: 'command',
    scripted: false,
    ...(readOnly ? { readOnly: { enforcement: 'none' as const, attempts: [] } } : {}),
  };
  // Nothing can stop a plain command from writing; the runner's tree snapshot is the only guard.
  const caveat = readOnly ? ' (read-only was not enforced: a plain command has no tool restrictions)' : '';

  const started = startVerdict(label, file, child);
  if (started !== undefined) return { ...base, ...started };
  if (child.timedOut) {
    const within = request.timeoutMs === undefined ? '' : ` within ${formatDuration(request.timeoutMs)}`;
    return {
      ...base,
      outcome: 'timeout',
      message: `${label} did not finish${within}; it was stopped with everything it started.`,
    };
  }
  if (child.exitCode === 0) return { ...base, outcome: 'ok', message: `${label} finished${caveat}.` };
  const how = howItEnded(child);
  const detail = lastLine(child.stderr) || lastLine(child.stdout);
  return { ...base, outcome: 'error', message: `${label} ${how}${detail ? `: ${detail}` : ''}${caveat}.` };
}
