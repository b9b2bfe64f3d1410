// Finds a repo's validation commands (test, lint, typecheck, build) from its manifests, as argv arrays.
import { pathExists } from '../infra/atomic-file.js';
import { join } from 'node:path';
import { readFileIfExists } from '../infra/atomic-file.js';

export interface DetectedGate {
  /** Key in `gates` of `.forge/config.json` (`test`, `lint`, or `cargo-test` when `test` is taken). */
  name: string;
  argv: string[];
  /** The file it was read from, for the user. */
  source: string;
}

/** The package.json scripts worth running as gates, in the order they are listed. */
const NODE_SCRIPTS = ['test', 'lint', 'typecheck', 'build'] as const;
/** `npm init`'s placeholder test script: it fails on purpose, it is not a test suite. */
const NPM_PLACEHOLDER_TEST = /no test specified/;

/**
 * Gates from package.json (scripts), Python's settings (pytest, ruff, mypy: pyproject.toml, then each
 * tool's own files), Cargo.toml (cargo test, clippy), go.mod (go test, go vet), and with no test among
 * them a Makefile's test (or check) target. When two ecosystems offer the same gate, the first keeps
 * the plain name and the next is prefixed with its tool (`cargo-test`).
 */
export async function detectGates(cwd: string): Promise<DetectedGate[]> {
  const found = [
    ...(await fromPackageJson(cwd)),
    ...(await fromPython(cwd)),
    ...(await fromCargo(cwd)),
    ...(await fromGoMod(cwd)),
  ];
  // A Makefile's test target most often wraps a manifest's own test command: only a repo with no
  // other test gets it, so no bead's tests run twice.
  if (!found.some((gate) => gate.kind === 'test')) found.push(...(await fromMakefile(cwd)));
  const taken = new Set<string>();
  return found.map(({ kind, tool, argv, source }) => {
    const name = taken.has(kind) ? `${tool}-${kind}` : kind;
    taken.add(name);
    return { name, argv, source };
  });
}

interface Candidate {
  kind: string;
  tool: string;
  argv: string[];
  source: string;
}

async function fromPackageJson(cwd: string): Promise<Candidate[]> {
  const text = await readFileIfExists(join(cwd, 'package.json'));
  if (text === undefined) return [];
  let scripts: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text) as { scripts?: unknown };
    if (typeof parsed.scripts === 'object' && parsed.scripts !== null) {
      scripts = parsed.scripts as Record<string, unknown>;
    }
  } catch {
    return [];
  }
  const pm = await packageManager(cwd);
  const out: Candidate[] = [];
  for (const script of NODE_SCRIPTS) {
    const body = scripts[script];
    if (typeof body !== 'string' || body.trim() === '') continue;
    if (script === 'test' && NPM_PLACEHOLDER_TEST.test(body)) continue;
    // `npm test` is a built-in alias; every other script goes through `run`.
    const argv = script === 'test' ? [pm, 'test'] : [pm, 'run', script];
    out.push({ kind: script, tool: pm, argv, source: 'package.json' });
  }
  return out;
}

async function packageManager(cwd: string): Promise<string> {
  if (await pathExists(join(cwd, 'pnpm-lock.yaml'))) return 'pnpm';
  if (await pathExists(join(cwd, 'yarn.lock'))) return 'yarn';
  if ((await pathExists(join(cwd, 'bun.lockb'))) || (await pathExists(join(cwd, 'bun.lock')))) return 'bun';
  return 'npm';
}

/** Python's checkers: each gate from the first file that configures (or requires) its tool. */
const PYTHON_TOOLS = [
  { tool: 'pytest', kind: 'test', argv: ['pytest'] },
  { tool: 'ruff', kind: 'lint', argv: ['ruff', 'check', '.'] },
  { tool: 'mypy', kind: 'typecheck', argv: ['mypy', '.'] },
] as const;

/**
 * Where each tool's own settings can live besides pyproject.toml (a repo without one still runs
 * pytest from pytest.ini, pytest.toml, tox.ini or setup.cfg): a file of its own counts whatever it
 * holds (pytest reads an empty pytest.ini), a shared one by its section.
 */
const PYTHON_CONFIGS: readonly { file: string; tool: string; section?: RegExp }[] = [
  { file: 'pytest.ini', tool: 'pytest' },
  { file: 'pytest.toml', tool: 'pytest' },
  { file: 'tox.ini', tool: 'pytest', section: /^\s*\[pytest\]/m },
  { file: 'setup.cfg', tool: 'pytest', section: /^\s*\[tool:pytest\]/m },
  { file: 'ruff.toml', tool: 'ruff' },
  { file: '.ruff.toml', tool: 'ruff' },
  { file: 'mypy.ini', tool: 'mypy' },
  { file: '.mypy.ini', tool: 'mypy' },
  { file: 'setup.cfg', tool: 'mypy', section: /^\s*\[mypy\]/m },
];

async function fromPython(cwd: string): Promise<Candidate[]> {
  const found = new Map<string, string>();
  const pyproject = await readFileIfExists(join(cwd, 'pyproject.toml'));
  if (pyproject !== undefined) {
    // Configured as a tool section, or named as a dependency (any quoted requirement starting with it).
    const uses = (tool: string): boolean =>
      new RegExp(`^\\s*\\[tool\\.${tool}[.\\]]`, 'm').test(pyproject) ||
      new RegExp(`["']${tool}\\b`).test(pyproject);
    for (const { tool } of PYTHON_TOOLS) if (uses(tool)) found.set(tool, 'pyproject.toml');
  }
  for (const { file, tool, section } of PYTHON_CONFIGS) {
    if (found.has(tool)) continue;
    const text = await readFileIfExists(join(cwd, file));
    if (text !== undefined && (section === undefined || section.test(text))) found.set(tool, file);
  }
  return PYTHON_TOOLS.flatMap(({ tool, kind, argv }) => {
    const source = found.get(tool);
    return source === undefined ? [] : [{ kind, tool, argv: [...argv], source }];
  });
}

/** The names GNU make looks for, in its order. */
const MAKEFILES = ['GNUmakefile', 'makefile', 'Makefile'];

/** `make test`, else `make check` (autotools' name), when the Makefile has that target. */
async function fromMakefile(cwd: string): Promise<Candidate[]> {
  for (const file of MAKEFILES) {
    const text = await readFileIfExists(join(cwd, file));
    if (text === undefined) continue;
    // A rule's target at the start of a line; `test := …` (or `::=`, `:::=`) sets a variable instead.
    const target = ['test', 'check'].find((name) =>
      new RegExp(`^${name}(?:[ \\t][^:=\\n]*)?[ \\t]*::?(?!:*=)`, 'm').test(text),
    );
    return target === undefined ? [] : [{ kind: 'test', tool: 'make', argv: ['make', target], source: file }];
  }
  return [];
}

async function fromCargo(cwd: string): Promise<Candidate[]> {
  if (!(await pathExists(join(cwd, 'Cargo.toml')))) return [];
  const source = 'Cargo.toml';
  return [
    { kind: 'test', tool: 'cargo', argv: ['cargo', 'test'], source },
    { kind: 'lint', tool: 'cargo', argv: ['cargo', 'clippy', '--all-targets'], source },
  ];
}

async function fromGoMod(cwd: string): Promise<Candidate[]> {
  if (!(await pathExists(join(cwd, 'go.mod')))) return [];
  const source = 'go.mod';
  return [
    { kind: 'test', tool: 'go', argv: ['go', 'test', './...'], source },
    { kind: 'lint', tool: 'go', argv: ['go', 'vet', './...'], source },
  ];
}
