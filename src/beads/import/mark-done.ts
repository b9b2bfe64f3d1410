// One entry point for writing an item back as done, whatever its format.
import { markPlanDone } from './plan.js';
import { markPrdDone } from './prd.js';
import { markRequirementDone } from './requirements.js';
import { markSpecDone } from './specs.js';
import type { ImportFormat, MarkResult } from './types.js';

export function markDone(format: ImportFormat, text: string, item: string): MarkResult {
  switch (format) {
    case 'prd':
      return markPrdDone(text, item);
    case 'requirements':
      return markRequirementDone(text, item);
    case 'plan':
      return markPlanDone(text, item);
    case 'specs':
      return markSpecDone(text);
  }
}
