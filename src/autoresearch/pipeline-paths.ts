// Where a pipeline's record and question live: `.forge/pipelines/<parent>.json` and
// `<parent>.needs-human.md`. No schema library here: `ralph-loop status` asks "is this a pipeline?" first.
import { join } from 'node:path';

export const PIPELINES_DIR = join('.forge', 'pipelines');

export function pipelinePath(repo: string, parent: string): string {
  return join(repo, PIPELINES_DIR, `${safeName(parent)}.json`);
}

export function pipelineQuestionPath(repo: string, parent: string): string {
  return join(repo, PIPELINES_DIR, `${safeName(parent)}.needs-human.md`);
}

function safeName(id: string): string {
  return id.replace(/[^A-Za-z0-9._-]/g, '_');
}
