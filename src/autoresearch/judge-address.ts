// Text written into what a soft judge reads for the judge rather than for the artifact's readers: an
// instruction to set its rubric aside, a note to the model or the grader, a score dictated, a turn of a
// conversation with a model, or characters no reader sees. A judge is a model reading the artifact
// whole; its prompt says that text in the artifact addressed to it is a finding, never an instruction,
// but a prompt is a request, not a wall. Pure: the caller counts these as it does suppressions, so
// only what the doer added counts, not what the artifact held before the loop.
import { resolve } from 'node:path';
import type { LoopFiles } from '../infra/loop-files.js';
import type { LoopConfig } from './config.js';
import { countMatches } from './match-counts.js';

const WHO = String.raw`(?:ai|a\.i\.|llm|language model|model|assistant|chatbot|judge|evaluator|grader|reviewer|scorer|assessor|examiner|rater|marker)s?`;
const WHAT = String.raw`(?:artifact|document|doc|spec|specification|text|work|submission|answer|essay|page|file|response|output|draft|proposal)`;

const ADDRESSED: readonly RegExp[] = [
  // Told to set its instructions aside.
  /\b(?:ignore|disregard|forget|override|bypass|skip)\b[^\n.]{0,40}?\b(?:previous|prior|above|earlier|preceding|all|any|your|the|other|system)\s+(?:\w+\s+){0,2}?(?:instructions?|prompts?|rules?|rubrics?|guidelines?|criteria|directions?|directives?)\b/gi,
  // Spoken to as a model or a judge.
  new RegExp(
    String.raw`\b(?:note|message|instructions?|attention|reminder|hint|request|directive)\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|an?\s+)?(?:automated\s+|ai\s+)?${WHO}\b`,
    'gi',
  ),
  new RegExp(
    String.raw`\b(?:dear|hey|hello|hi|attention)\s*,?\s+(?:the\s+)?(?:automated\s+|ai\s+)?${WHO}\b`,
    'gi',
  ),
  new RegExp(
    String.raw`\b(?:if\s+you\s+are|you\s+are|as)\s+an?\s+(?:ai|llm|language model|automated|impartial|independent|expert)?\s*(?:judge|evaluator|grader|scorer|rater|assessor|examiner|reviewer|model|assistant)\b`,
    'gi',
  ),
  // A score dictated to whoever scores it.
  new RegExp(
    String.raw`\b(?:score|rate|grade|mark|rank)\s+(?:(?:this|that)(?:\s+${WHAT})?|it|me|the\s+${WHAT})\b[^\n.]{0,40}?(?:\b\d+(?:\.\d+)?\b|\b(?:perfect|full|maximum|max|top|highest|high)\b)`,
    'gi',
  ),
  new RegExp(
    String.raw`\b(?:give|assign|award)\s+(?:(?:this|that)(?:\s+${WHAT})?|it|me|the\s+${WHAT})\s+(?:an?\s+|the\s+)?(?:(?:perfect|full|maximum|max|top|highest|high|passing)\s+)?(?:score|rating|grade|marks?)\b`,
    'gi',
  ),
  /\{\s*["']score["']\s*:\s*-?\d/gi,
  // A turn of a conversation with a model, or the markup of one (\`User:\` alone is a glossary's too).
  /^[ \t>#*-]*(?:system prompt|assistant|human)\s*:/gim,
  /<\|?\s*\/?\s*(?:system|assistant|user|im_start|im_end|instructions?|endoftext)\s*\|?>/gi,
  /\[\/?INST\]|<<\/?SYS>>/g,
];

/** Characters no reader of the page sees: zero-width ones, and those that reorder text (bidi). */
const HIDDEN = /[\u200B-\u200D\u2060\u2061-\u2064\uFEFF\u202A-\u202E\u2066-\u2069\u{E0000}-\u{E007F}]/gu;

/** What in `text` speaks to the judge, by what it says (lowercased), with how often. */
export function addressedToJudge(text: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const [key, count] of countMatches(text, ADDRESSED)) {
    const lower = key.toLowerCase();
    found.set(lower, (found.get(lower) ?? 0) + count);
  }
  for (const match of text.matchAll(HIDDEN)) {
    // A byte-order mark that starts the file is an editor's.
    if (match.index === 0 && match[0] === '\uFEFF') continue;
    const key = `hidden character U+${(match[0].codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')}`;
    found.set(key, (found.get(key) ?? 0) + 1);
  }
  return found;
}

/**
 * Setup's warning for a soft loop whose artifact already speaks to models or graders (a prompt): what
 * the doer adds of that kind is tamper unless the loop allows it, which such a loop must. Nothing for
 * an artifact that is a folder or cannot be read.
 */
export async function artifactSpeaksToModels(
  files: LoopFiles,
  repo: string,
  config: LoopConfig,
): Promise<string[]> {
  const metric = config.metric;
  if (metric.type !== 'soft' || config.scope.doer_may_address_judge) return [];
  const text = await files.readIfExists(resolve(repo, metric.artifact_path)).catch(() => undefined);
  const first = text === undefined ? undefined : [...addressedToJudge(text).keys()][0];
  if (first === undefined) return [];
  return [
    `${metric.artifact_path} already speaks to a model or a grader ("${first}"): text of that kind the doer adds is tamper. If the artifact is a prompt, make the loop again with --doer-may-address-judge.`,
  ];
}
