// The test run's environment: no child pays for a CA bundle it never uses; npm still gets it.
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { KEPT_EXTRA_CA, networkEnv, setAsideExtraCa } from '../support/machine-env.js';

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
});
