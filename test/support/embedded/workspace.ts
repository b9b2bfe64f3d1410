// Temp workspaces and a settable clock for the embedded store tests.
import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { Clock } from '../../../src/infra/clock.js';

/** A fresh directory under the OS temp dir, removed when the current test finishes. */
export async function tempWorkspace(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-embedded-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

export function issuesPath(cwd: string): string {
  return join(cwd, '.beads', 'issues.jsonl');
}

export function readIssues(cwd: string): Promise<string> {
  return readFile(issuesPath(cwd), 'utf8');
}

/** Writes `.beads/issues.jsonl` as br (or a person) left it, without Forge's metadata file. */
export async function writeIssueLines(cwd: string, lines: readonly object[]): Promise<void> {
  await mkdir(join(cwd, '.beads'), { recursive: true });
  await writeFile(issuesPath(cwd), lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
}

export interface SettableClock extends Clock {
  set(iso: string): void;
}

export function fakeClock(iso: string): SettableClock {
  let now = Date.parse(iso);
  return {
    now: () => now,
    sleep: async () => undefined,
    set(next) {
      now = Date.parse(next);
    },
  };
}
