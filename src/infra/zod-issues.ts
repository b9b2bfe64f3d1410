// The one formatter of zod issues: each becomes a structured problem naming the file and the field
// path, so callers (the CLI adding the flag that set a field) read fields, never re-parse messages.
import type { z } from 'zod';

/** One thing wrong in a file: `file: field: message` (no field: the whole document). */
export interface FieldProblem {
  file: string;
  /** `caps.max_iterations`, `scope.doer_paths[0]`; empty for the document itself. */
  field: string;
  message: string;
}

/** `caps.max_iterations`, `scope.doer_paths[0]`. */
export function formatFieldPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

export interface ZodProblemOptions {
  /**
   * A value matching no branch of a plain union: by default one problem, "Invalid input"; `furthest`
   * describes instead the branch that got furthest into the value (for documents of another program,
   * where "which field" matters more than "which shapes").
   */
  unions?: 'whole' | 'furthest';
}

/** Every issue of a failed parse as problems in `file`: one per unknown key, one per other issue. */
export function zodProblems(
  file: string,
  error: z.ZodError,
  options: ZodProblemOptions = {},
): FieldProblem[] {
  return error.issues.flatMap((issue) => issueProblems(file, issue, [], options));
}

function issueProblems(
  file: string,
  issue: z.core.$ZodIssue,
  prefix: readonly PropertyKey[],
  options: ZodProblemOptions,
): FieldProblem[] {
  if (issue.code === 'invalid_union' && options.unions === 'furthest') {
    const branches = issue.errors.map((branch) => branch[0]).filter((i) => i !== undefined);
    const furthest = branches.reduce<z.core.$ZodIssue | undefined>(
      (best, next) => (best === undefined || next.path.length > best.path.length ? next : best),
      undefined,
    );
    if (furthest !== undefined) return issueProblems(file, furthest, [...prefix, ...issue.path], options);
  }
  issue = prefix.length === 0 ? issue : { ...issue, path: [...prefix, ...issue.path] };
  const field = formatFieldPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((key) => ({
      file,
      field: formatFieldPath([...issue.path, key]),
      message: 'unknown key',
    }));
  }
  // A bad record key (a gate name): zod says only "Invalid key in record"; the key's own rule says why.
  if (issue.code === 'invalid_key') {
    return [{ file, field, message: plain(issue.issues[0]?.message ?? issue.message) }];
  }
  const allowed = (issue as { options?: unknown }).options;
  if (issue.code === 'invalid_union' && Array.isArray(allowed)) {
    return [{ file, field, message: `expected one of ${allowed.map((o) => JSON.stringify(o)).join(', ')}` }];
  }
  return [{ file, field, message: plain(issue.message) }];
}

/** zod's own messages start "Invalid input: expected …"; ours say "expected …". */
function plain(message: string): string {
  return message.replace(/^Invalid input: /, '');
}

/** The line a person reads: `.autoresearch/config.json: caps.max_iterations: expected …`. */
export function describeProblem(problem: FieldProblem): string {
  return problem.field === ''
    ? `${problem.file}: ${problem.message}`
    : `${problem.file}: ${problem.field}: ${problem.message}`;
}

/** Every problem of a failed parse on one line, `; ` between them: for messages that are one line. */
export function describeZodError(file: string, error: z.ZodError): string {
  return zodProblems(file, error).map(describeProblem).join('; ');
}

/** The same, for a caller that names the file (and line) itself: `field: message; …`. */
export function describeZodFields(error: z.ZodError): string {
  return zodProblems('', error)
    .map((p) => (p.field === '' ? p.message : `${p.field}: ${p.message}`))
    .join('; ');
}
