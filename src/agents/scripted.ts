// The built-in scripted agent: follows a JSON script instead of a model, for the demo and for tests.
//
// The script's path comes from FORGE_SCRIPTED_AGENT in the request's env (relative to the request's
// cwd). Not from the label: labels are bead text, and bead text must not choose a file of commands.
// Script format: docs in scripted-script.ts; the first rule whose `when` holds runs its steps in order.
import { appendFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { systemClock } from '../infra/clock.js';
import { runProcess } from '../infra/process.js';
import { emptyUsage, formatDuration, formatResetAt, lastLine, notify } from './agent-process.js';
import {
  ScriptError,
  describeStep,
  findRule,
  loadScript,
  resolveInside,
  scriptVariables,
  substitute,
} from './scripted-script.js';
import type { ScriptStep, ScriptVariables } from './scripted-script.js';
import { openTranscript } from './transcript.js';
import type { Transcript } from './transcript.js';
import type {
  AgentRequest,
  AgentResult,
  AgentRunner,
  AgentRunnerOptions,
  AgentSpec,
  TokenUsage,
} from './types.js';

export const SCRIPTED_AGENT_ENV = 'FORGE_SCRIPTED_AGENT';

export function createScriptedRunner(spec: AgentSpec, options: AgentRunnerOptions = {}): AgentRunner {
  // Without an attempt number from the runner, count this runner's tries per bead.
  const tries = new Map<string, number>();
  return {
    name: spec.text,
    run(request) {
      const key = request.bead?.id ?? '';
      const attempt = request.attempt ?? (tries.get(key) ?? 0) + 1;
      tries.set(key, attempt);
      return runScripted(options, request, attempt);
    },
  };
}

type Ending = Pick<AgentResult, 'outcome' | 'message'> &
  Partial<Pick<AgentResult, 'resetAt' | 'retryAfterMs' | 'fatal' | 'environment'>>;

interface RunState {
  request: AgentRequest;
  transcript: Transcript;
  variables: ScriptVariables;
  signal: AbortSignal;
  deadline: { timedOut: boolean };
  said: string[];
  usage: TokenUsage;
  costUsd: number | undefined;
  readOnlyAttempts: string[];
}

async function runScripted(
  options: AgentRunnerOptions,
  request: AgentRequest,
  attempt: number,
): Promise<AgentResult> {
  const clock = options.clock ?? systemClock;
  const started = clock.now();
  const transcript = await openTranscript(request.transcriptPath, request.transcriptRoot);
  const controller = new AbortController();
  const deadline = { timedOut: false };
  const timer =
    request.timeoutMs !== undefined && request.timeoutMs > 0
      ? setTimeout(() => {
          deadline.timedOut = true;
          controller.abort();
        }, request.timeoutMs)
      : undefined;
  const onCallerAbort = () => controller.abort();
  if (request.signal?.aborted) controller.abort();
  else request.signal?.addEventListener('abort', onCallerAbort, { once: true });

  const state: RunState = {
    request,
    transcript,
    variables: scriptVariables(request.bead),
    signal: controller.signal,
    deadline,
    said: [],
    usage: emptyUsage(),
    costUsd: undefined,
    readOnlyAttempts: [],
  };
  let ending: Ending;
  try {
    ending = await followScript(state, options, attempt, () => clock.now());
  } catch (error) {
    // A broken script cannot get better by retrying; a failed file operation might.
    const message = error instanceof Error ? error.message : String(error);
    ending = {
      outcome: 'error',
      message: `Scripted agent: ${message}.`,
      fatal: error instanceof ScriptError,
    };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
    request.signal?.removeEventListener('abort', onCallerAbort);
  }

  if (request.mode === 'read-only' && state.readOnlyAttempts.length > 0 && ending.outcome === 'ok') {
    ending = {
      ...ending,
      message: `${ending.message.replace(/\.$/, '')}, and in read-only mode it did: ${state.readOnlyAttempts.join('; ')}.`,
    };
  }
  const result: AgentResult = {
    ...ending,
    finalText: state.said.join('\n'),
    exitCode: null,
    durationMs: clock.now() - started,
    usage: state.usage,
    costUsd: state.costUsd,
    permissionDenials: [],
    toolErrors: [],
    agent: 'scripted',
    scripted: true,
    ...(request.mode === 'read-only'
      ? { readOnly: { enforcement: 'none', attempts: state.readOnlyAttempts } }
      : {}),
  };
  transcript.note('end', { outcome: result.outcome, message: result.message });
  await transcript.close();
  return result;
}

async function followScript(
  state: RunState,
  options: AgentRunnerOptions,
  attempt: number,
  now: () => number,
): Promise<Ending> {
  const { request } = state;
  const scriptPath = request.env[SCRIPTED_AGENT_ENV];
  if (scriptPath === undefined || scriptPath === '') {
    return {
      outcome: 'error',
      message: `The scripted agent needs ${SCRIPTED_AGENT_ENV}=<path to a script .json> in its environment.`,
      // The run's set-up, not the bead: left open and unlabelled, as for an agent binary that is missing.
      fatal: true,
      environment: true,
    };
  }
  const path = resolve(request.cwd, scriptPath);
  state.transcript.note('start', {
    agent: 'scripted',
    script: path,
    cwd: request.cwd,
    mode: request.mode,
    bead: request.bead?.id,
    attempt,
    prompt: request.prompt,
  });
  const loaded = await loadScript(path);
  if (!loaded.ok)
    return { outcome: 'error', message: `Scripted agent: ${loaded.reason}.`, fatal: true, environment: true };

  const rule = await findRule(loaded.script, {
    bead: request.bead,
    attempt,
    cwd: request.cwd,
    variables: state.variables,
  });
  if (rule === undefined) {
    const bead =
      request.bead === undefined
        ? 'this request'
        : `bead ${request.bead.id} [${request.bead.labels.join(', ')}]`;
    return {
      outcome: 'error',
      message: `Scripted agent: no rule in ${path} matches ${bead} (attempt ${attempt}).`,
    };
  }

  for (const [index, step] of rule.steps.entries()) {
    if (state.signal.aborted) return stopped(state);
    const description = describeStep(step);
    notify(request, { type: 'step', index, description });
    state.transcript.note('step', { index, step: description });
    const ending = await runStep(state, step, options, now);
    if (ending !== undefined) return ending;
  }
  if (state.signal.aborted) return stopped(state);
  return { outcome: 'ok', message: `Scripted agent finished ${rule.steps.length} step(s).` };
}

/** Runs one step; returns an ending when the run stops here. */
async function runStep(
  state: RunState,
  step: ScriptStep,
  options: AgentRunnerOptions,
  now: () => number,
): Promise<Ending | undefined> {
  const { request, variables } = state;
  const text = (value: string) => substitute(value, variables);
  const inside = (path: string) => resolveInside(request.cwd, text(path));
  const touches = (what: string) => {
    if (request.mode === 'read-only') state.readOnlyAttempts.push(what);
  };

  if ('write' in step) {
    const path = inside(step.write);
    touches(`write ${text(step.write)}`);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text(step.content));
  } else if ('append' in step) {
    const path = inside(step.append);
    touches(`append ${text(step.append)}`);
    await mkdir(dirname(path), { recursive: true });
    await appendFile(path, text(step.content));
  } else if ('edit' in step) {
    const path = inside(step.edit);
    touches(`edit ${text(step.edit)}`);
    const before = await readFile(path, 'utf8').catch(() => undefined);
    if (before === undefined)
      return {
        outcome: 'error',
        message: `Scripted agent: cannot edit ${text(step.edit)}: it does not exist.`,
      };
    const find = text(step.find);
    if (!before.includes(find)) {
      return {
        outcome: 'error',
        message: `Scripted agent: edit of ${text(step.edit)} failed: ${JSON.stringify(find)} is not in it.`,
      };
    }
    // Like an agent's Edit tool: the first occurrence, the replacement taken literally.
    await writeFile(
      path,
      before.replace(find, () => text(step.replace)),
    );
  } else if ('run' in step) {
    return runCommand(state, step.run.map(text), step.allowFailure === true, options);
  } else if ('say' in step) {
    state.said.push(text(step.say));
  } else if ('fail' in step) {
    return { outcome: 'error', message: text(step.fail) };
  } else if ('sleep_ms' in step) {
    await (options.clock ?? systemClock).sleep(step.sleep_ms, state.signal);
    if (state.signal.aborted) return stopped(state);
  } else if ('rateLimit' in step) {
    const resetAt = now() + step.rateLimit.resetInSeconds * 1000;
    return {
      outcome: 'rate_limited',
      message: `Scripted agent: simulated usage limit; it resets at ${formatResetAt(resetAt)}.`,
      resetAt,
      retryAfterMs: step.rateLimit.resetInSeconds * 1000,
    };
  } else if ('authError' in step) {
    return { outcome: 'auth', message: 'Scripted agent: simulated authentication failure.' };
  } else if ('overloaded' in step) {
    return { outcome: 'overloaded', message: 'Scripted agent: simulated overloaded API.' };
  } else {
    state.usage.inputTokens += step.usage.inputTokens ?? 0;
    state.usage.outputTokens += step.usage.outputTokens ?? 0;
    if (step.usage.costUsd !== undefined) state.costUsd = (state.costUsd ?? 0) + step.usage.costUsd;
  }
  return undefined;
}

async function runCommand(
  state: RunState,
  argv: string[],
  allowFailure: boolean,
  options: AgentRunnerOptions,
): Promise<Ending | undefined> {
  const { request, transcript } = state;
  if (request.mode === 'read-only') state.readOnlyAttempts.push(`run ${argv.join(' ')}`);
  const [file, ...args] = argv;
  if (file === undefined) return undefined;
  const result = await runProcess(
    { file, args },
    {
      cwd: request.cwd,
      env: { ...request.env },
      signal: state.signal,
      killGraceMs: options.killGraceMs,
      onStdoutLine: (line) => transcript.raw(line),
      onStderrLine: (line) => transcript.note('stderr', { line }),
      maxBufferChars: 64 * 1024,
      sweep: true,
      contain: true,
    },
  );
  transcript.note('exit', { argv, exitCode: result.exitCode ?? null, signal: result.signal ?? null });
  if (result.swept !== undefined && result.swept.length > 0)
    transcript.note('swept', { processes: result.swept });
  if (result.aborted) return stopped(state);
  const shown = `\`${argv.join(' ')}\``;
  if (result.spawnError !== undefined) {
    return { outcome: 'error', message: `Scripted agent: could not run ${shown}: ${result.spawnError}.` };
  }
  if (result.exitCode !== 0 && !allowFailure) {
    const detail = lastLine(result.stderr) || lastLine(result.stdout);
    return {
      outcome: 'error',
      message: `Scripted agent: ${shown} exited ${result.exitCode ?? result.signal}${detail ? `: ${detail}` : ''}.`,
    };
  }
  return undefined;
}

function stopped(state: RunState): Ending {
  if (state.deadline.timedOut) {
    return {
      outcome: 'timeout',
      message: `Scripted agent did not finish within ${formatDuration(state.request.timeoutMs ?? 0)} and was stopped.`,
    };
  }
  return { outcome: 'aborted', message: 'Scripted agent was stopped before it finished.' };
}
