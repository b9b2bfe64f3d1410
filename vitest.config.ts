// Vitest projects: fast unit/adapter tests by default; the real-agent e2e suite lives in its own project.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
