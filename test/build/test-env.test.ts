// The test run's environment: no child pays for a CA bundle it never uses; npm still gets it.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  dropVersionManagers,
  KEPT_EXTRA_CA,
  networkEnv,
  RUN_TEMP,
  setAsideExtraCa,
  useMemoryTemp,
} from '../support/machine-env.js';

describe('the environment tests start children with', () => {
  it('holds no NODE_EXTRA_CA_CERTS, in this worker or in a child it starts', () => {
    expect(process.env.NODE_EXTRA_CA_CERTS).toBeUndefined();
    const seen = execFileSync(process.execPath, ['-p', 'process.env.NODE_EXTRA_CA_CERTS ?? "unset"'], {
      encoding: 'utf8',
    });
    expect(seen.trim()).toBe('unset');
  });

  it('keeps the CA bundle aside and hands it back to what reaches the network', () => {
    const env: NodeJS.ProcessEnv = { NODE_EXTRA_CA_CERTS: '/etc/ca.pem', PATH: '/bin' };
    setAsideExtraCa(env);
    expect(env).toEqual({ [KEPT_EXTRA_CA]: '/etc/ca.pem', PATH: '/bin' });
    const untouched: NodeJS.ProcessEnv = { PATH: '/bin' };
    setAsideExtraCa(untouched);
    expect(untouched).toEqual({ PATH: '/bin' });

    const saved = process.env[KEPT_EXTRA_CA];
    process.env[KEPT_EXTRA_CA] = '/etc/ca.pem';
    try {
      expect(networkEnv().NODE_EXTRA_CA_CERTS).toBe('/etc/ca.pem');
    } finally {
      if (saved === undefined) delete process.env[KEPT_EXTRA_CA];
      else process.env[KEPT_EXTRA_CA] = saved;
    }
  });

  it('runs with no version manager on PATH: neither this worker nor a child it starts finds pyenv', () => {
    // Nothing left for the config's call to take (the cases it takes are the next test's).
    expect(dropVersionManagers({ PATH: process.env.PATH })).toEqual([]);
    const seen = execFileSync('sh', ['-c', 'command -v pyenv || echo none'], { encoding: 'utf8' });
    expect(seen.trim()).toBe('none');
  });

  it("takes a version manager's shims and commands off PATH, and nothing else", () => {
    const managers = [
      '/root/.pyenv/bin',
      '/root/.pyenv/shims',
      '/root/.pyenv/plugins/pyenv-virtualenv/shims',
      '/home/u/.rbenv/shims/',
      '/home/u/.asdf/shims',
      '/home/u/.local/share/mise/shims',
    ];
    const others = [
      '/home/u/.cargo/bin',
      '/home/u/.pyenv/versions/3.11.7/bin',
      '/home/u/pyenv-tools/bin',
      '/usr/local/bin',
      '/usr/bin',
      '/bin',
    ];
    // Interleaved: what stays keeps its order.
    const env: NodeJS.ProcessEnv = {
      PATH: managers.flatMap((dir, i) => [dir, others[i]!]).join(':'),
      HOME: '/root',
    };
    expect(dropVersionManagers(env)).toEqual(managers);
    expect(env).toEqual({ PATH: others.join(':'), HOME: '/root' });
    const plain: NodeJS.ProcessEnv = { PATH: '/usr/bin:/bin' };
    expect(dropVersionManagers(plain)).toEqual([]);
    expect(plain).toEqual({ PATH: '/usr/bin:/bin' });
  });

  it("puts this worker's and its children's temp files in the run's own directory in memory, where it can", () => {
    const runTemp = process.env[RUN_TEMP];
    if (runTemp === undefined) {
      // No directory of the run's own: only right where /dev/shm has no room (or is not there), or the
      // caller gave a TMPDIR of theirs. On this machine and in CI, neither.
      const probe = useMemoryTemp({});
      if (probe !== undefined) rmSync(probe, { recursive: true, force: true });
      expect(probe === undefined || process.env.TMPDIR !== undefined).toBe(true);
      return;
    }
    expect(runTemp).toMatch(/^\/dev\/shm\/forge-tests-/);
    expect(tmpdir()).toBe(runTemp);
    const seen = execFileSync(process.execPath, ['-p', 'require("node:os").tmpdir()'], { encoding: 'utf8' });
    expect(seen.trim()).toBe(runTemp);
  });

  it('makes the directory under shm, keeps a TMPDIR the caller set, and does nothing without shm or room in it', () => {
    const shm = mkdtempSync(join(tmpdir(), 'shm-'));
    onTestFinished(() => rmSync(shm, { recursive: true, force: true }));
    const env: NodeJS.ProcessEnv = { PATH: '/bin' };
    const made = useMemoryTemp(env, shm);
    expect(made).toBeDefined();
    expect(dirname(made!)).toBe(shm);
    expect(existsSync(made!)).toBe(true);
    expect(env).toEqual({ PATH: '/bin', TMPDIR: made, [RUN_TEMP]: made });

    const chosen: NodeJS.ProcessEnv = { TMPDIR: '/var/tmp' };
    expect(useMemoryTemp(chosen, shm)).toBeUndefined();
    expect(chosen).toEqual({ TMPDIR: '/var/tmp' });

    const none: NodeJS.ProcessEnv = {};
    expect(useMemoryTemp(none, join(shm, 'missing'))).toBeUndefined();
    expect(none).toEqual({});

    // Too little free space (a container's 64 MB /dev/shm): the disk it is.
    const small: NodeJS.ProcessEnv = {};
    expect(useMemoryTemp(small, shm, Number.MAX_SAFE_INTEGER)).toBeUndefined();
    expect(small).toEqual({});
  });
});
