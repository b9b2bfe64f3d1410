// A pipeline's record, `.forge/pipelines/<parent>.json`: its definition as given (programs read in),
// each stage's bead, the loop or epic it runs, the cycles it has had, and the user's answer to its
// question. Forge's own file, written atomically; the question lives beside it as `<parent>.needs-human.md`.
import { join } from 'node:path';
import { z } from 'zod';
import { readFileIfExists, writeFileAtomic, writeJsonAtomic } from '../infra/atomic-file.js';
import { ConfigError } from '../infra/errors.js';
import { listDirIfExists } from '../infra/fs-ops.js';
import { describeProblem, zodProblems } from '../infra/zod-issues.js';
import { PIPELINES_DIR, pipelinePath, pipelineQuestionPath } from './pipeline-paths.js';
import { splitQuestion } from './resume.js';
import { parsePipeline, type PipelineDefinition, type PipelineStage } from './pipeline-schema.js';

export { PIPELINES_DIR, pipelinePath, pipelineQuestionPath } from './pipeline-paths.js';
export const PIPELINE_LABEL = 'pipeline';
export const STAGE_ROLE_LABEL = 'role:loop';

export const STAGE_ANSWERS = ['again', 'accept', 'stop'] as const;
export type StageAnswer = (typeof STAGE_ANSWERS)[number];

const stageRecordSchema = z.strictObject({
  bead: z.string().min(1),
  /** The stage's loop or epic once created; null before the stage first runs. */
  epic: z.string().min(1).nullable(),
  /** 1 for the first loop; each "again" answer starts the next on the artifact as it is. */
  cycle: z.number().int().min(1),
  /** Loops of earlier cycles, archived in the workspace. */
  retired: z.array(z.string().min(1)),
  /** "accept": the stage passes as it ended; "stop": the pipeline ends here. */
  answer: z.enum(['accept', 'stop']).nullable(),
});
export type StageRecord = z.output<typeof stageRecordSchema>;

const recordSchema = z.strictObject({
  version: z.literal(1),
  name: z.string().min(1),
  parent: z.string().min(1),
  /** The definition as the user wrote it (validated again on every read). */
  definition: z.unknown(),
  /** Each loop stage's program text, read when the pipeline was created. */
  programs: z.record(z.string(), z.string()),
  stages: z.record(z.string(), stageRecordSchema),
});

export interface PipelineRecord {
  name: string;
  parent: string;
  /** As the user wrote it: what is stored. */
  raw: unknown;
  definition: PipelineDefinition;
  programs: Record<string, string>;
  stages: Record<string, StageRecord>;
}

/** The pipeline whose parent epic is `parent`, or undefined when that epic is not one. */
export async function readPipeline(repo: string, parent: string): Promise<PipelineRecord | undefined> {
  const path = pipelinePath(repo, parent);
  const text = await readFileIfExists(path);
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(`${path}: not valid JSON (${(error as Error).message})`, {
      hint: 'forge-pack pipeline writes this file; create the pipeline again from its definition.',
    });
  }
  const result = recordSchema.safeParse(value);
  if (!result.success) {
    throw new ConfigError(zodProblems(path, result.error).map(describeProblem).join('\n'));
  }
  const r = result.data;
  return {
    name: r.name,
    parent: r.parent,
    raw: r.definition,
    definition: parsePipeline(r.definition, path),
    programs: r.programs,
    stages: r.stages,
  };
}

/** Every pipeline of the repository, by parent id (a few files: read them all). */
export async function listPipelines(repo: string): Promise<PipelineRecord[]> {
  const names = (await listDirIfExists(join(repo, PIPELINES_DIR))) ?? [];
  const out: PipelineRecord[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const record = await readPipeline(repo, name.slice(0, -'.json'.length));
    if (record !== undefined) out.push(record);
  }
  return out;
}

export async function writePipeline(repo: string, record: PipelineRecord): Promise<void> {
  await writeJsonAtomic(pipelinePath(repo, record.parent), {
    version: 1,
    name: record.name,
    parent: record.parent,
    definition: record.raw,
    programs: record.programs,
    stages: record.stages,
  });
}

/** Changes one stage's record and writes the pipeline at once. */
export async function updateStage(
  repo: string,
  record: PipelineRecord,
  stage: string,
  change: (current: StageRecord) => StageRecord,
): Promise<StageRecord> {
  const current = record.stages[stage];
  if (current === undefined) throw new Error(`pipeline ${record.name} has no stage ${stage}`);
  const next = change(current);
  record.stages[stage] = next;
  await writePipeline(repo, record);
  return next;
}

/** The stage a bead runs, with its definition. */
export function stageOfBead(
  record: PipelineRecord,
  beadId: string,
): { stage: PipelineStage; state: StageRecord } | undefined {
  for (const stage of record.definition.stages) {
    const state = record.stages[stage.name];
    if (state?.bead === beadId) return { stage, state };
  }
  return undefined;
}

// ---- the question a stage that ended short asks ----

export type PipelineQuestion =
  | { state: 'none' }
  | { state: 'unanswered'; stage: string; path: string }
  | { state: 'answered'; stage: string; path: string; answer: StageAnswer }
  | { state: 'unclear'; stage: string; path: string; text: string };

const STAGE_LINE = /^Stage: ([a-z0-9-]+)$/m;

export async function askStageQuestion(
  repo: string,
  parent: string,
  stage: string,
  why: string,
): Promise<string> {
  const path = pipelineQuestionPath(repo, parent);
  const text = [
    `# The pipeline stopped at stage "${stage}"`,
    '',
    `Stage: ${stage}`,
    '',
    why,
    '',
    'What next? Write one word under "## Answer":',
    '- `again`: run another cycle of this stage (a new loop on the artifact as it is now)',
    '- `accept`: take the stage as it is and go on to the next stage',
    '- `stop`: end the pipeline here',
    '',
    '## Answer',
    '',
    `<!-- then run: ralph-loop resume ${parent} (or pass --answer again|accept|stop) -->`,
    '',
  ].join('\n');
  if ((await readFileIfExists(path)) === undefined) await writeFileAtomic(path, text);
  return path;
}

export async function readStageQuestion(repo: string, parent: string): Promise<PipelineQuestion> {
  const path = pipelineQuestionPath(repo, parent);
  const text = await readFileIfExists(path);
  if (text === undefined) return { state: 'none' };
  const stage = STAGE_LINE.exec(text)?.[1] ?? '';
  const { answer } = splitQuestion(text);
  if (answer === undefined || answer === '') return { state: 'unanswered', stage, path };
  const word = answer.trim().split(/\s+/)[0]?.replace(/[`.]/g, '').toLowerCase();
  const known = STAGE_ANSWERS.find((a) => a === word);
  return known === undefined
    ? { state: 'unclear', stage, path, text: answer }
    : { state: 'answered', stage, path, answer: known };
}
