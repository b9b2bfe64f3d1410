// Gate detection for `forge-pack init`: each ecosystem's manifest gives argv arrays, never shell strings.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { detectGates } from '../../src/cli/detect-gates.js';

async function project(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-gates-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  for (const [name, content] of Object.entries(files)) await writeFile(join(dir, name), content);
  return dir;
}

const gates = async (files: Record<string, string>) =>
  Object.fromEntries((await detectGates(await project(files))).map((g) => [g.name, g.argv]));

describe('detectGates', () => {
  it('takes test, lint, typecheck and build from package.json scripts, with the lockfile’s package manager', async () => {
    const scripts = {
      build: 'tsc',
      test: 'vitest',
      dev: 'vite',
      lint: 'eslint .',
      typecheck: 'tsc --noEmit',
    };
    expect(await gates({ 'package.json': JSON.stringify({ scripts }) })).toEqual({
      test: ['npm', 'test'],
      lint: ['npm', 'run', 'lint'],
      typecheck: ['npm', 'run', 'typecheck'],
      build: ['npm', 'run', 'build'],
    });
    expect(await gates({ 'package.json': JSON.stringify({ scripts }), 'pnpm-lock.yaml': '' })).toMatchObject({
      test: ['pnpm', 'test'],
      lint: ['pnpm', 'run', 'lint'],
    });
    expect(
      await gates({ 'package.json': JSON.stringify({ scripts: { test: 'jest' } }), 'yarn.lock': '' }),
    ).toEqual({
      test: ['yarn', 'test'],
    });
  });

  it('skips npm init’s placeholder test script and a package.json that is not JSON', async () => {
    const placeholder = { scripts: { test: 'echo "Error: no test specified" && exit 1' } };
    expect(await gates({ 'package.json': JSON.stringify(placeholder) })).toEqual({});
    expect(await gates({ 'package.json': '{ not json' })).toEqual({});
  });

  it('finds pytest, ruff and mypy in pyproject.toml, as tool sections or dependencies', async () => {
    const pyproject = [
      '[project]',
      'dependencies = ["requests"]',
      '[project.optional-dependencies]',
      'dev = ["pytest>=8", "ruff"]',
      '[tool.mypy]',
      'strict = true',
    ].join('\n');
    expect(await gates({ 'pyproject.toml': pyproject })).toEqual({
      test: ['pytest'],
      lint: ['ruff', 'check', '.'],
      typecheck: ['mypy', '.'],
    });
    expect(await gates({ 'pyproject.toml': '[project]\nname = "x"\n' })).toEqual({});
  });

  it('finds pytest, ruff and mypy in their own settings files when pyproject.toml does not name them', async () => {
    expect(await gates({ 'pytest.ini': '' })).toEqual({ test: ['pytest'] });
    expect(await gates({ 'pytest.toml': '[pytest]\n' })).toEqual({ test: ['pytest'] });
    expect(await gates({ 'tox.ini': '[tox]\nenvlist = py312\n\n[pytest]\naddopts = -q\n' })).toEqual({
      test: ['pytest'],
    });
    expect(await gates({ 'tox.ini': '[tox]\nenvlist = py312\n' })).toEqual({});
    expect(
      await gates({ 'setup.cfg': '[metadata]\nname = x\n[tool:pytest]\ntestpaths = tests\n[mypy]\n' }),
    ).toEqual({ test: ['pytest'], typecheck: ['mypy', '.'] });
    expect(await gates({ 'setup.cfg': '[metadata]\nname = x\n' })).toEqual({});
    expect(await gates({ '.ruff.toml': 'line-length = 100\n', 'mypy.ini': '[mypy]\n' })).toEqual({
      lint: ['ruff', 'check', '.'],
      typecheck: ['mypy', '.'],
    });
    // Said once, from the first file that shows it: pyproject.toml first.
    const both = await detectGates(
      await project({ 'pyproject.toml': '[tool.pytest.ini_options]\n', 'pytest.ini': '', 'ruff.toml': '' }),
    );
    expect(both.map((g) => [g.name, g.source])).toEqual([
      ['test', 'pyproject.toml'],
      ['lint', 'ruff.toml'],
    ]);
  });

  it('uses cargo for Cargo.toml and go for go.mod', async () => {
    expect(await gates({ 'Cargo.toml': '[package]\nname = "x"\n' })).toEqual({
      test: ['cargo', 'test'],
      lint: ['cargo', 'clippy', '--all-targets'],
    });
    expect(await gates({ 'go.mod': 'module x\n' })).toEqual({
      test: ['go', 'test', './...'],
      lint: ['go', 'vet', './...'],
    });
  });

  it('keeps both when two ecosystems offer the same gate, prefixing the second with its tool', async () => {
    const detected = await detectGates(
      await project({ 'package.json': JSON.stringify({ scripts: { test: 'vitest' } }), 'Cargo.toml': '' }),
    );
    expect(detected).toEqual([
      { name: 'test', argv: ['npm', 'test'], source: 'package.json' },
      { name: 'cargo-test', argv: ['cargo', 'test'], source: 'Cargo.toml' },
      { name: 'lint', argv: ['cargo', 'clippy', '--all-targets'], source: 'Cargo.toml' },
    ]);
  });

  it("takes a Makefile's test or check target when nothing else offers a test", async () => {
    expect(await gates({ Makefile: 'all: build\n\ntest: all\n\t./run-tests\n' })).toEqual({
      test: ['make', 'test'],
    });
    expect(await gates({ makefile: 'check:\n\t./configure && ./run-tests\n' })).toEqual({
      test: ['make', 'check'],
    });
    expect(await gates({ GNUmakefile: 'test check:: all\n' })).toEqual({ test: ['make', 'test'] });
    // A variable named test, a target that only starts with the name, a recipe line: no target.
    expect(await gates({ Makefile: 'test := unit\ntests: x\n\ttest: y\ntest ::= z\ntest :::= w\n' })).toEqual(
      {},
    );
    // With a manifest's test, the Makefile's (most often the same tests) is left out.
    const both = await detectGates(
      await project({ 'package.json': JSON.stringify({ scripts: { test: 'vitest' } }), Makefile: 'test:\n' }),
    );
    expect(both.map((g) => g.argv)).toEqual([['npm', 'test']]);
  });

  it('finds nothing in an empty directory', async () => {
    expect(await detectGates(await project({}))).toEqual([]);
  });
});
