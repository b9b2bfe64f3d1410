// Which modules a Node process loads: a resolve hook, given to the child with `--import`, appends the
// URL of every module it resolves to a trace file. Process tests use it to prove a command stays light.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ModuleTrace {
  /** Node arguments that install the hook: put them before the script. */
  nodeArgs: string[];
  /** Every module URL the traced process resolved, in order. */
  loaded(): Promise<string[]>;
}

/** Writes a hook and an empty trace into `dir` (named after `name`, so several traces can share it). */
export async function moduleTrace(dir: string, name = 'trace'): Promise<ModuleTrace> {
  const trace = join(dir, `${name}.txt`);
  const hook = join(dir, `${name}-hook.mjs`);
  await writeFile(trace, '');
  await writeFile(
    hook,
    `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`
import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(trace)}, result.url + '\\\\n');
  return result;
}\`));
`,
  );
  return {
    nodeArgs: ['--import', pathToFileURL(hook).href],
    loaded: async () => (await readFile(trace, 'utf8')).split('\n').filter((line) => line !== ''),
  };
}

/** The npm packages among loaded module URLs, by name, sorted. */
export function packagesOf(urls: readonly string[]): string[] {
  const names = new Set<string>();
  for (const url of urls) {
    const name = /node_modules\/([^/]+)\//.exec(url)?.[1];
    if (name !== undefined) names.add(name);
  }
  return [...names].sort();
}
