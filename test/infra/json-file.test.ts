// Reading a JSON file Forge validates: missing is undefined, and every fault names the file and field.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { describe, expect, it, onTestFinished } from 'vitest';
import { ConfigError } from '../../src/infra/errors.js';
import { readJsonFile } from '../../src/infra/json-file.js';

const schema = z.strictObject({ runner: z.strictObject({ max_attempts: z.number().int().positive() }) });

async function file(text?: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-json-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, 'config.json');
  if (text !== undefined) await writeFile(path, text);
  return path;
}

async function failure(text: string): Promise<ConfigError> {
  const error: unknown = await readJsonFile(await file(text), schema, { file: '.forge/config.json' }).catch(
    (caught: unknown) => caught,
  );
  if (!(error instanceof ConfigError)) throw new Error('expected a ConfigError');
  return error;
}

describe('readJsonFile', () => {
  it('returns the validated content, or undefined when the file does not exist', async () => {
    expect(await readJsonFile(await file('{"runner":{"max_attempts":2}}'), schema)).toEqual({
      runner: { max_attempts: 2 },
    });
    expect(await readJsonFile(await file(), schema)).toBeUndefined();
  });

  it('bad JSON: one problem for the whole file, and a hint to fix its syntax', async () => {
    const error = await failure('{"runner": ');
    expect(error.message).toMatch(/^\.forge\/config\.json: not valid JSON \(/);
    expect(error.problems).toEqual([{ file: '.forge/config.json', field: '', message: expect.any(String) }]);
    expect(error.hint).toBe('Fix the JSON syntax in .forge/config.json.');
  });

  it('refused fields: each named with its path, as text and as problems', async () => {
    const error = await failure('{"runner":{"max_attempts":0,"retries":1}}');
    expect(error.problems).toEqual([
      { file: '.forge/config.json', field: 'runner.max_attempts', message: expect.stringContaining('>0') },
      { file: '.forge/config.json', field: 'runner.retries', message: 'unknown key' },
    ]);
    expect(error.message.split('\n')).toEqual([
      expect.stringMatching(/^\.forge\/config\.json: runner\.max_attempts: /),
      '.forge/config.json: runner.retries: unknown key',
    ]);
    expect(error.hint).toBe('Fix the fields above in .forge/config.json.');
  });
});
