import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { epicStatus } from '../../src/cli/epic-status.js';
import { createRunDir } from '../../src/infra/run-dir.js';
import { AppError, BeadStoreError, ExitCode } from '../../src/infra/errors.js';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('epicStatus of an id the store does not know', () => {
  it('is a usage error even when listing its children fails first', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'forge-epic-status-'));
    dirs.push(dir);
    const notFound = (): BeadStoreError =>
      new BeadStoreError('Issue not found: bd-nope', { code: 'ISSUE_NOT_FOUND' });
    const store = {
      // show answers last; children and ready fail at once, as a store may for an unknown parent.
      show: () => new Promise<never>((_resolve, reject) => setTimeout(() => reject(notFound()), 20)),
      children: () => Promise.reject(notFound()),
      ready: () => Promise.reject(notFound()),
    };
    const error = await epicStatus('bd-nope', {
      store,
      runDir: createRunDir(join(dir, 'run')),
      now: () => 0,
      host: 'here',
      isProcessAlive: () => false,
    }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).exitCode).toBe(ExitCode.usage);
    expect((error as AppError).message).toBe(
      'bd-nope has no autoresearch loop and is not a bead in the store.',
    );
  });
});
