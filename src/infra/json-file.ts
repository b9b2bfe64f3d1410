// One read-parse-validate step for JSON files Forge reads: a missing file is undefined, bad JSON or a
// field the schema refuses is a ConfigError naming the file and the field, with its problems attached.
import type { z } from 'zod';
import { readFileIfExists } from './atomic-file.js';
import { ConfigError } from './errors.js';
import { describeProblem, zodProblems, type FieldProblem } from './zod-issues.js';

export interface JsonFileOptions {
  /** How messages name the file (a repo-relative path); default: the path read. */
  file?: string;
  /** What to do about it; default: fix the JSON syntax, or the fields named, in the file. */
  hint?: string;
}

/** JSON text validated by `schema`; `file` only names the source in messages. */
export function parseJsonText<S extends z.ZodType>(
  text: string,
  schema: S,
  options: JsonFileOptions & { file: string },
): z.output<S> {
  const { file } = options;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    const problem: FieldProblem = {
      file,
      field: '',
      message: `not valid JSON (${(error as Error).message})`,
    };
    throw new ConfigError(describeProblem(problem), {
      hint: options.hint ?? `Fix the JSON syntax in ${file}.`,
      problems: [problem],
    });
  }
  return validateJson(raw, schema, options);
}

/**
 * An already-parsed value validated by `schema`: every field it refuses is listed in one ConfigError
 * naming `file` (which only names the source in messages) and the field.
 */
export function validateJson<S extends z.ZodType>(
  value: unknown,
  schema: S,
  options: JsonFileOptions & { file: string },
): z.output<S> {
  const { file } = options;
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = zodProblems(file, result.error);
  throw new ConfigError(problems.map(describeProblem).join('\n'), {
    hint: options.hint ?? `Fix the field${problems.length > 1 ? 's' : ''} above in ${file}.`,
    problems,
  });
}

/** The file at `path` validated by `schema`, or undefined when there is no such file. */
export async function readJsonFile<S extends z.ZodType>(
  path: string,
  schema: S,
  options: JsonFileOptions = {},
): Promise<z.output<S> | undefined> {
  const text = await readFileIfExists(path);
  return text === undefined
    ? undefined
    : parseJsonText(text, schema, { ...options, file: options.file ?? path });
}
