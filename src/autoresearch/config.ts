// The loop's `.autoresearch/config.json`: its loader and validation, every problem named by file and
// field path. The schema is in config-schema.ts, the schema-free value rules in config-values.ts.
import { ConfigError } from '../infra/errors.js';
import { validateJson } from '../infra/json-file.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { loopConfigSchema, type LoopConfig } from './config-schema.js';
import { locateJsonError } from './json-text.js';

export type {
  CapsConfig,
  GuardConfig,
  HardMetricConfig,
  LoopConfig,
  LoopConfigFile,
  MetricConfig,
  ScoreSource,
  SoftMetricConfig,
  TrackConfig,
} from './config-schema.js';
export type { Direction, Threshold } from './config-values.js';

/** Validates an already-parsed value; `file` only names the source in messages. */
export function parseLoopConfig(value: unknown, file: string): LoopConfig {
  return validateJson(value, loopConfigSchema, { file });
}

/** Reads and validates `.autoresearch/config.json`; every problem is listed in one ConfigError. */
export async function loadLoopConfig(files: LoopFiles, path: string): Promise<LoopConfig> {
  const content = await files.readIfExists(path);
  if (content === undefined) {
    throw new ConfigError(`${path}: file not found`, {
      hint: 'Create the loop with `forge-pack loop` first.',
    });
  }
  let value: unknown;
  try {
    value = JSON.parse(content);
  } catch {
    const at = locateJsonError(content);
    throw new ConfigError(`${path}: invalid JSON at line ${at.line}, column ${at.column}: ${at.message}`);
  }
  return parseLoopConfig(value, path);
}
