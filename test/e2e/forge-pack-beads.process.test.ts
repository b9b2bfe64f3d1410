// forge-pack beads as a user runs it, on the embedded store and through the fake br: its program in the
// test's process, and as a process for an environment error, a usage error and a closed pipe.
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { assertBuilt, runCli, runCliInProcess } from '../support/cli.js';
import { lastLinePerId, parseBrJsonl } from '../support/embedded/br-issue-line.js';
import { FAKE_BR_BIN } from '../support/fake-br/fake-br-env.js';

interface Workspace {
  dir: string;
  env: Record<string, string>;
  forge(args: string[]): ReturnType<typeof runCli>;
  forgeProcess(args: string[]): ReturnType<typeof runCli>;
}

async function workspace(options: { withBr: boolean; store?: string }): Promise<Workspace> {
  const base = await mkdtemp(join(tmpdir(), 'forge-beads-'));
  onTestFinished(() => rm(base, { recursive: true, force: true }));
  const bin = join(base, 'bin');
  const dir = join(base, 'project');
  await mkdir(bin);
  await mkdir(dir);
  if (options.withBr) await symlink(FAKE_BR_BIN, join(bin, 'br'));
  // Only our bin dir and node's: a br installed on the machine must not leak into these tests.
  const env = {
    PATH: `${bin}:${join(process.execPath, '..')}:/usr/bin:/bin`,
    HOME: base,
    FAKE_BR_VERSION: '0.2.19',
  };
  const storeArgs = options.store === undefined ? [] : ['--store', options.store];
  return {
    dir,
    env,
    forge: (args) => runCliInProcess('forge-pack', [...storeArgs, ...args], { cwd: dir, env }),
    forgeProcess: (args) => runCli('forge-pack', [...storeArgs, ...args], { cwd: dir, env }),
  };
}

const json = <T>(text: string): T => JSON.parse(text) as T;

beforeAll(assertBuilt);

describe.each([
  { name: 'embedded', withBr: false, store: 'embedded' },
  { name: 'br (fake, chosen by auto)', withBr: true, store: undefined },
])('forge-pack beads on $name', ({ withBr, store }) => {
  it('creates an epic with children and dependencies and lists them in ready order', async () => {
    const ws = await workspace({ withBr, ...(store === undefined ? {} : { store }) });
    expect((await ws.forge(['beads', 'init'])).exitCode).toBe(0);
    const epic = json<{ id: string; issue_type: string }>(
      (await ws.forge(['beads', 'create', 'Ship it', '-t', 'epic', '--json'])).stdout,
    );
    expect(epic.issue_type).toBe('epic');
    const create = async (title: string, ...extra: string[]) =>
      json<{ id: string }>(
        (await ws.forge(['beads', 'create', title, '--parent', epic.id, '--json', ...extra])).stdout,
      ).id;
    const lexer = await create('lexer', '-p', '3');
    const parser = await create('parser', '-p', '1', '--deps', lexer);
    const docs = await create('docs', '-p', '2', '-l', 'role:doer,agent:codex');
    expect([lexer, parser, docs]).toEqual([`${epic.id}.1`, `${epic.id}.2`, `${epic.id}.3`]);

    const ready = json<{ id: string }[]>(
      (await ws.forge(['beads', 'ready', '--parent', epic.id, '--json'])).stdout,
    );
    expect(ready.map((b) => b.id)).toEqual([lexer, docs]);
    const text = await ws.forge(['beads', 'ready', '--parent', epic.id]);
    expect(
      text.stdout
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => l.split(/\s+/)[0]),
    ).toEqual([lexer, docs]);

    expect((await ws.forge(['beads', 'close', lexer, '--reason', 'done', '--json'])).exitCode).toBe(0);
    const after = json<{ id: string }[]>(
      (await ws.forge(['beads', 'ready', '--parent', epic.id, '--json'])).stdout,
    );
    expect(after.map((b) => b.id)).toEqual([parser, docs]);

    const shown = json<{ labels: string[]; dependencies: { id: string; dependency_type: string }[] }[]>(
      (await ws.forge(['beads', 'show', parser, docs, '--json'])).stdout,
    );
    expect(shown[0]!.dependencies).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: lexer, dependency_type: 'blocks' })]),
    );
    expect(shown[1]!.labels.sort()).toEqual(['agent:codex', 'role:doer']);
  });

  it('refuses a dependency cycle and an invalid label with a clear error and a non-zero exit', async () => {
    const ws = await workspace({ withBr, ...(store === undefined ? {} : { store }) });
    await ws.forge(['beads', 'init']);
    const a = (await ws.forge(['beads', 'create', 'a'])).stdout.trim();
    const b = (await ws.forge(['beads', 'create', 'b', '--deps', a])).stdout.trim();
    const cycle = await ws.forge(['beads', 'dep', 'add', a, b]);
    expect(cycle.exitCode).not.toBe(0);
    expect(cycle.stderr).toMatch(/cycle/i);
    const label = await ws.forge(['beads', 'label', 'add', a, 'has space']);
    expect(label.exitCode).not.toBe(0);
    expect(label.stderr).toMatch(/label/i);
  });
});

describe('forge-pack beads: the embedded store on disk', () => {
  it("writes .beads/issues.jsonl that br's line schema accepts, line by line", async () => {
    const ws = await workspace({ withBr: false });
    await ws.forge(['beads', 'init']);
    const epic = (await ws.forge(['beads', 'create', 'E', '-t', 'epic'])).stdout.trim();
    const child = (
      await ws.forge(['beads', 'create', 'child', '--parent', epic, '-l', 'role:doer', '-d', 'text'])
    ).stdout.trim();
    await ws.forge(['beads', 'comment', child, 'a note']);
    await ws.forge(['beads', 'close', child]);
    const path = join(ws.dir, '.beads', 'issues.jsonl');
    // Each change is appended as the whole bead: every line is one br takes, the last per id stands...
    const logged = parseBrJsonl(await readFile(path, 'utf8'));
    expect(logged).toHaveLength(4);
    const last = lastLinePerId(logged);
    expect([...last.keys()].sort()).toEqual([epic, child].sort());
    expect(last.get(child)).toMatchObject({
      status: 'closed',
      comments: [expect.objectContaining({ text: 'a note' })],
    });
    // ...and `sync` leaves one line per bead, sorted, as br exports it.
    expect((await ws.forge(['beads', 'sync'])).exitCode).toBe(0);
    const lines = parseBrJsonl(await readFile(path, 'utf8'));
    expect(lines).toEqual([...last.values()].sort((a, b) => (a.id < b.id ? -1 : 1)));
  });

  it('names the file and line of a corrupt JSONL line and leaves the file as it was', async () => {
    const ws = await workspace({ withBr: false });
    await ws.forge(['beads', 'init']);
    await ws.forge(['beads', 'create', 'kept']);
    const path = join(ws.dir, '.beads', 'issues.jsonl');
    const corrupted = `${await readFile(path, 'utf8')}{"id": "bd-zz", "title": tor\n`;
    await writeFile(path, corrupted);
    const listed = await ws.forge(['beads', 'list']);
    expect(listed.exitCode).not.toBe(0);
    expect(listed.stderr).toContain('issues.jsonl:2');
    const created = await ws.forge(['beads', 'create', 'more']);
    expect(created.exitCode).not.toBe(0);
    expect(await readFile(path, 'utf8')).toBe(corrupted);
  });
});

describe('forge-pack beads: environment and configuration errors', () => {
  it('says how to fix a missing br when br is asked for', async () => {
    const ws = await workspace({ withBr: false, store: 'br' });
    const result = await ws.forgeProcess(['beads', 'list']);
    expect(result.exitCode).toBe(3);
    expect(result.stderr).toContain("br was asked for but 'br' could not be run");
    expect(result.stderr).toContain('--store embedded');
  });

  it('names the file and field of a bad .forge/config.json', async () => {
    const ws = await workspace({ withBr: false });
    await mkdir(join(ws.dir, '.forge'));
    await writeFile(join(ws.dir, '.forge', 'config.json'), JSON.stringify({ store: 'sqlite', colour: true }));
    const result = await ws.forge(['beads', 'list']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('.forge/config.json: colour: unknown key');
    expect(result.stderr).toContain('.forge/config.json: store:');
  });

  it('reports malformed JSON in the config with the file name', async () => {
    const ws = await workspace({ withBr: false });
    await mkdir(join(ws.dir, '.forge'));
    await writeFile(join(ws.dir, '.forge', 'config.json'), '{ "store": ');
    const result = await ws.forge(['beads', 'list']);
    expect(result.exitCode).toBe(4);
    expect(result.stderr).toContain('.forge/config.json: not valid JSON');
  });

  it('gives a usage error (exit 2) for an unknown option, on stderr', async () => {
    const ws = await workspace({ withBr: false });
    const result = await ws.forgeProcess(['beads', 'create', 'x', '--colour']);
    expect(result.exitCode).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain("unknown option '--colour'");
  });
});

describe('output into a closed pipe', () => {
  it('exits quietly when the reader of stdout goes away (`… | head`), instead of crashing on EPIPE', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('../support/cli.js');
    const child = spawn(process.execPath, [BIN['ralph-loop'], '--help'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(code).toBe(0);
  });
});
