// The scripted agent's script: its zod schema, loading, rule matching and `{{…}}` substitution.
//
//   { "rules": [ { "when": { "role": "doer", "iter": 1 }, "steps": [ … ] }, { "steps": [ … ] } ] }
//
// The first rule whose `when` holds runs (no `when`: always). `when` keys, all of which must hold:
// role (label role:<role>), iter (label iter:N), labels (all present), titleIncludes, exists / missing
// (a path in the working tree), attempt (1 for a bead's first try).
// Steps, in order: {write, content} {append, content} {edit, find, replace} (first occurrence; an
// error when `find` is absent) {run: argv[], allowFailure?} (no shell; request cwd, env, timeout and
// abort) {say} (final text; several are joined by newlines) {fail} {sleep_ms} and the simulated
// outcomes {rateLimit: {resetInSeconds}} {authError: true} {overloaded: true}; {usage: {inputTokens?,
// outputTokens?, costUsd?}} adds to the reported usage.
// Strings may hold {{bead}} (the bead id), {{iter}} / {{next_iter}} (from its iter:N label) and {{epic}}
// (the id before the first '.' of a hierarchical id, else an epic:<id> label). Nothing else is
// expanded; an unknown or unavailable placeholder is an error. Paths must stay inside the working tree.
import { access, readFile } from 'node:fs/promises';
import { isAbsolute, relative, resolve } from 'node:path';
import { z } from 'zod';
import { iterOf } from '../infra/labels.js';
import { describeProblem, zodProblems } from '../infra/zod-issues.js';
import type { AgentBeadInfo } from './types.js';

const PathText = z.string().min(1);

const WhenSchema = z.strictObject({
  /** The bead has the label `role:<role>`. */
  role: z.string().optional(),
  /** The bead's `iter:N` label is this number. */
  iter: z.number().int().optional(),
  /** The bead has every one of these labels. */
  labels: z.array(z.string()).optional(),
  titleIncludes: z.string().optional(),
  /** This path exists in the working tree. */
  exists: PathText.optional(),
  /** This path does not exist in the working tree. */
  missing: PathText.optional(),
  /** The bead's attempt number (1 for the first try). */
  attempt: z.number().int().positive().optional(),
});

const StepSchema = z.union([
  z.strictObject({ write: PathText, content: z.string() }),
  z.strictObject({ edit: PathText, find: z.string().min(1), replace: z.string() }),
  z.strictObject({ append: PathText, content: z.string() }),
  z.strictObject({ run: z.array(z.string()).min(1), allowFailure: z.boolean().optional() }),
  z.strictObject({ say: z.string() }),
  z.strictObject({ fail: z.string() }),
  z.strictObject({ sleep_ms: z.number().int().nonnegative() }),
  z.strictObject({ rateLimit: z.strictObject({ resetInSeconds: z.number().nonnegative() }) }),
  z.strictObject({ authError: z.literal(true) }),
  z.strictObject({ overloaded: z.literal(true) }),
  z.strictObject({
    usage: z.strictObject({
      inputTokens: z.number().int().nonnegative().optional(),
      outputTokens: z.number().int().nonnegative().optional(),
      costUsd: z.number().nonnegative().optional(),
    }),
  }),
]);

export const ScriptSchema = z.strictObject({
  rules: z.array(z.strictObject({ when: WhenSchema.optional(), steps: z.array(StepSchema) })).min(1),
});

export type Script = z.infer<typeof ScriptSchema>;
export type ScriptRule = Script['rules'][number];
export type ScriptStep = z.infer<typeof StepSchema>;

const STEP_SHAPES =
  '{write, content}, {edit, find, replace}, {append, content}, {run, allowFailure?}, {say}, {fail}, {sleep_ms}, ' +
  '{rateLimit: {resetInSeconds}}, {authError: true}, {overloaded: true}, {usage: {inputTokens?, outputTokens?, costUsd?}}';

/** A problem with the script or a step's arguments; its message is meant for the user. */
export class ScriptError extends Error {
  override readonly name = 'ScriptError';
}

export type LoadScriptResult = { ok: true; script: Script } | { ok: false; reason: string };

export async function loadScript(path: string): Promise<LoadScriptResult> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    return {
      ok: false,
      reason: `${path}: cannot read it (${(error as NodeJS.ErrnoException).code ?? String(error)})`,
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `${path}: not valid JSON (${(error as Error).message})` };
  }
  const parsed = ScriptSchema.safeParse(json);
  if (parsed.success) return { ok: true, script: parsed.data };
  // A step matching no shape: zod says only "Invalid input"; the shapes a step may take say more.
  const problems = zodProblems(path, parsed.error).map((problem) =>
    problem.message === 'Invalid input'
      ? { ...problem, message: `not a known step; expected one of ${STEP_SHAPES}` }
      : problem,
  );
  return { ok: false, reason: problems.map(describeProblem).join('; ') };
}

/** The values `{{…}}` placeholders stand for; each is undefined when the bead does not provide it. */
export interface ScriptVariables {
  bead: string | undefined;
  iter: string | undefined;
  next_iter: string | undefined;
  epic: string | undefined;
}

export function scriptVariables(bead: AgentBeadInfo | undefined): ScriptVariables {
  const iter = iterOf(bead);
  const epicLabel = bead?.labels.find((label) => label.startsWith('epic:'))?.slice('epic:'.length);
  const dot = bead?.id.indexOf('.') ?? -1;
  return {
    bead: bead?.id,
    iter: iter === undefined ? undefined : String(iter),
    next_iter: iter === undefined ? undefined : String(iter + 1),
    // Hierarchical ids (`bd-7f3.2`) name their epic before the first dot; otherwise an `epic:` label.
    epic: bead !== undefined && dot > 0 ? bead.id.slice(0, dot) : epicLabel,
  };
}

const NEEDS: Record<keyof ScriptVariables, string> = {
  bead: 'a bead',
  iter: 'an iter:N label',
  next_iter: 'an iter:N label',
  epic: 'a hierarchical bead id (epic.N) or an epic:<id> label',
};

/** Replaces `{{bead}}`, `{{iter}}`, `{{next_iter}}`, `{{epic}}`; anything else in braces is an error. */
export function substitute(text: string, variables: ScriptVariables): string {
  return text.replace(/\{\{\s*([^}]*?)\s*\}\}/g, (_match, name: string) => {
    if (!Object.hasOwn(NEEDS, name)) {
      throw new ScriptError(
        `unknown placeholder {{${name}}} (known: {{bead}}, {{iter}}, {{next_iter}}, {{epic}})`,
      );
    }
    const key = name as keyof ScriptVariables;
    const value = variables[key];
    if (value === undefined) throw new ScriptError(`{{${name}}} needs ${NEEDS[key]}`);
    return value;
  });
}

/** A script path made absolute inside the working tree; paths that leave it are refused. */
export function resolveInside(cwd: string, path: string): string {
  const absolute = resolve(cwd, path);
  const fromRoot = relative(resolve(cwd), absolute);
  if (fromRoot.startsWith('..') || isAbsolute(fromRoot)) {
    throw new ScriptError(`path "${path}" is outside the working tree`);
  }
  return absolute;
}

export interface MatchContext {
  bead: AgentBeadInfo | undefined;
  attempt: number;
  cwd: string;
  variables: ScriptVariables;
}

/** The first rule whose every condition holds. */
export async function findRule(script: Script, context: MatchContext): Promise<ScriptRule | undefined> {
  for (const rule of script.rules) {
    if (await matches(rule, context)) return rule;
  }
  return undefined;
}

async function matches(rule: ScriptRule, context: MatchContext): Promise<boolean> {
  const when = rule.when;
  if (when === undefined) return true;
  const labels = context.bead?.labels ?? [];
  if (when.role !== undefined && !labels.includes(`role:${when.role}`)) return false;
  if (when.iter !== undefined && iterOf(context.bead) !== when.iter) return false;
  if (when.labels !== undefined && !when.labels.every((label) => labels.includes(label))) return false;
  if (when.titleIncludes !== undefined && !(context.bead?.title ?? '').includes(when.titleIncludes))
    return false;
  if (when.attempt !== undefined && context.attempt !== when.attempt) return false;
  if (when.exists !== undefined && !(await exists(context, when.exists))) return false;
  if (when.missing !== undefined && (await exists(context, when.missing))) return false;
  return true;
}

async function exists(context: MatchContext, path: string): Promise<boolean> {
  try {
    await access(resolveInside(context.cwd, substitute(path, context.variables)));
    return true;
  } catch (error) {
    if (error instanceof ScriptError) throw error;
    return false;
  }
}

/** One line describing a step, for the transcript and progress. */
export function describeStep(step: ScriptStep): string {
  if ('write' in step) return `write ${step.write}`;
  if ('edit' in step) return `edit ${step.edit}`;
  if ('append' in step) return `append ${step.append}`;
  if ('run' in step) return `run ${JSON.stringify(step.run)}`;
  if ('say' in step) return 'say';
  if ('fail' in step) return `fail: ${step.fail}`;
  if ('sleep_ms' in step) return `sleep ${step.sleep_ms} ms`;
  if ('rateLimit' in step) return `simulate a rate limit (${step.rateLimit.resetInSeconds} s)`;
  if ('authError' in step) return 'simulate an authentication failure';
  if ('overloaded' in step) return 'simulate an overloaded API';
  return 'record usage';
}
