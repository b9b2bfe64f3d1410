// Streams recorded from the real opencode 1.18.33 and Gemini CLI 0.61.0 against the scripted model
// server (test/e2e-claude), replayed by the fake agent in the adapter tests.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FakeAction } from '../support/fake-agents/harness.js';

const DIR = join(dirname(fileURLToPath(import.meta.url)), 'recorded');

/** The recorded file's lines, as they were printed. */
export function recorded(name: string): string[] {
  return readFileSync(join(DIR, name), 'utf8')
    .split('\n')
    .filter((line) => line !== '');
}

/** Stdout lines of a recording, replayed verbatim. */
export function replay(name: string): FakeAction[] {
  return recorded(name).map((line) => ({ line }));
}

export function replayStderr(name: string): FakeAction[] {
  return recorded(name).map((line) => ({ stderr: line }));
}
