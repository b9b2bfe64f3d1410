// forge-pack beads import as a user runs it: the built CLI on a temp repo with the embedded store,
// each format from its fixture, then ralph-loop with the fake agent over the imported epic. Each
// format's import and every run are processes; dry runs, re-imports, refusals and reading the store
// back run the same program in the test's process (`repo.beads`), a process each adding nothing.
import { cp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, ROOT } from '../support/cli.js';
import { makeRepo, type Repo } from '../support/runner-repo.js';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'import');

beforeAll(assertBuilt);

interface Bead {
  id: string;
  title: string;
  status: string;
  priority: number;
  labels: string[];
  dependencies?: { id: string; dependency_type: string }[];
}

async function children(repo: Repo, epic: string): Promise<Bead[]> {
  const result = await repo.beads(['children', epic, '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Bead[];
}

async function allBeads(repo: Repo): Promise<Bead[]> {
  const result = await repo.beads(['list', '-a', '--json']);
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Bead[];
}

/** The titles each bead waits for, by title. */
async function blockers(repo: Repo, beads: Bead[]): Promise<Record<string, string[]>> {
  const shown = await repo.beads(['show', ...beads.map((b) => b.id), '--json']);
  const title = new Map(beads.map((b) => [b.id, b.title]));
  const out: Record<string, string[]> = {};
  for (const bead of JSON.parse(shown.stdout) as Bead[]) {
    const waits = (bead.dependencies ?? [])
      .filter((d) => d.dependency_type === 'blocks')
      .map((d) => title.get(d.id) ?? d.id)
      .sort();
    if (waits.length > 0) out[bead.title] = waits;
  }
  return out;
}

const storeFile = (repo: Repo) => readFile(join(repo.dir, '.beads', 'issues.jsonl'), 'utf8').catch(() => '');

interface Case {
  format: string;
  /** Fixture paths copied into the repo (file or directory). */
  files: string[];
  /** What the user types. */
  arg: string;
  epicTitle: string;
  runOrder: string[];
  closed: string[];
  waits: Record<string, string[]>;
}

const CASES: Case[] = [
  {
    format: 'prd',
    files: ['prd.json'],
    arg: 'prd.json',
    epicTitle: 'Bookshop (prd.json)',
    runOrder: ['US-002: Cart', 'US-004: Wish list', 'US-003: Checkout'],
    closed: ['US-001: Catalogue'],
    waits: {},
  },
  {
    format: 'specs',
    files: ['specs'],
    arg: 'specs',
    epicTitle: 'Specs from specs/',
    runOrder: ['Database: schema and migrations', 'Sign in with email', 'Profile page'],
    closed: ['Write the README'],
    waits: {
      'Sign in with email': ['Database: schema and migrations'],
      'Profile page': ['Database: schema and migrations', 'Sign in with email'],
    },
  },
  {
    format: 'plan',
    files: ['IMPLEMENTATION_PLAN.md'],
    arg: 'IMPLEMENTATION_PLAN.md',
    epicTitle: 'Parser rewrite',
    runOrder: [
      'Tokenise strings, see spec',
      'Escapes',
      'Unterminated strings are an error',
      'Parse expressions',
    ],
    closed: ['Tokenise identifiers and numbers', 'Parse statements'],
    waits: {
      'Tokenise strings, see spec': ['Tokenise identifiers and numbers'],
      Escapes: ['Tokenise strings, see spec'],
      'Unterminated strings are an error': ['Escapes'],
      'Parse expressions': ['Unterminated strings are an error'],
      'Parse statements': ['Parse expressions'],
    },
  },
  {
    format: 'requirements',
    files: ['requirements.json'],
    // A directory holding the file: found by its name.
    arg: '.',
    epicTitle: 'Requirements from requirements.json',
    runOrder: ['R2: The CLI prints --help with examples', 'R3: Errors name the file and the line'],
    closed: ['R1: The CLI reads a config file from ~/.toolrc', 'R4: Output can be JSON'],
    waits: {},
  },
];

async function copyFixtures(repo: Repo, files: string[], from = FIXTURES): Promise<void> {
  for (const file of files)
    await cp(join(from, file), join(repo.dir, file.replace(/^bad\//, '')), { recursive: true });
}

describe.each(CASES)('forge-pack beads import: $format', (c) => {
  it('dry run writes nothing; the import makes the epic, order, deps and closed items; a second import adds nothing', async () => {
    const repo = await makeRepo('embedded');
    await copyFixtures(repo, c.files);
    const before = await storeFile(repo);

    const dry = await repo.beads(['import', c.arg, '--dry-run', '--json']);
    expect(dry.exitCode, dry.stderr).toBe(0);
    const plan = JSON.parse(dry.stdout) as {
      format: string;
      created: number;
      beads: { title: string; status: string }[];
    };
    expect(plan.format).toBe(c.format);
    expect(plan.created).toBe(c.runOrder.length + c.closed.length);
    expect(
      plan.beads
        .filter((b) => b.status === 'closed')
        .map((b) => b.title)
        .sort(),
    ).toEqual([...c.closed].sort());
    const dryText = await repo.beads(['import', c.arg, '--dry-run']);
    expect(dryText.exitCode, dryText.stderr).toBe(0);
    expect(dryText.stderr).toContain(`would create epic (new epic): ${c.epicTitle}`);
    expect(dryText.stderr).toContain(
      `Dry run: ${plan.created} new, 0 already imported; nothing was written.`,
    );
    expect(await storeFile(repo)).toBe(before);
    expect(await allBeads(repo)).toEqual([]);

    const run = await repo.forgeProcess(['beads', 'import', c.arg]);
    expect(run.exitCode, run.stderr).toBe(0);
    const epic = run.stdout.trim();
    expect((await repo.show(epic)).status).toBe('open');
    const beads = await children(repo, epic);
    expect(beads.map((b) => b.title).sort()).toEqual([...c.runOrder, ...c.closed].sort());
    expect(
      beads
        .filter((b) => b.status === 'closed')
        .map((b) => b.title)
        .sort(),
    ).toEqual([...c.closed].sort());
    for (const bead of beads) expect(bead.labels).toContain(`src:${c.format}`);
    expect(await blockers(repo, beads)).toEqual(c.waits);

    const afterFirst = await storeFile(repo);
    const again = await repo.beads(['import', c.arg]);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain(`0 new, ${beads.length} already imported`);
    expect(again.stdout.trim()).toBe(epic);
    expect(await storeFile(repo)).toBe(afterFirst);

    const sources = await Promise.all(c.files.map((f) => readTree(join(repo.dir, f))));
    const loop = await repo.ralph([epic, '--agent', repo.agent]);
    expect(loop.exitCode, loop.stderr).toBe(0);
    const titles = new Map(beads.map((b) => [b.id, b.title]));
    expect((await repo.calls()).map((call) => titles.get(call.bead))).toEqual(c.runOrder);
    // Without --sync-back the sources are left alone.
    expect(await Promise.all(c.files.map((f) => readTree(join(repo.dir, f))))).toEqual(sources);
  });
});

/** A file's text, or a directory's files' texts by name. */
async function readTree(path: string): Promise<Record<string, string> | string> {
  const names = await readdir(path).catch(() => undefined);
  if (names === undefined) return readFile(path, 'utf8');
  const out: Record<string, string> = {};
  for (const name of names.sort()) out[name] = await readFile(join(path, name), 'utf8');
  return out;
}

describe('forge-pack beads import: malformed sources import nothing', () => {
  it.each([
    [
      'bad/prd-field.json',
      'prd.json',
      'prd.json line 9: userStories[1] (US-002): passes: expected true or false',
    ],
    [
      'bad/prd-syntax.json',
      'prd.json',
      "prd.json line 4: invalid JSON: expected ',' or ']' after an array element",
    ],
    [
      'bad/requirements.json',
      'requirements.json',
      'requirements.json line 3: requirements[1] (R2): status: unknown status "someday"',
    ],
    [
      'bad/IMPLEMENTATION_PLAN.md',
      'IMPLEMENTATION_PLAN.md',
      "IMPLEMENTATION_PLAN.md line 4: checkbox '[~]' is neither '[ ]' nor '[x]'",
    ],
    ['bad/specs-missing-dep', 'specs', 'specs/two.md line 5: two: depends_on: no spec has the id "three"'],
    [
      'bad/specs-block-scalar',
      'specs',
      "specs/two.md line 3: summary: '|' starts YAML this importer does not read",
    ],
  ])('%s: exit 4, the error names file, line and field, and no bead exists', async (fixture, as, message) => {
    const repo = await makeRepo('embedded');
    await cp(join(FIXTURES, fixture), join(repo.dir, as), { recursive: true });
    const before = await storeFile(repo);
    const run = await repo.beads(['import', as]);
    expect(run.exitCode).toBe(4);
    expect(run.stderr).toContain('Nothing was imported');
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toMatch(/\n\s+at /);
    expect(await allBeads(repo)).toEqual([]);
    expect(await storeFile(repo)).toBe(before);
  });

  it('a file of no known format asks for --format', async () => {
    const repo = await makeRepo('embedded');
    await writeFile(join(repo.dir, 'notes.md'), '# Notes\n\nNothing to do.\n');
    const run = await repo.beads(['import', 'notes.md']);
    expect(run.exitCode).toBe(2);
    expect(run.stderr).toContain('notes.md: cannot tell which format this file is in');
    expect(run.stderr).toContain('--format');
  });
});

describe('forge-pack beads import --sync-back', () => {
  const edits: {
    format: string;
    files: string[];
    arg: string;
    expected: (file: string, text: string) => string;
  }[] = [
    {
      format: 'prd',
      files: ['prd.json'],
      arg: 'prd.json',
      expected: (_f, t) => t.replaceAll('"passes": false', '"passes": true'),
    },
    {
      format: 'specs',
      files: ['specs'],
      arg: 'specs',
      expected: (_f, t) => t.replace('passes: false', 'passes: true'),
    },
    {
      format: 'plan',
      files: ['IMPLEMENTATION_PLAN.md'],
      arg: 'IMPLEMENTATION_PLAN.md',
      // Every box but the one inside the code block.
      expected: (_f, t) => t.replace(/\[ \](?![^`]*```\n$)/g, '[x]'),
    },
    {
      format: 'requirements',
      files: ['requirements.json'],
      arg: 'requirements.json',
      expected: (_f, t) => t.replace('"todo"', '"done"').replace('"in_progress"', '"done"'),
    },
  ];

  it.each(edits)(
    '$format: each closed bead marks its item done in the source, nothing else changes',
    async (c) => {
      const repo = await makeRepo('embedded');
      await copyFixtures(repo, c.files);
      const original = await readTree(join(repo.dir, c.files[0]!));
      const imported = await repo.forge(['beads', 'import', c.arg, '--sync-back']);
      expect(imported.exitCode, imported.stderr).toBe(0);
      const epic = imported.stdout.trim();
      const loop = await repo.ralph([epic, '--agent', repo.agent]);
      expect(loop.exitCode, loop.stderr).toBe(0);
      expect(loop.stderr).toContain('sync-back: marked');
      const after = await readTree(join(repo.dir, c.files[0]!));
      const want =
        typeof original === 'string'
          ? c.expected(c.files[0]!, original)
          : Object.fromEntries(
              Object.entries(original).map(([name, text]) => [name, c.expected(name, text)]),
            );
      expect(after).toEqual(want);
      expect(after).not.toEqual(original);
    },
  );

  it('a write-back that fails is a warning: the bead still closes and the run succeeds', async () => {
    const repo = await makeRepo('embedded');
    await copyFixtures(repo, ['requirements.json']);
    const imported = await repo.forge(['beads', 'import', 'requirements.json', '--sync-back']);
    expect(imported.exitCode, imported.stderr).toBe(0);
    const epic = imported.stdout.trim();
    await rm(join(repo.dir, 'requirements.json'));
    const loop = await repo.ralph([epic, '--agent', repo.agent]);
    expect(loop.exitCode, loop.stderr).toBe(0);
    expect(loop.stderr).toMatch(/warning: could not mark \S+'s source item done/);
    for (const bead of await children(repo, epic)) expect(bead.status).toBe('closed');
  });

  it('--epic imports under an existing epic', async () => {
    const repo = await makeRepo('embedded');
    await copyFixtures(repo, ['requirements.json']);
    const { epic } = await repo.epic([]);
    const imported = await repo.forge(['beads', 'import', 'requirements.json', '--epic', epic, '--json']);
    expect(imported.exitCode, imported.stderr).toBe(0);
    expect((JSON.parse(imported.stdout) as { epic: { id: string } }).epic.id).toBe(epic);
    expect((await children(repo, epic)).map((b) => b.title)).toHaveLength(4);
    expect((await allBeads(repo)).filter((b) => b.title.startsWith('Requirements from'))).toEqual([]);
  });
});

describe('forge-pack beads import through br (the fake br)', () => {
  it('imports with labels br accepts, and a second import finds every bead again', async () => {
    const repo = await makeRepo('br');
    await copyFixtures(repo, ['prd.json']);
    const first = await repo.forge(['beads', 'import', 'prd.json', '--json']);
    expect(first.exitCode, first.stderr).toBe(0);
    const report = JSON.parse(first.stdout) as { epic: { id: string }; created: number };
    expect(report.created).toBe(4);
    const again = await repo.forge(['beads', 'import', 'prd.json']);
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stderr).toContain('0 new, 4 already imported');
    expect((await children(repo, report.epic.id)).map((b) => b.title)).toEqual([
      'US-001: Catalogue',
      'US-002: Cart',
      'US-004: Wish list',
      'US-003: Checkout',
    ]);
  });
});
