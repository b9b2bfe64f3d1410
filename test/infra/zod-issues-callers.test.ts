// Every file Forge validates with zod reports its problems through the one formatter: each message
// names the file, the field (`a.b[0]`) and the problem, in the same shape whatever reads it.
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadScript } from '../../src/agents/scripted-script.js';
import { readJudgeOutput } from '../../src/autoresearch/judge-output.js';
import { readLedger } from '../../src/autoresearch/ledger.js';
import { readTerminalSignal, TERMINAL_SIGNAL_FILE } from '../../src/autoresearch/signals.js';
import { createFileBackend, META_FILE } from '../../src/beads/embedded/file-backend.js';
import { parseIssuesJsonl } from '../../src/beads/embedded/line-format.js';
import { IMPORTS_PATH, readImportsRegistry } from '../../src/cli/import-registry.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

// These tests keep the loop's files on disk, beside the repository they work on.
const loopFiles = diskLoopFiles();

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-zod-callers-'));
  dirs.push(dir);
  return dir;
}

/** The message a caller gives for bad content: thrown, or returned as a failure's reason. */
async function messageOf(run: () => Promise<unknown>): Promise<string> {
  try {
    const result = (await run()) as { ok?: boolean; reason?: string };
    if (result?.ok === false && typeof result.reason === 'string') return result.reason;
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected the content to be refused');
}

interface Case {
  name: string;
  /** Writes the bad file in `dir` and reads it back the way Forge does; the message it gives. */
  read: (dir: string) => Promise<string>;
  /** `file: field: problem` as the formatter writes it (the file relative to `dir`). */
  expected: (dir: string) => string;
}

const cases: Case[] = [
  {
    name: 'the arbiter’s terminal signal',
    read: async (dir) => {
      await writeFile(join(dir, TERMINAL_SIGNAL_FILE), JSON.stringify({ type: 'terminal', reason: 7 }));
      return messageOf(() => readTerminalSignal(diskLoopFiles(), dir));
    },
    expected: (dir) => `${join(dir, TERMINAL_SIGNAL_FILE)}: reason: `,
  },
  {
    name: 'a judge’s output file',
    read: async (dir) => {
      const path = join(dir, 'judge-output-1.json');
      await writeFile(path, JSON.stringify({ score: 0.5, findings: 'none' }));
      return messageOf(() => readJudgeOutput(diskLoopFiles(), path));
    },
    expected: (dir) => `${join(dir, 'judge-output-1.json')}: findings: expected a list of findings`,
  },
  {
    name: 'a ledger line (named by file and line)',
    read: async (dir) => {
      const path = join(dir, 'research-log.jsonl');
      await writeFile(path, `${JSON.stringify({ iter: 'one' })}\n`);
      return messageOf(() => readLedger(loopFiles, path));
    },
    expected: (dir) => `${join(dir, 'research-log.jsonl')}:1: not a ledger line (iter: expected number`,
  },
  {
    name: 'the import registry',
    read: async (dir) => {
      await mkdir(join(dir, '.forge'));
      await writeFile(
        join(dir, IMPORTS_PATH),
        JSON.stringify({ version: 1, sync_back: { a: { file: '' } } }),
      );
      return messageOf(() => readImportsRegistry(dir));
    },
    expected: () => `${IMPORTS_PATH}: sync_back.a.format: `,
  },
  {
    name: 'the scripted agent’s script: an unknown key',
    read: async (dir) => {
      const path = join(dir, 'script.json');
      await writeFile(path, JSON.stringify({ rules: [{ steps: [{ say: 'hi' }], colour: 'red' }] }));
      return messageOf(() => loadScript(path));
    },
    expected: (dir) => `${join(dir, 'script.json')}: rules[0].colour: unknown key`,
  },
  {
    name: 'the embedded store’s metadata file',
    read: async (dir) => {
      const backend = createFileBackend({ beadsDir: dir });
      await backend.init('fx');
      await writeFile(join(dir, META_FILE), JSON.stringify({ prefix: 'fx', colour: 'red' }));
      return messageOf(() => backend.update(() => undefined));
    },
    expected: (dir) => `${join(dir, META_FILE)}: colour: unknown key`,
  },
  {
    name: 'an embedded store issue line (named by file and line)',
    read: async (dir) => {
      const path = join(dir, 'issues.jsonl');
      return messageOf(async () => parseIssuesJsonl(`${JSON.stringify({ id: 'fx-1', title: 3 })}\n`, path));
    },
    expected: (dir) => `${join(dir, 'issues.jsonl')}:1: not a valid issue line: title: expected string`,
  },
];

describe('zod problems, as each reader of a validated file reports them', () => {
  it.each(cases)('$name', async ({ read, expected }) => {
    const dir = await tempDir();
    const message = await read(dir);
    expect(message).toContain(expected(dir));
    expect(message).not.toMatch(/\(root\)|Invalid input: /);
  });
});
