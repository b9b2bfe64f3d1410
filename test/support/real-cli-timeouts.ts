// The timeouts of the files that drive the real agent CLIs (test/e2e-claude/): a real binary's start
// and a scripted model's turns take longer than the rest. Applied by setup-real-cli-timeouts.ts.

/** A test's and a hook's timeout in the real-CLI files, in ms. */
export const REAL_CLI_TIMEOUTS = { testTimeout: 300_000, hookTimeout: 60_000 } as const;

/** Whether `path` (a test file's) is one of the real-CLI files. */
export function isRealCliFile(path: string): boolean {
  return /[\\/]test[\\/]e2e-claude[\\/]/.test(path);
}
