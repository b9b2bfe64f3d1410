// What every source parser produces: items with their place in the file, or problems naming file, line and field.

export const IMPORT_FORMATS = ['prd', 'specs', 'plan', 'requirements'] as const;
export type ImportFormat = (typeof IMPORT_FORMATS)[number];

export interface ImportItem {
  /** The item's id within its source: a story id, a spec id, a requirement id, a checklist item's text. */
  id: string;
  /** The file holding the item, as given to the parser (relative to the repository). */
  file: string;
  /** 1-based line of the item in its file. */
  line: number;
  title: string;
  description: string;
  /** Already done in the source: imported closed. */
  done: boolean;
  /** Lower runs first; undefined: after every item that has one. */
  priority?: number | undefined;
  /** Ids of items of the same source this one waits for. */
  dependsOn: string[];
  /** Extra labels the format carries (already valid br labels). */
  labels: string[];
}

export interface ParsedSource {
  format: ImportFormat;
  /** A title for the epic when the import makes one. */
  title: string;
  /** Context for the epic's description. */
  description: string;
  /** In the order they should run. */
  items: ImportItem[];
}

export interface ImportProblem {
  file: string;
  line?: number | undefined;
  /** The item (its id or index) the problem is in. */
  item?: string | undefined;
  field?: string | undefined;
  message: string;
}

export type ParseResult = { ok: true; source: ParsedSource } | { ok: false; problems: ImportProblem[] };

/** `specs/foo.md line 4: item foo: passes: expected true or false`. */
export function formatProblem(problem: ImportProblem): string {
  const where = problem.line === undefined ? problem.file : `${problem.file} line ${problem.line}`;
  const item = problem.item === undefined ? '' : ` ${problem.item}:`;
  const field = problem.field === undefined ? '' : ` ${problem.field}:`;
  return `${where}:${item}${field} ${problem.message}`;
}

/** The 1-based line of a character offset in text. */
export function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset && i < text.length; i += 1) if (text.charCodeAt(i) === 10) line += 1;
  return line;
}

/** A source file with one item marked done: the new text, none when it already was, or why not. */
export type MarkResult = { ok: true; text?: string } | { ok: false; reason: string };
