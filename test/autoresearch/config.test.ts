// `.autoresearch/config.json`: defaults, every error named by file and field path, the shell-free command split.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { loadLoopConfig, parseLoopConfig, type LoopConfigFile } from '../../src/autoresearch/config.js';
import { ConfigError, ExitCode } from '../../src/infra/errors.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

const FILE = '.autoresearch/config.json';

const minimal: LoopConfigFile = {
  subject: 'rate-limiter',
  metric: { type: 'hard', command: 'npm test' },
  scope: { doer_paths: ['src/'] },
};

function errorOf(value: unknown): ConfigError {
  try {
    parseLoopConfig(value, FILE);
  } catch (error) {
    if (error instanceof ConfigError) return error;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

function messagesOf(value: unknown): string[] {
  return errorOf(value).message.split('\n');
}

async function tempFile(name: string, content: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-config-'));
  onTestFinished(() => rm(dir, { recursive: true, force: true }));
  const path = join(dir, name);
  await writeFile(path, content);
  return path;
}

describe('loop config: valid files', () => {
  it('accepts the DESIGN example as is', () => {
    const config = parseLoopConfig(
      {
        subject: 'rate-limiter',
        epic_id: 'bd-7f3',
        metric: {
          type: 'hard',
          command: 'npm test -- --json',
          score: { from: 'json', path: 'numPassedTests' },
          direction: 'maximize',
          artifact_path: 'src/',
          timeout_seconds: 600,
        },
        target: 95,
        min_delta: 0,
        caps: { max_iterations: 20, wall_clock_seconds: 0, plateau_threshold: 3, max_cost_usd: 0 },
        scope: { doer_paths: ['src/'], judge_paths: ['src/'] },
        agents: { doer: 'claude-opus', judge: 'claude-haiku', strategist: 'claude-sonnet' },
        confirmation_rounds: 1,
      },
      FILE,
    );
    expect(config.metric).toMatchObject({ type: 'hard', argv: ['npm', 'test', '--', '--json'] });
    expect(config.target).toBe(95);
  });

  it('fills sensible defaults', () => {
    const config = parseLoopConfig(minimal, FILE);
    expect(config).toEqual({
      subject: 'rate-limiter',
      metric: {
        type: 'hard',
        command: 'npm test',
        argv: ['npm', 'test'],
        score: { from: 'exit-code' },
        direction: 'maximize',
        timeout_seconds: 600,
      },
      target: null,
      min_delta: 0,
      population: 1,
      caps: { max_iterations: 20, wall_clock_seconds: 0, plateau_threshold: 3, max_cost_usd: 0 },
      scope: {
        doer_paths: ['src/'],
        judge_paths: [],
        rebuilt_paths: [],
        doer_may_change_tests: false,
        doer_may_silence_checks: false,
        doer_may_patch_runtime: false,
        doer_may_address_judge: false,
        max_file_bytes: 100 * 2 ** 20,
        max_change_bytes: 2 ** 30,
        max_change_files: 10_000,
      },
      agents: {
        doer: 'claude-opus',
        judge: 'claude-haiku',
        strategist: 'claude-sonnet',
        retrospective: 'claude-sonnet',
        resume_strategist: 'claude-sonnet',
      },
      confirmation_rounds: 1,
      guards: [],
      tracks: [],
    });
  });

  it('accepts a soft metric and partial caps', () => {
    const config = parseLoopConfig(
      {
        ...minimal,
        metric: {
          type: 'soft',
          rubric_path: 'rubric.md',
          artifact_path: 'specs/x.md',
          direction: 'minimize',
        },
        caps: { max_iterations: 5 },
      },
      FILE,
    );
    expect(config.metric).toEqual({
      type: 'soft',
      rubric_path: 'rubric.md',
      artifact_path: 'specs/x.md',
      direction: 'minimize',
    });
    expect(config.caps).toEqual({
      max_iterations: 5,
      wall_clock_seconds: 0,
      plateau_threshold: 3,
      max_cost_usd: 0,
    });
  });

  it('loads a file from disk', async () => {
    const path = await tempFile('config.json', JSON.stringify(minimal));
    expect((await loadLoopConfig(diskLoopFiles(), path)).subject).toBe('rate-limiter');
  });
});

describe('loop config: errors name the file and the field path', () => {
  it('names a wrong type with what was expected', () => {
    expect(messagesOf({ ...minimal, caps: { max_iterations: 'ten' } })).toEqual([
      `${FILE}: caps.max_iterations: expected a non-negative integer (0 = no cap), got "ten"`,
    ]);
  });

  it('lists every problem, not only the first', () => {
    const lines = messagesOf({
      subject: '',
      metric: { type: 'hard', command: 'npm test', timeout_seconds: -1 },
      min_delta: -0.5,
      caps: { plateau_threshold: 1.5, max_cost_usd: -1 },
      scope: { doer_paths: [] },
      confirmation_rounds: 0,
    });
    expect(lines).toEqual([
      `${FILE}: subject: expected a non-empty subject, got ""`,
      `${FILE}: metric.timeout_seconds: expected a positive number of seconds, got -1`,
      `${FILE}: min_delta: expected a non-negative number, got -0.5`,
      `${FILE}: caps.plateau_threshold: expected a non-negative integer (0 = never stop on a plateau), got 1.5`,
      `${FILE}: caps.max_cost_usd: expected a non-negative amount in USD (0 = no cap), got -1`,
      `${FILE}: scope.doer_paths: expected at least one path the doer may change, got an array`,
      `${FILE}: confirmation_rounds: expected an integer ≥ 1, got 0`,
    ]);
  });

  it('names each unknown key, at any depth', () => {
    expect(
      messagesOf({
        ...minimal,
        colour: 'blue',
        caps: { max_iter: 3 },
        metric: { ...minimal.metric, cmd: 'x' },
      }),
    ).toEqual([
      `${FILE}: metric.cmd: unknown key`,
      `${FILE}: caps.max_iter: unknown key`,
      `${FILE}: colour: unknown key`,
    ]);
  });

  it('names missing required fields', () => {
    expect(messagesOf({ metric: { type: 'soft' } })).toEqual([
      `${FILE}: subject: missing: expected a non-empty subject`,
      `${FILE}: metric.rubric_path: missing: expected the path of the rubric file`,
      `${FILE}: metric.artifact_path: missing: expected the path of the artifact the judge reads`,
      `${FILE}: scope: missing: expected an object with "doer_paths" (and optionally "judge_paths", "rebuilt_paths", "doer_may_change_tests", "doer_may_silence_checks", "doer_may_patch_runtime", "doer_may_address_judge", "max_file_bytes", "max_change_bytes", "max_change_files")`,
    ]);
  });

  it('names an unknown metric type or score source with the allowed values', () => {
    expect(messagesOf({ ...minimal, metric: { type: 'fuzzy' } })).toEqual([
      `${FILE}: metric.type: expected one of "hard", "soft"`,
    ]);
    expect(messagesOf({ ...minimal, metric: { ...minimal.metric, score: { from: 'stdout' } } })).toEqual([
      `${FILE}: metric.score.from: expected one of "exit-code", "regex", "json", "tap", "junit"`,
    ]);
  });

  it('checks a regex score pattern compiles and captures', () => {
    const withPattern = (pattern: string) => ({
      ...minimal,
      metric: { ...minimal.metric, score: { from: 'regex', pattern } },
    });
    expect(messagesOf(withPattern('Score: (\\d+'))[0]).toMatch(
      /^\.autoresearch\/config\.json: metric\.score\.pattern: expected a valid regular expression/,
    );
    expect(messagesOf(withPattern('Score: \\d+'))[0]).toMatch(
      /metric\.score\.pattern: expected a regular expression with a capture group/,
    );
    expect(parseLoopConfig(withPattern('Score: ([0-9.]+)'), FILE).metric).toMatchObject({
      score: { pattern: 'Score: ([0-9.]+)' },
    });
  });

  it('checks a json score path', () => {
    const withPath = (path: string) => ({
      ...minimal,
      metric: { ...minimal.metric, score: { from: 'json', path } },
    });
    expect(messagesOf(withPath('results..score'))).toEqual([
      `${FILE}: metric.score.path: expected a dotted path such as "numPassedTests" or "results.0.score", got "results..score"`,
    ]);
    expect(() => parseLoopConfig(withPath('results[0].score'), FILE)).not.toThrow();
  });

  it('refuses doer paths outside the repository, the whole repository and the loop workspace', () => {
    const lines = messagesOf({
      ...minimal,
      scope: { doer_paths: ['/etc', '../x', '.', '.autoresearch/ledger', 'src/ok'] },
    });
    expect(lines).toEqual([
      `${FILE}: scope.doer_paths[0]: expected a path relative to the repository root, got "/etc"`,
      `${FILE}: scope.doer_paths[1]: expected a path inside the repository (no ".."), got "../x"`,
      expect.stringMatching(
        /^\.autoresearch\/config\.json: scope\.doer_paths\[2\]: expected a directory or file the doer may change/,
      ),
      expect.stringMatching(
        /^\.autoresearch\/config\.json: scope\.doer_paths\[3\]: .*\.autoresearch\/ \(the loop's own files\)/,
      ),
    ]);
  });

  it('refuses a metric command that needs a shell, saying why', () => {
    expect(messagesOf({ ...minimal, metric: { type: 'hard', command: 'npm test | tail -1' } })).toEqual([
      `${FILE}: metric.command: "|" needs a shell, and the metric command runs without one: put it in a script and run that`,
    ]);
  });

  it('a config error carries the config exit code and a hint', () => {
    const error = errorOf({ ...minimal, target: 'high' });
    expect(error.exitCode).toBe(ExitCode.config);
    expect(error.message).toBe(`${FILE}: target: expected a number or null (no target), got "high"`);
    expect(error.hint).toContain(FILE);
  });

  it('a file that is not an object says so', () => {
    expect(messagesOf([1, 2])).toEqual([`${FILE}: expected a JSON object, got an array`]);
  });

  it('malformed JSON names the file, line and column', async () => {
    const path = await tempFile(
      'config.json',
      '{\n  "subject": "x",\n  "caps": { "max_iterations": 3, }\n}\n',
    );
    await expect(loadLoopConfig(diskLoopFiles(), path)).rejects.toThrow(
      `${path}: invalid JSON at line 3, column 34: expected a double-quoted property name, found "}"`,
    );
  });

  it('a missing file is a config error naming it', async () => {
    await expect(loadLoopConfig(diskLoopFiles(), '/nonexistent/forge/config.json')).rejects.toThrow(
      '/nonexistent/forge/config.json: file not found',
    );
  });
});
