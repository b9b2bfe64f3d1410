// `npm run test:durations [-- <report>]`: rewrites test/support/file-durations.json, the seconds each test
// file took, from a JSON report `npm test` wrote (test-results.json; by default this checkout's). vitest
// hands out the longest files first by it (test/support/longest-first.ts); refresh it when files are
// added or grow. A clean clone's report (a CI run's, the times that matter most) serves as well: its
// files are read relative to the clone.
import { join, resolve } from 'node:path';
import { DURATIONS_FILE, refreshDurations, ROOT } from '../test/support/longest-first.js';

const args = process.argv.slice(2);
if (args.length > 1 || args[0]?.startsWith('-')) {
  process.stderr.write(
    'usage: npm run test:durations [-- <test-results.json>]\n' +
      "Rewrites test/support/file-durations.json from a report `npm test` wrote (default: this checkout's).\n",
  );
  process.exit(args[0] === '--help' || args[0] === '-h' ? 0 : 2);
}
const reportPath = args[0] === undefined ? join(ROOT, 'test-results.json') : resolve(args[0]);
try {
  const { written, leftOut } = await refreshDurations(reportPath);
  const left = leftOut.length === 0 ? '' : ` (left out ${leftOut.length} this checkout does not have)`;
  process.stdout.write(`wrote ${written} file durations to ${DURATIONS_FILE}${left}\n`);
} catch (error) {
  process.stderr.write(
    `test:durations: cannot use ${reportPath}: ${(error as Error).message}\n` +
      'Run `npm test` first: it writes that report. The table is left as it was.\n',
  );
  process.exit(1);
}
