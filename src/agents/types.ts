// The agent contract: what the runner asks of any agent CLI, and what it gets back.
import type { Clock } from '../infra/clock.js';

/** `full`: the agent may change the tree (doers). `read-only`: it may only look (soft judges). */
export type AgentMode = 'full' | 'read-only';

/** Bead metadata handed to the agent; only the scripted agent looks at it. */
export interface AgentBeadInfo {
  id: string;
  title: string;
  labels: readonly string[];
}

/** Something the agent did or suffered while running, reported as it happens. */
export type AgentActivity =
  /** The CLI is retrying an API call itself (Claude's `system/api_retry`, Codex's "Reconnecting…", opencode's and Gemini CLI's logged failures). */
  | {
      type: 'retry';
      status?: number | undefined;
      error?: string | undefined;
      attempt?: number | undefined;
      maxRetries?: number | undefined;
      delayMs?: number | undefined;
    }
  /** A rate-limit status from the provider; `rejected` means the request was refused. */
  | { type: 'rate_limit'; status: string; resetAt?: number | undefined }
  | { type: 'tool'; name: string; detail?: string | undefined }
  | { type: 'text'; text: string }
  /** The adapter is stopping the agent early, e.g. at the first 401. */
  | { type: 'stopping'; reason: string }
  /** The scripted agent started a step. */
  | { type: 'step'; index: number; description: string };

export interface AgentRequest {
  prompt: string;
  /** The working tree the agent runs in. */
  cwd: string;
  /** The child's whole environment. Adapters never read `process.env`. */
  env: Readonly<Record<string, string | undefined>>;
  mode: AgentMode;
  /** Overrides the model of the spec. */
  model?: string | undefined;
  /** The most this run may spend, in USD; a CLI that can enforce it stops there (outcome `budget`). */
  maxBudgetUsd?: number | undefined;
  /** Kill the agent's whole process group after this long. */
  timeoutMs?: number | undefined;
  /** Aborting kills the agent's whole process group; the result is `aborted`. */
  signal?: AbortSignal | undefined;
  /** The raw stream is appended here as it arrives (parent directories are created). */
  transcriptPath?: string | undefined;
  /** The folder Forge trusts above the transcript: no folder between the two may be a link (see own-log.ts). */
  transcriptRoot?: string | undefined;
  bead?: AgentBeadInfo;
  /** 1 for a bead's first try; the scripted agent can match on it. */
  attempt?: number | undefined;
  onActivity?: ((event: AgentActivity) => void) | undefined;
  /** The agent's pid (its process group) once spawned, so a crashed runner's successor can stop it. */
  onSpawn?: ((pid: number) => void) | undefined;
}

/** `budget`: the agent stopped itself at the spending limit it was given (`maxBudgetUsd`). */
export type AgentOutcome =
  'ok' | 'error' | 'rate_limited' | 'overloaded' | 'auth' | 'timeout' | 'aborted' | 'budget';

export interface TokenUsage {
  /** Input tokens not served from the prompt cache. */
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
}

export interface PermissionDenial {
  tool: string;
  input: unknown;
}

/** How read-only mode was enforced for this run, and what the adapter saw the agent try anyway. */
export interface ReadOnlyReport {
  /** `tools`: the agent had no writing tools; `sandbox`: the CLI's sandbox; `none`: nothing stops it. */
  enforcement: 'tools' | 'sandbox' | 'none';
  /** Attempts to write or run something, as one line each (the tree snapshot is the real guard). */
  attempts: string[];
}

export interface AgentResult {
  outcome: AgentOutcome;
  /** One sentence for a person. */
  message: string;
  finalText: string;
  /** null when the process was killed by a signal or never started. */
  exitCode: number | null;
  durationMs: number;
  usage: TokenUsage;
  costUsd?: number | undefined;
  numTurns?: number | undefined;
  permissionDenials: PermissionDenial[];
  /** Tool calls that came back as errors, e.g. a read-only judge's attempted Write. */
  toolErrors: string[];
  /** Epoch ms at which a rate or usage limit resets, when known. */
  resetAt?: number | undefined;
  retryAfterMs?: number | undefined;
  /** The adapter: `claude`, `codex`, `opencode`, `gemini`, `command`, `scripted`. */
  agent: string;
  model?: string | undefined;
  /** True only for the built-in scripted agent: no model was involved. */
  scripted: boolean;
  /** Retrying cannot help (binary missing, invalid script): stop instead of retrying the bead. */
  fatal?: boolean;
  /** The agent could not start (its binary missing or not executable): the machine's fault, not the bead's. */
  environment?: boolean;
  /** Present in read-only mode. */
  readOnly?: ReadOnlyReport;
}

export interface AgentRunner {
  /** The spec it was made from, e.g. `claude-opus`, `codex`, `scripted`, `my-agent --flag`. */
  readonly name: string;
  /** Never throws for anything the agent does; the outcome says what happened. */
  run(request: AgentRequest): Promise<AgentResult>;
}

/** A parsed agent label or `--agent` value. */
export interface AgentSpec {
  /** Adapter name: `claude`, `codex`, `opencode`, `gemini`, `scripted`, or `command` for a user's own command. */
  cli: string;
  model?: string | undefined;
  /** For `command`: the user's argv, split without a shell. */
  argv?: readonly string[];
  /** The text it was parsed from. */
  text: string;
}

/** Settings shared by the adapters; every one has a default. */
export interface AgentRunnerOptions {
  /** For reset times and the scripted agent's sleeps. Default: the system clock. */
  clock?: Clock | undefined;
  /** Time between SIGTERM and SIGKILL of an agent's process group. */
  killGraceMs?: number | undefined;
  /** CLAUDE_CODE_MAX_RETRIES for Claude, unless the request's env sets it. Default 3. */
  claudeMaxRetries?: number | undefined;
  /** Adds IS_SANDBOX=1 for Claude in full mode. Default: whether this process runs as root. */
  runningAsRoot?: boolean | undefined;
  /** Codex retries network errors forever, so it always gets a timeout. Default 60 minutes. */
  codexDefaultTimeoutMs?: number | undefined;
}
