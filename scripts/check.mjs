#!/usr/bin/env node
// `npm run check`: the type check, the lint and the format check side by side, then the tests.
//
// The three static checks each keep one core busy (~10 s, ~26 s and ~9 s one at a time on a clean
// clone here): side by side on two cores they took 39 s in CI against 45 s one after another. Each
// one's output is held and printed whole when it ends, so two checks never interleave their lines.
// The tests start only when all three passed: a type error should not wait six minutes to be seen.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

const STATIC = ['typecheck', 'lint', 'format:check'];
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

/** Runs `npm run <script>` with its output held; resolves to its exit code, output and seconds. */
function run(script) {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(npm, ['run', '--silent', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    const output = [];
    child.stdout.on('data', (chunk) => output.push(chunk));
    child.stderr.on('data', (chunk) => output.push(chunk));
    const seconds = () => (performance.now() - started) / 1000;
    child.once('error', (error) =>
      resolve({ script, code: 1, output: `${error.message}\n`, seconds: seconds() }),
    );
    child.once('close', (code, signal) =>
      resolve({
        script,
        code: code ?? (signal === null ? 1 : 128),
        output: Buffer.concat(output).toString('utf8'),
        seconds: seconds(),
      }),
    );
  });
}

const results = await Promise.all(
  STATIC.map(async (script) => {
    const result = await run(script);
    const verdict = result.code === 0 ? 'passed' : `FAILED (exit ${result.code})`;
    process.stdout.write(`── ${script}: ${verdict} in ${result.seconds.toFixed(1)} s\n`);
    if (result.output.trim() !== '')
      process.stdout.write(result.output.endsWith('\n') ? result.output : `${result.output}\n`);
    return result;
  }),
);
const failed = results.filter((result) => result.code !== 0).map((result) => result.script);
if (failed.length > 0) {
  process.stderr.write(`check: ${failed.join(', ')} failed; the tests were not run.\n`);
  process.exit(1);
}
const tests = spawn(npm, ['test'], { stdio: 'inherit' });
tests.once('close', (code, signal) => process.exit(code ?? (signal === null ? 1 : 128)));
