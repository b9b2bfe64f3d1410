// A vitest reporter that fails the run when a test neither passed nor failed: skipped, left pending
// because its worker died under it, or marked todo. A green run means every test ran. A run narrowed by
// name (`-t`) skips the rest on purpose: there only tests that never finished count.
import type { Reporter, TestModule, Vitest } from 'vitest/node';

export default class EveryTestRan implements Reporter {
  private narrowed = false;

  onInit(vitest: Vitest): void {
    this.narrowed = vitest.config.testNamePattern !== undefined;
  }

  onTestRunEnd(testModules: readonly TestModule[]): void {
    const notRun: string[] = [];
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed' || state === 'failed' || (state === 'skipped' && this.narrowed)) continue;
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
