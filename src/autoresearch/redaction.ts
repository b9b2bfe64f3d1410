// Redaction: what the doer must never read (how its work is evaluated) is cut out of its bead.
import type { LoopConfig } from './config.js';

const REDACTED = '[redacted: how the work is evaluated]';

/**
 * Strings the doer must never read: the metric command and how its score is read, the rubric's path
 * and its lines. Short strings are left out: they would match ordinary words.
 */
export function blindSecrets(config: LoopConfig, rubric: string | undefined): string[] {
  const { metric } = config;
  const secrets: string[] = [];
  if (metric.type === 'hard') {
    secrets.push(metric.command);
    if (metric.score.from === 'regex') secrets.push(metric.score.pattern);
    if (metric.score.from === 'json') secrets.push(metric.score.path);
  } else {
    secrets.push(metric.rubric_path);
    for (const line of (rubric ?? '').split('\n')) secrets.push(line.trim());
  }
  const long = secrets.filter((secret) => secret.length >= 6 && !/^[#*\-\s|>]*$/.test(secret));
  return [...new Set(long)].sort((a, b) => b.length - a.length);
}

export function redactSecrets(text: string, secrets: readonly string[]): { text: string; count: number } {
  let count = 0;
  let out = text;
  for (const secret of secrets) {
    const parts = out.split(secret);
    count += parts.length - 1;
    out = parts.join(REDACTED);
  }
  return { text: out, count };
}
