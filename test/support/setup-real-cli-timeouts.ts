// Setup file (vitest.config.ts), run before each test file: a real-CLI file gets the longer timeouts
// (real-cli-timeouts.ts). vitest puts a file's config back after it (vi.resetConfig), so the next
// file in the same worker has the config's own again.
import { expect, vi } from 'vitest';
import { isRealCliFile, REAL_CLI_TIMEOUTS } from './real-cli-timeouts.js';

if (isRealCliFile(expect.getState().testPath ?? '')) vi.setConfig(REAL_CLI_TIMEOUTS);
