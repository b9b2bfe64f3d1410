// The fake br as one CommonJS file, built once per test run by vitest.config.ts. A run calls the fake br
// ~1,200 times, each a fresh Node process: started from this file it took 29 ms of CPU here, against 40 ms
// from the seven ES modules it is made of (40 calls each, interleaved; bare `node -e 0` took 20 ms).
// The behaviour is the modules', unchanged; `npm run bench` runs them as they are.
import { buildSync } from 'esbuild';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FAKE_BR_BUNDLE, FAKE_BR_SCRIPT } from './fake-br-env.js';

/** Builds the bundle into `dir` (a temp dir of its own, removed at exit, without one) and names it in `env`. */
export function bundleFakeBr(env: NodeJS.ProcessEnv, dir?: string): string {
  let into = dir;
  if (into === undefined) {
    const own = mkdtempSync(join(tmpdir(), 'forge-fake-br-bundle-'));
    process.once('exit', () => rmSync(own, { recursive: true, force: true }));
    into = own;
  }
  const outfile = join(into, 'fake-br.cjs');
  buildSync({
    entryPoints: [FAKE_BR_SCRIPT],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    outfile,
    logLevel: 'error',
  });
  chmodSync(outfile, 0o755);
  env[FAKE_BR_BUNDLE] = outfile;
  return outfile;
}
