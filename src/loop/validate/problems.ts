// What `forge-pack validate` reports: one problem per thing wrong with an epic, each with what to do about it.

export type Severity = 'error' | 'warning';

/** The checks, in the order their problems are listed. */
export const CHECKS = [
  'cycle',
  'dangling',
  'unreachable',
  'label',
  'role',
  'agent',
  'gate',
  'loop',
  'template',
] as const;
export type CheckName = (typeof CHECKS)[number];

export interface ValidationProblem {
  severity: Severity;
  check: CheckName;
  /** The bead id or file path the problem concerns. */
  subject: string;
  message: string;
  /** One line saying what to do. */
  fix: string;
}

/** Grouped by check, errors before warnings within a check, then by subject: a stable order to read and diff. */
export function sortProblems(problems: readonly ValidationProblem[]): ValidationProblem[] {
  const rank = (p: ValidationProblem) => CHECKS.indexOf(p.check) * 2 + (p.severity === 'error' ? 0 : 1);
  return [...problems].sort(
    (a, b) =>
      rank(a) - rank(b) ||
      (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0) ||
      (a.message < b.message ? -1 : a.message > b.message ? 1 : 0),
  );
}

/** The same problem found twice (an epic checked alone and inside its parent) is listed once. */
export function uniqueProblems(problems: readonly ValidationProblem[]): ValidationProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.check}\u0000${p.subject}\u0000${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export function hasErrors(problems: readonly ValidationProblem[]): boolean {
  return problems.some((p) => p.severity === 'error');
}

/** `a, b, c and 4 more`: names a list without letting a big graph flood one line. */
export function nameSome(ids: readonly string[], limit = 5): string {
  const shown = ids.slice(0, limit).join(', ');
  return ids.length > limit ? `${shown} and ${ids.length - limit} more` : shown;
}
