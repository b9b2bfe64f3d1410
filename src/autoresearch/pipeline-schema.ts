// A pipeline definition (`forge-pack pipeline <file>`): named stages run one after another from one
// parent epic. A `loop` stage carries the same fields as `forge-pack loop` (in config.json's names);
// an `epic` stage runs an existing epic (beads imported from a spec's plan) to completion with gates.
import { z } from 'zod';
import { parseJsonText, validateJson } from '../infra/json-file.js';
import { loopSchemaParts } from './config-schema.js';
import { SLUG_PATTERN, SLUG_RULE } from './spec-state/slug.js';
import type { LoopSetupOptions } from './setup-options.js';

const { text, expected, relativePath, doerPath, metric, caps, agentSpec, population } = loopSchemaParts;

const STAGE_NAME = 'a stage name of lower-case letters, digits and "-" (at most 40), e.g. "spec"';
const stageName = z
  .string({ error: expected(STAGE_NAME) })
  .regex(/^[a-z0-9][a-z0-9-]{0,39}$/, { error: expected(STAGE_NAME) });

/**
 * What lets the next stage start. `goal_reached`: the loop met its target; `ended`: the loop ended for
 * any reason; `spec_ready`: the loop ended and the spec it serves passes its readiness gate (the gate,
 * not the rubric score, decides); `all_closed`: every bead of the epic is closed.
 */
export const PASS_CONDITIONS = ['goal_reached', 'ended', 'spec_ready', 'all_closed'] as const;
export type PassCondition = (typeof PASS_CONDITIONS)[number];

const ROLES = ['doer', 'judge', 'strategist', 'retrospective', 'resume_strategist'] as const;

const loopStage = z.strictObject(
  {
    name: stageName,
    type: z.literal('loop'),
    subject: text('a non-empty subject').optional(),
    program: text('the program: the stable directive every doer reads').optional(),
    program_file: relativePath('the path of the program file (Markdown)').optional(),
    metric,
    target: z
      .number({ error: expected('a number or null (no target)') })
      .nullable()
      .optional(),
    min_delta: z
      .number({ error: expected('a non-negative number') })
      .min(0, { error: expected('a non-negative number') })
      .optional(),
    caps: caps.optional(),
    scope: z.array(doerPath, { error: expected('a list of paths the doer may change') }).optional(),
    agents: z
      .partialRecord(z.enum(ROLES, { error: expected(`a role: ${ROLES.join(', ')}`) }), agentSpec, {
        error: expected('an object mapping roles to agents'),
      })
      .optional(),
    confirmation_rounds: z
      .number({ error: expected('an integer ≥ 1') })
      .int({ error: expected('an integer ≥ 1') })
      .min(1, { error: expected('an integer ≥ 1') })
      .optional(),
    /** Candidates per iteration, as forge-pack loop --population. */
    population: population.optional(),
    workspace: relativePath('the loop workspace, e.g. ".autoresearch-spec"').optional(),
    /** The spec the loop serves (specs/<slug>/), as forge-pack loop --spec. */
    spec: text(SLUG_RULE)
      .regex(SLUG_PATTERN, { error: expected(SLUG_RULE) })
      .optional(),
    passes_when: z
      .enum(['goal_reached', 'ended', 'spec_ready'], {
        error: expected('"goal_reached", "ended" or "spec_ready"'),
      })
      .default('goal_reached'),
  },
  { error: expected('a loop stage object') },
);

const epicStage = z.strictObject(
  {
    name: stageName,
    type: z.literal('epic'),
    epic: text('the id of an existing epic, e.g. one imported from a spec plan'),
    passes_when: z.enum(['all_closed'], { error: expected('"all_closed"') }).default('all_closed'),
  },
  { error: expected('an epic stage object') },
);

const stage = z.discriminatedUnion('type', [loopStage, epicStage], {
  error: expected('a stage with "type": "loop" or "epic"'),
});

export const pipelineSchema = z
  .strictObject(
    {
      name: stageName,
      stages: z
        .array(stage, { error: expected('a list of stages') })
        .min(1, { error: expected('at least one stage') }),
    },
    { error: expected('a JSON object with "name" and "stages"') },
  )
  .superRefine((pipeline, ctx) => {
    const names = new Set<string>();
    const workspaces = new Set<string>();
    pipeline.stages.forEach((s, index) => {
      if (names.has(s.name)) {
        ctx.addIssue({
          code: 'custom',
          path: ['stages', index, 'name'],
          message: `the name ${JSON.stringify(s.name)} is already taken by another stage`,
        });
      }
      names.add(s.name);
      if (s.type !== 'loop') return;
      if (s.passes_when === 'spec_ready' && s.spec === undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['stages', index, 'spec'],
          message: 'passes_when "spec_ready" needs the spec the loop serves: "spec": "<slug>"',
        });
      }
      if ((s.program === undefined) === (s.program_file === undefined)) {
        ctx.addIssue({
          code: 'custom',
          path: ['stages', index, 'program'],
          message: 'give the program either as "program" (text) or as "program_file", exactly one',
        });
      }
      const workspace = stageWorkspace(s);
      if (workspaces.has(workspace)) {
        ctx.addIssue({
          code: 'custom',
          path: ['stages', index, 'workspace'],
          message: `the workspace ${workspace} is already another stage's: every loop keeps its own`,
        });
      }
      workspaces.add(workspace);
    });
  });

export type PipelineDefinition = z.output<typeof pipelineSchema>;
export type PipelineFile = z.input<typeof pipelineSchema>;
export type PipelineStage = PipelineDefinition['stages'][number];
export type LoopStage = Extract<PipelineStage, { type: 'loop' }>;
export type EpicStage = Extract<PipelineStage, { type: 'epic' }>;

/** A loop stage's workspace: its own, or `.autoresearch-<stage>`. */
export function stageWorkspace(stage: Pick<LoopStage, 'name' | 'workspace'>): string {
  return stage.workspace ?? `.autoresearch-${stage.name}`;
}

/** Validates an already-parsed value; `file` only names the source in messages. */
export function parsePipeline(value: unknown, file: string): PipelineDefinition {
  return validateJson(value, pipelineSchema, { file });
}

/** A pipeline file's text: the value as written (what Forge keeps) and the validated definition. */
export function parsePipelineText(
  text: string,
  file: string,
): { raw: unknown; definition: PipelineDefinition } {
  const raw = parseJsonText(text, z.unknown(), {
    file,
    hint: `Fix the JSON syntax in ${file} (pipelines are JSON; no YAML parser is a dependency).`,
  });
  return { raw, definition: parsePipeline(raw, file) };
}

/** A loop stage as `forge-pack loop` options: the program text is read by the caller. */
export function stageLoopOptions(
  pipeline: string,
  stage: LoopStage,
  program: string,
  agents: Readonly<Record<string, string>> | undefined,
): LoopSetupOptions {
  const m = stage.metric;
  return {
    subject: stage.subject ?? `${pipeline} ${stage.name}`,
    program,
    metric:
      m.type === 'hard'
        ? {
            type: 'hard',
            command: m.command,
            score: m.score,
            direction: m.direction,
            artifact: m.artifact_path,
            timeoutSeconds: m.timeout_seconds,
            repeat: m.repeat,
          }
        : { type: 'soft', rubric: m.rubric_path, artifact: m.artifact_path, direction: m.direction },
    target: stage.target ?? undefined,
    minDelta: stage.min_delta,
    maxIterations: stage.caps?.max_iterations,
    wallClockSeconds: stage.caps?.wall_clock_seconds,
    plateau: stage.caps?.plateau_threshold,
    maxCostUsd: stage.caps?.max_cost_usd,
    confirmationRounds: stage.confirmation_rounds,
    population: stage.population,
    scope: stage.scope,
    agents,
    workspace: stageWorkspace(stage),
    spec: stage.spec,
  };
}
