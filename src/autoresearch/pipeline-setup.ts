// `forge-pack pipeline <file>`: the parent epic and one `role:loop` bead per stage, each depending on
// the one before. Idempotent: the store is asked first (labels name the pipeline and each stage), so a
// rerun, or one after a crash between two writes, finds what exists and creates only what is missing.
import type { Bead, BeadStore } from '../beads/types.js';
import { AppError, ExitCode, UsageError } from '../infra/errors.js';
import type { PipelineDefinition, PipelineStage } from './pipeline-schema.js';
import {
  listPipelines,
  PIPELINE_LABEL,
  STAGE_ROLE_LABEL,
  writePipeline,
  type PipelineRecord,
} from './pipeline-state.js';

export interface PipelineSetupInput {
  raw: unknown;
  definition: PipelineDefinition;
  /** Each loop stage's program text. */
  programs: Record<string, string>;
}

export interface PipelineSetupResult {
  parent: string;
  name: string;
  /** False when the pipeline existed and nothing was missing. */
  created: boolean;
  stages: { name: string; type: PipelineStage['type']; bead: string; created: boolean }[];
}

const nameLabel = (name: string) => `${PIPELINE_LABEL}:${name}`;
const stageLabel = (name: string) => `stage:${name}`;

export async function setupPipeline(
  repo: string,
  input: PipelineSetupInput,
  store: BeadStore,
): Promise<PipelineSetupResult> {
  const { definition } = input;
  const existing = (await listPipelines(repo)).find((p) => p.name === definition.name);
  if (existing !== undefined && !sameDefinition(existing, input)) {
    throw new AppError(
      `The pipeline "${definition.name}" already exists (epic ${existing.parent}) with another definition.`,
      {
        exitCode: ExitCode.usage,
        hint:
          'Give the changed pipeline another "name", or run the existing one: ralph-loop ' + existing.parent,
      },
    );
  }
  for (const stage of definition.stages) {
    if (stage.type === 'epic') await requireEpic(store, stage.name, stage.epic);
  }

  let created = false;
  let parent = existing?.parent ?? (await findParent(store, definition.name))?.id;
  if (parent === undefined) {
    parent = (
      await store.create({
        title: `pipeline: ${definition.name}`,
        type: 'epic',
        labels: [PIPELINE_LABEL, nameLabel(definition.name)],
        description: parentDescription(definition),
      })
    ).id;
    created = true;
  }
  const record: PipelineRecord = existing ?? {
    name: definition.name,
    parent,
    raw: input.raw,
    definition,
    programs: input.programs,
    stages: {},
  };
  await writePipeline(repo, record);

  const children = await store.children(parent);
  const stages: PipelineSetupResult['stages'] = [];
  let previous: string | undefined;
  for (const [index, stage] of definition.stages.entries()) {
    const found =
      record.stages[stage.name]?.bead ?? children.find((b) => hasLabel(b, stageLabel(stage.name)))?.id;
    let bead = found;
    if (bead === undefined) {
      bead = (
        await store.create({
          title: `stage ${index + 1}/${definition.stages.length}: ${stage.name}`,
          labels: [STAGE_ROLE_LABEL, stageLabel(stage.name)],
          parent,
          dependsOn: previous === undefined ? [] : [previous],
          description: stageDescription(definition, stage),
        })
      ).id;
      created = true;
    }
    record.stages[stage.name] ??= { bead, epic: null, cycle: 1, retired: [], answer: null };
    await writePipeline(repo, record);
    stages.push({ name: stage.name, type: stage.type, bead, created: found === undefined });
    previous = bead;
  }
  return { parent, name: definition.name, created, stages };
}

function sameDefinition(record: PipelineRecord, input: PipelineSetupInput): boolean {
  return (
    JSON.stringify(record.raw) === JSON.stringify(input.raw) &&
    JSON.stringify(record.programs) === JSON.stringify(input.programs)
  );
}

async function findParent(store: BeadStore, name: string): Promise<Bead | undefined> {
  const found = await store.list({ label: nameLabel(name), all: true });
  return found.find((b) => b.issue_type === 'epic');
}

function hasLabel(bead: Bead, label: string): boolean {
  return bead.labels.includes(label);
}

async function requireEpic(store: BeadStore, stage: string, epic: string): Promise<void> {
  let found: Bead;
  try {
    found = await store.show(epic);
  } catch (error) {
    throw new UsageError(`Stage "${stage}": the epic ${epic} is not in the bead store.`, {
      hint: 'Import the plan first (forge-pack beads import …) and give the epic id it prints.',
      cause: error,
    });
  }
  if (found.issue_type !== 'epic') {
    throw new UsageError(`Stage "${stage}": ${epic} is a ${found.issue_type}, not an epic.`);
  }
}

function parentDescription(definition: PipelineDefinition): string {
  return [
    `Pipeline "${definition.name}": ${definition.stages.map((s) => s.name).join(' → ')}.`,
    '',
    'Each child bead is a stage (role:loop): the runner creates and runs its loop or epic, and the next',
    'stage starts when it passes. Created by forge-pack pipeline; the definition is in .forge/pipelines/.',
    '',
    'Run it with `ralph-loop <this epic>`; see every stage with `ralph-loop status <this epic>`.',
  ].join('\n');
}

function stageDescription(definition: PipelineDefinition, stage: PipelineStage): string {
  const what =
    stage.type === 'loop'
      ? `an autoresearch loop (${stage.metric.type} metric); it passes when ${stage.passes_when === 'goal_reached' ? 'it reaches its goal' : 'it ends'}.`
      : `the epic ${stage.epic} to completion with its gates; it passes when all its beads are closed.`;
  return [
    `Stage "${stage.name}" of the pipeline "${definition.name}": runs ${what}`,
    '',
    'Run by the runner itself (role:loop), from the definition Forge keeps in .forge/pipelines/.',
  ].join('\n');
}
