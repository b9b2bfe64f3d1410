// `npm run test:durations`: rewrites test/support/file-durations.json, the seconds each test file took,
// from the JSON report the last `npm test` wrote (test-results.json). vitest hands out the longest files
// first by it (test/support/longest-first.ts); refresh it when files are added or grow.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../src/infra/atomic-file.js';
import { DURATIONS_FILE, durationsFromReport, ROOT } from '../test/support/longest-first.js';

const reportPath = join(ROOT, 'test-results.json');
let report: Parameters<typeof durationsFromReport>[0];
try {
  report = JSON.parse(await readFile(reportPath, 'utf8')) as typeof report;
} catch (error) {
  process.stderr.write(
    `test:durations: cannot read ${reportPath} (${(error as Error).message}).\nRun \`npm test\` first: it writes that report.\n`,
  );
  process.exit(1);
}
const durations = durationsFromReport(report);
const files = Object.keys(durations).length;
if (files === 0) {
  process.stderr.write(`test:durations: ${reportPath} holds no test file; the table is left as it was.\n`);
  process.exit(1);
}
await writeFileAtomic(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
process.stdout.write(`wrote ${files} file durations to ${DURATIONS_FILE}\n`);
