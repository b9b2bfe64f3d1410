// Debian's chromium driven by playwright-core, for the tests that look at Forge's pages as a person
// would. No browser is downloaded: a missing chromium fails the test with what to install.
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { onTestFinished } from 'vitest';
import type { z } from 'zod';
import { ROOT } from './cli.js';

/** Where the browser tests leave their screenshots (gitignored), for notes and reviews to point to. */
export const SCREENSHOTS = join(ROOT, 'test-results', 'screenshots');

const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome'];

export async function chromiumPath(env: NodeJS.ProcessEnv = process.env): Promise<string> {
  const candidates = env.FORGE_CHROMIUM === undefined ? CANDIDATES : [env.FORGE_CHROMIUM];
  for (const path of candidates) {
    try {
      await access(path);
      return path;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    `No chromium at ${candidates.join(', ')}: install Debian's (apt-get install -y chromium; .ci/run does it in CI) or set FORGE_CHROMIUM to a Chromium binary.`,
  );
}

export async function launchBrowser(): Promise<Browser> {
  // Root (CI, containers) cannot use Chromium's sandbox.
  const browser = await chromium.launch({ executablePath: await chromiumPath(), args: ['--no-sandbox'] });
  onTestFinished(() => browser.close());
  return browser;
}

/** A page that records every console error and uncaught exception, for a test to check none happened. */
export async function watchedPage(
  browser: Browser,
  viewport = { width: 1200, height: 900 },
): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage({ viewport });
  const errors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  page.on('pageerror', (error) => errors.push(error.message));
  return { page, errors };
}

export async function screenshot(page: Page, name: string): Promise<string> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const path = join(SCREENSHOTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
}

/**
 * Evaluates a JavaScript expression in the page (as text: the tests are compiled without the DOM's
 * types) and checks its value against a schema.
 */
export async function inPage<T>(page: Page, expression: string, schema: z.ZodType<T>): Promise<T> {
  return schema.parse(await page.evaluate<unknown>(expression));
}
