// Vitest: every test file in one project, the real-agent e2e files (test/e2e-claude/) among them.
import { rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { bundleFakeBr } from './test/support/fake-br/fake-br-bundle.js';
import LongestFirst from './test/support/longest-first.js';
import { dropVersionManagers, setAsideExtraCa, useMemoryTemp } from './test/support/machine-env.js';

// With NODE_EXTRA_CA_CERTS set, every Node process parses that CA bundle as it starts: 35 ms of CPU
// each on this machine (a 220 KB bundle), and a run starts ~2,400 Node processes (the CLIs, the fake
// br and agents). None of them reaches the internet; npm, which does, is handed the CA by the tests
// that run it (test/support/machine-env.ts). Set here, in vitest's own process, the workers it forks
// and every child they start inherit the environment without it.
setAsideExtraCa(process.env);

// Without a version manager's shims on PATH (pyenv's here): every loop a test runs asks the Python
// interpreters on PATH where their packages live, and each question through a shim is ~25 processes
// (test/support/machine-env.ts). The system's interpreters answer as they do for any user.
dropVersionManagers(process.env);

// Every temp repository, store and agent HOME goes to a directory in memory, made for this run and
// removed with it (what the agent CLIs leave in TMPDIR too). /tmp here is a virtual disk: the process
// tests took 277 s with it and 258 s in memory (sys time 120 s against 95 s), from the fsyncs and
// renames Forge makes to be crash-safe and ~15,000 git calls.
const runTemp = useMemoryTemp(process.env);
if (runTemp !== undefined)
  process.once('exit', () => rmSync(runTemp, { recursive: true, force: true, maxRetries: 3 }));

// The fake br the tests put on PATH, as one file: ~1,200 calls a run, 11 ms of CPU less each
// (test/support/fake-br/fake-br-bundle.ts). Named in the env, so every worker finds it.
bundleFakeBr(process.env, runTemp);

// Java takes user.home from the account, not from HOME, and Forge watches the package stores and the
// build tools' settings in both (src/infra/package-stores.ts): without this, every loop of a test with
// a HOME of its own would fingerprint the account's ~/.m2 too (2,900 files here, ~75 ms a look).
process.env.JAVA_TOOL_OPTIONS ??= `-Duser.home=${join(runTemp ?? tmpdir(), 'java-home')}`;

// Agents run in a PID namespace of their own where the machine allows it (src/infra/containment.ts).
// Inside one, a process's pid is not the host's, and most tests watch what an agent leaves running
// through pids written from inside: they test the sweep, the guard wherever namespaces are not
// allowed. So the suite runs agents without a namespace unless a test asks for one (the tests of
// containment itself set FORGE_CONTAINMENT=auto for what they start).
process.env.FORGE_CONTAINMENT ??= 'off';

export default defineConfig({
  test: {
    pool: 'forks',
    // Twice as many test files at a time as there are cores: most tests wait on child processes (git,
    // the fake br, agents that sleep, a runner's lock or clock), and the real-CLI files of e2e-claude,
    // which keep a core busy, run beside them. Whole suite on 2 cores, longest file first: 287 s with
    // two workers, 245 s with three, 232 s with four. At most eight: each worker and the agent CLIs it
    // starts hold hundreds of MB, and a big machine has no more than 160 files to share out.
    maxWorkers: Math.min(8, 2 * Math.max(1, availableParallelism())),
    // Longest file first (test/support/longest-first.ts), from the recorded times.
    sequence: { sequencer: LongestFirst },
    // A worker runs file after file in one process instead of a fresh one per file: the default
    // project took 216 s (324 s of CPU) so, against 232 s (361 s of CPU) with a fork per file, and
    // the whole suite 338 s against 356 s. Files share the module cache, so a test leaves process-wide state as it found it
    // (process.env, spies: restored).
    isolate: false,
    // One project, not two: vitest keeps a worker for the next file only when that file is of the same
    // project, so with the real-CLI files in a project of their own, interleaved longest first with the
    // rest, a worker was stopped and a fresh one started at nearly every switch (27 workers in a run of
    // the whole suite, where four do). The real-CLI files (test/e2e-claude/: the real Claude Code, Codex,
    // opencode and Gemini CLI against the scripted model server on 127.0.0.1, no network) keep their
    // longer timeouts through the setup file, by path.
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    // What a failed test left running is ended (test/support/stray-children.ts).
    setupFiles: ['test/support/setup-real-cli-timeouts.ts', 'test/support/setup-stray-children.ts'],
  },
});
