// A vitest reporter that fails the run when a test neither passed nor failed: skipped, left pending
// because its worker died under it (a test that kills its own process is reported as pending, and the
// run as a success), or marked todo. A green run means every test ran.
import type { Reporter, TestModule } from 'vitest/node';

export default class EveryTestRan implements Reporter {
  onTestRunEnd(testModules: readonly TestModule[]): void {
    const notRun: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state !== 'passed' && state !== 'failed')
          notRun.push(`${module.relativeModuleId} > ${test.fullName}: ${state}`);
      }
    }
    if (notRun.length === 0) return;
    process.stderr.write(
      `\n${notRun.length} test(s) did not run to an end (skipped, todo, or their worker died):\n` +
        notRun.map((line) => `  ${line}\n`).join(''),
    );
    process.exitCode = 1;
  }
}
