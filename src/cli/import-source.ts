// Finds and reads what `forge-pack beads import` was pointed at: a file, a directory holding one, or specs/.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { detectFormat, KNOWN_FILES } from '../beads/import/detect.js';
import { parsePlan } from '../beads/import/plan.js';
import { parsePrd } from '../beads/import/prd.js';
import { parseRequirements } from '../beads/import/requirements.js';
import { parseSpecs } from '../beads/import/specs.js';
import type { ImportFormat, ParseResult } from '../beads/import/types.js';
import { UsageError } from '../infra/errors.js';

export interface LoadedSource {
  /** The file or specs directory, relative to the repository (`/`-separated). */
  source: string;
  result: ParseResult;
}

const FORMAT_HINT = 'Name the file, or pass --format prd|specs|plan|requirements.';

export async function loadImportSource(
  path: string,
  repo: string,
  format: ImportFormat | undefined,
): Promise<LoadedSource> {
  const shown = (abs: string): string => {
    const rel = relative(repo, abs);
    return (rel === '' ? '.' : rel).split(sep).join('/');
  };
  const info = await stat(path).catch(() => undefined);
  if (info === undefined) {
    throw new UsageError(`${path}: no such file or directory.`, {
      hint: 'Give a prd.json, requirements.json, IMPLEMENTATION_PLAN.md, a specs/ directory, or a directory holding one.',
    });
  }
  if (info.isDirectory()) return loadDirectory(path, format, shown);
  const text = await readFile(path, 'utf8');
  const chosen = format ?? detectFormat(path, text);
  if (chosen === undefined) {
    throw new UsageError(`${shown(path)}: cannot tell which format this file is in.`, { hint: FORMAT_HINT });
  }
  const source = shown(path);
  if (chosen === 'specs') return { source, result: parseSpecs([{ file: source, text }], source) };
  return { source, result: parseFile(chosen, text, source) };
}

function parseFile(format: Exclude<ImportFormat, 'specs'>, text: string, file: string): ParseResult {
  if (format === 'prd') return parsePrd(text, file);
  if (format === 'requirements') return parseRequirements(text, file);
  return parsePlan(text, file);
}

async function loadDirectory(
  dir: string,
  format: ImportFormat | undefined,
  shown: (abs: string) => string,
): Promise<LoadedSource> {
  const names = await readdir(dir);
  if (format !== undefined && format !== 'specs')
    return loadFile(join(dir, KNOWN_FILES[format]), format, shown);
  if (format === undefined) {
    const present = (Object.entries(KNOWN_FILES) as [Exclude<ImportFormat, 'specs'>, string][]).filter(
      ([, name]) => names.includes(name),
    );
    if (present.length > 1) {
      throw new UsageError(
        `${shown(dir)} holds ${present.map(([, name]) => name).join(' and ')}: import which?`,
        { hint: FORMAT_HINT },
      );
    }
    if (present.length === 1) {
      const [found, name] = present[0]!;
      return loadFile(join(dir, name), found, shown);
    }
  }
  const specsDir =
    names.includes('specs') && (await stat(join(dir, 'specs'))).isDirectory() ? join(dir, 'specs') : dir;
  const files = (await readdir(specsDir)).filter((name) => name.toLowerCase().endsWith('.md')).sort();
  if (files.length === 0) {
    throw new UsageError(
      `${shown(dir)} holds no prd.json, requirements.json, IMPLEMENTATION_PLAN.md or specs/*.md.`,
      {
        hint: FORMAT_HINT,
      },
    );
  }
  const specs = await Promise.all(
    files.map(async (name) => ({
      file: shown(join(specsDir, name)),
      text: await readFile(join(specsDir, name), 'utf8'),
    })),
  );
  const source = shown(specsDir);
  return { source, result: parseSpecs(specs, source) };
}

async function loadFile(
  path: string,
  format: Exclude<ImportFormat, 'specs'>,
  shown: (abs: string) => string,
): Promise<LoadedSource> {
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined) throw new UsageError(`${shown(path)}: no such file.`, { hint: FORMAT_HINT });
  const source = shown(path);
  return { source, result: parseFile(format, text, source) };
}
