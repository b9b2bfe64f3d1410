// `ralph-loop resume <parent>` of a pipeline: acts on the answer to a stage's question. `again` retires
// the stage's loop so the next run starts a new one on the artifact as it is; `accept` lets the stage
// pass as it ended; `stop` ends the pipeline there. Each is idempotent: the record is changed first,
// then the question archived, so a resume cut short is simply run again.
import { readFileIfExists, writeFileAtomic } from '../infra/atomic-file.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { pathExists } from '../infra/atomic-file.js';
import { renamePath } from '../infra/fs-ops.js';
import { ANSWER_HEADING, splitQuestion } from './resume.js';
import {
  pipelineQuestionPath,
  readStageQuestion,
  updateStage,
  type PipelineRecord,
  type StageAnswer,
} from './pipeline-state.js';

export interface PipelineResumeResult {
  stage: string;
  answer: StageAnswer;
  archived: string;
  /** With `again`: the cycle the stage's next loop is. */
  cycle: number;
}

export async function resumePipeline(
  repo: string,
  record: PipelineRecord,
  answerText: string | undefined,
): Promise<PipelineResumeResult> {
  const path = pipelineQuestionPath(repo, record.parent);
  if (answerText !== undefined) {
    const text = await readFileIfExists(path);
    if (text !== undefined) {
      const { question } = splitQuestion(text);
      await writeFileAtomic(path, `${question}\n\n${ANSWER_HEADING}\n\n${answerText.trim()}\n`);
    }
  }
  const question = await readStageQuestion(repo, record.parent);
  const hint = `Write again, accept or stop under "${ANSWER_HEADING}" in ${path} (or pass --answer again|accept|stop), then run: ralph-loop resume ${record.parent}`;
  if (question.state === 'none') {
    throw new AppError(`Nothing to resume: the pipeline ${record.parent} is not waiting for an answer.`, {
      exitCode: ExitCode.usage,
      hint: `Run it: ralph-loop ${record.parent}; see it: ralph-loop status ${record.parent}`,
    });
  }
  if (question.state === 'unanswered') {
    throw new AppError(`The question in ${path} is not answered.`, { exitCode: ExitCode.needsHuman, hint });
  }
  if (question.state === 'unclear') {
    throw new AppError(
      `The answer in ${path} is none of again, accept or stop: ${JSON.stringify(question.text)}.`,
      {
        exitCode: ExitCode.usage,
        hint,
      },
    );
  }
  if (record.stages[question.stage] === undefined) {
    throw new AppError(`${path} names the stage "${question.stage}", which the pipeline does not have.`, {
      exitCode: ExitCode.usage,
      hint: 'Keep the "Stage:" line as Forge wrote it.',
    });
  }
  const state = await updateStage(repo, record, question.stage, (s) => {
    if (question.answer === 'again') {
      // Only the loop that ended is retired: a second resume after a cut-short one changes nothing.
      return s.epic === null
        ? s
        : { ...s, retired: [...s.retired, s.epic], epic: null, cycle: s.cycle + 1, answer: null };
    }
    return { ...s, answer: question.answer };
  });
  const archived = await archiveQuestion(path);
  return { stage: question.stage, answer: question.answer, archived, cycle: state.cycle };
}

async function archiveQuestion(path: string): Promise<string> {
  const base = path.replace(/\.needs-human\.md$/, '');
  let k = 1;
  while (await pathExists(`${base}.needs-human-resolved-${k}.md`)) k += 1;
  const archived = `${base}.needs-human-resolved-${k}.md`;
  await renamePath(path, archived);
  return archived;
}
