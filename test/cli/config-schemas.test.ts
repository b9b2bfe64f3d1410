// The JSON Schemas in schemas/ are generated from the zod schemas and committed: they must never drift.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, renderSchemas } from '../../scripts/gen-config-schema.js';
import { loopConfigSchema } from '../../src/autoresearch/config-schema.js';
import { runStateSchema } from '../../src/autoresearch/spec-state/schema.js';
import { pipelineSchema } from '../../src/autoresearch/pipeline-schema.js';
import { forgeConfigSchema } from '../../src/cli/forge-config.js';

describe('config JSON Schemas', () => {
  it('are what the zod schemas generate (regenerate with: npm run schemas)', async () => {
    const rendered = await renderSchemas();
    expect([...rendered.keys()].sort()).toEqual([
      'schemas/forge-config.schema.json',
      'schemas/loop-config.schema.json',
      'schemas/pipeline.schema.json',
      'schemas/spec-run-state.schema.json',
    ]);
    for (const [file, text] of rendered) {
      const committed = await readFile(join(ROOT, file), 'utf8').catch(() => '(missing)');
      expect(committed, `${file} is out of date: run npm run schemas`).toBe(text);
    }
  });

  it('describe every field of the configs and refuse unknown keys', async () => {
    const cases = [
      { file: 'schemas/forge-config.schema.json', shape: forgeConfigSchema.shape },
      { file: 'schemas/loop-config.schema.json', shape: loopConfigSchema.shape },
      { file: 'schemas/spec-run-state.schema.json', shape: runStateSchema.shape },
      { file: 'schemas/pipeline.schema.json', shape: pipelineSchema.shape },
    ];
    for (const { file, shape } of cases) {
      const schema = JSON.parse(await readFile(join(ROOT, file), 'utf8')) as {
        $schema: string;
        properties: Record<string, unknown>;
        additionalProperties: boolean;
      };
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(Object.keys(schema.properties).sort()).toEqual(Object.keys(shape).sort());
      expect(schema.additionalProperties).toBe(false);
    }
  });
});
