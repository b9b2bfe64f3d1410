#!/usr/bin/env node
// Builds dist/ with tsc --noCheck: the emit of the whole program without its type check, because
// `npm run typecheck` (tsc --noEmit over src, test and scripts) is the one compile that checks types;
// checking src twice cost ~12 s of CPU on a clean clone against ~4 s for this, and the JavaScript is
// the same byte for byte. `--if-stale` (npm's `prepare` and `pretest`) builds only when a source is
// newer than dist/, so a clean clone builds once: `npm ci` builds, `npm test` then finds it fresh.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync, utimesSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'cli', 'main.js');
const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
const ifStale = process.argv.includes('--if-stale');

/** The newest modification time under `path` (directories too: a deleted file changes its directory). */
function newest(path) {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (stat === undefined) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) latest = Math.max(latest, newest(join(path, entry)));
  return latest;
}

function stale() {
  const output = statSync(built, { throwIfNoEntry: false });
  if (output === undefined) return true;
  const inputs = ['src', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];
  return inputs.some((input) => newest(join(root, input)) > output.mtimeMs);
}

// An unpacked npm package ships dist/ without src/: there is nothing to build from.
if (!existsSync(join(root, 'src'))) process.exit(0);
if (ifStale && !stale()) process.exit(0);
if (!existsSync(tsc)) {
  process.stderr.write(
    `forge: cannot build dist/: TypeScript is not installed in ${root}.\n` +
      `Run \`npm ci\` there first (\`npm install -g .\` links the directory and installs none of its dependencies).\n`,
  );
  process.exit(1);
}
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--noCheck'], {
  cwd: root,
  stdio: 'inherit',
});
if (result.status !== 0) {
  // A syntax error still fails the build, after the other files were emitted: mark the output stale
  // so the next run builds again.
  if (existsSync(built)) utimesSync(built, 0, 0);
  process.exit(result.status ?? 1);
}
