// Which format a source file is in: from its name first, then from what it holds.
import type { ImportFormat } from './types.js';

/** The file names each format is known by, for finding one in a directory. */
export const KNOWN_FILES: Record<Exclude<ImportFormat, 'specs'>, string> = {
  prd: 'prd.json',
  requirements: 'requirements.json',
  plan: 'IMPLEMENTATION_PLAN.md',
};

export function detectFormat(name: string, text: string): ImportFormat | undefined {
  const base = name.replace(/^.*[\\/]/, '').toLowerCase();
  if (base === 'prd.json') return 'prd';
  if (base === 'requirements.json') return 'requirements';
  if (base === 'implementation_plan.md') return 'plan';
  const head = text.replace(/^\uFEFF/, '').trimStart();
  if (base.endsWith('.json')) {
    if (/"userStories"\s*:/.test(text)) return 'prd';
    if (head.startsWith('[') || /"requirements"\s*:/.test(text)) return 'requirements';
    return undefined;
  }
  if (base.endsWith('.md') || base.endsWith('.markdown')) {
    if (/^---\r?\n/.test(text.replace(/^\uFEFF/, ''))) return 'specs';
    if (/^\s*[-*+]\s+\[[ xX]\]/m.test(text)) return 'plan';
  }
  return undefined;
}
