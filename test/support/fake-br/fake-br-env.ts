// Test helper: a temp project with the fake br on the PATH of an env made for the code under test.
import { chmod, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FAKE_BR_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'fake-br.mjs');

/** Where vitest.config.ts names, for the workers, the one-file build of FAKE_BR_SCRIPT (fake-br-bundle.ts). */
export const FAKE_BR_BUNDLE = 'FORGE_TEST_FAKE_BR_BUNDLE';

/** The executable to put on PATH as `br`: under vitest, that build; elsewhere (the bench), the script itself. */
export const FAKE_BR_BIN = process.env[FAKE_BR_BUNDLE] ?? FAKE_BR_SCRIPT;

/** One fault of a scenario; see scenario.mjs for the actions. */
export interface FakeBrFault {
  command?: string;
  argvIncludes?: string[];
  times?: number;
  action: 'locked' | 'busy' | 'error' | 'garbage' | 'usage' | 'raw' | 'hang' | 'flood' | 'delay' | 'logs';
  code?: string;
  message?: string;
  hint?: string;
  stream?: 'stdout' | 'stderr';
  bd?: boolean;
  stdout?: string;
  stderr?: string;
  exitCode?: number;
  ms?: number;
}

/** One logged call of the fake br. */
export interface FakeBrCall {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  command: string | undefined;
  overlap: boolean;
  pid: number;
}

export interface FakeBrWorkspace {
  /** The project root (cwd for the store); `.beads` is created by `br init`. */
  root: string;
  /** The env to hand to the code under test: PATH with the fake br first, and the fake's settings. */
  env: NodeJS.ProcessEnv;
  /** Calls logged so far. */
  calls(): Promise<FakeBrCall[]>;
  /** Replaces the scenario (and forgets how often its faults fired). */
  setFaults(faults: FakeBrFault[]): Promise<void>;
  cleanup(): Promise<void>;
}

export interface FakeBrWorkspaceOptions {
  /** FAKE_BR_VERSION, default 0.2.19. */
  version?: string;
  faults?: FakeBrFault[];
  /** Leave br off the PATH (the missing-br case). */
  withoutBr?: boolean;
  /** Extra variables for the env (e.g. ones the adapter must strip). */
  extraEnv?: NodeJS.ProcessEnv;
}

export async function createFakeBrWorkspace(options: FakeBrWorkspaceOptions = {}): Promise<FakeBrWorkspace> {
  const base = await mkdtemp(join(tmpdir(), 'forge-fake-br-'));
  const root = join(base, 'project');
  const binDir = join(base, 'bin');
  const logPath = join(base, 'br-calls.jsonl');
  const scenarioPath = join(base, 'scenario.json');
  await mkdir(root);
  await mkdir(binDir);
  await chmod(FAKE_BR_BIN, 0o755);
  if (options.withoutBr !== true) await symlink(FAKE_BR_BIN, join(binDir, 'br'));

  const setFaults = async (faults: FakeBrFault[]): Promise<void> => {
    await writeFile(scenarioPath, JSON.stringify({ faults }));
    await rm(`${scenarioPath}.hits`, { force: true });
  };
  if (options.faults !== undefined) await setFaults(options.faults);

  const env: NodeJS.ProcessEnv = {
    // node for the fake's shebang; nothing else from the test process's PATH.
    PATH: [binDir, dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
    HOME: base,
    USER: 'tester',
    FAKE_BR_VERSION: options.version ?? '0.2.19',
    FAKE_BR_LOG: logPath,
    FAKE_BR_SCENARIO: scenarioPath,
    ...options.extraEnv,
  };

  return {
    root,
    env,
    async calls() {
      const text = await readFile(logPath, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as FakeBrCall);
    },
    setFaults,
    cleanup: () => rm(base, { recursive: true, force: true }),
  };
}
