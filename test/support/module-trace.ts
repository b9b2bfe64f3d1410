// Which modules a Node process loads: a resolve hook, given to the child with `--import`, appends the
// URL of every module it resolves (and a wrapper of Module._load, of every module it requires) to a
// trace file. Process tests use it to prove a command stays light.
// The executables run from bundles (dist/bundle/): a bundle file loaded counts as every module built
// into it, by the inputs scripts/build.mjs records, so a trace names the modules and packages as before.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..', '..');
const BUNDLE = pathToFileURL(join(ROOT, 'dist', 'bundle')).href + '/';

/** The module URLs built into each bundle file, by the file's name. */
async function bundleInputs(): Promise<Map<string, string[]>> {
  const meta = JSON.parse(await readFile(join(ROOT, 'dist', 'bundle', 'meta.json'), 'utf8')) as {
    inputs: Record<string, string[]>;
  };
  return new Map(
    Object.entries(meta.inputs).map(([file, inputs]) => [
      file,
      inputs.map((input) => pathToFileURL(join(ROOT, input)).href),
    ]),
  );
}

export interface ModuleTrace {
  /** Node arguments that install the hook: put them before the script. */
  nodeArgs: string[];
  /** Every module URL the traced process resolved, in order. */
  loaded(): Promise<string[]>;
  /** The files of dist/bundle/ it loaded, by name, in order (each once). */
  bundleFiles(): Promise<string[]>;
}

/** Writes a hook and an empty trace into `dir` (named after `name`, so several traces can share it). */
export async function moduleTrace(dir: string, name = 'trace'): Promise<ModuleTrace> {
  const trace = join(dir, `${name}.txt`);
  const hook = join(dir, `${name}-hook.mjs`);
  await writeFile(trace, '');
  // The program (dist/bundle/program-*.cjs, see src/cli/program.ts) is one file whose modules each run
  // when first imported: the build has each report its path there, relative to the checkout (for a
  // module of an esbuild plugin's namespace, 'namespace:path'; Node's own, 'node-builtin:node:name').
  // What is required (the executables and the short status path are CommonJS) is traced through
  // Module._load, which the resolve hook below does not see on Node 20.
  await writeFile(
    hook,
    `import { appendFileSync } from 'node:fs';
import Module, { isBuiltin, register } from 'node:module';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import vm from 'node:vm';
const load = Module._load;
Module._load = function (request, parent, isMain) {
  let file;
  try {
    file = Module._resolveFilename(request, parent, isMain);
  } catch {
    return load.apply(this, arguments);
  }
  const url = isBuiltin(file) ? 'node:' + file.replace(/^node:/, '') : pathToFileURL(file).href;
  appendFileSync(${JSON.stringify(trace)}, url + '\\n');
  return load.apply(this, arguments);
};
// bin/run-built.js compiles status-fast.cjs itself (node:vm, to give V8 the build's code cache).
const { Script } = vm;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (typeof options?.filename === 'string' && isAbsolute(options.filename)) {
      appendFileSync(${JSON.stringify(trace)}, pathToFileURL(options.filename).href + '\\n');
    }
  }
};
globalThis.__forgeModuleInit = (key) => {
  const path = key.replace(/^[a-z-]+:(?!node:)/, '');
  appendFileSync(${JSON.stringify(trace)}, pathToFileURL(isAbsolute(path) ? path : join(${JSON.stringify(ROOT)}, path)).href + '\\n');
};
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
    // Node 26 deprecates module.register() (DEP0205) and says so on stderr, which tests compare; the
    // hook stays on it, the one API Node 20 has.
    nodeArgs: ['--disable-warning=DEP0205', '--import', pathToFileURL(hook).href],
    bundleFiles: async () => {
      const urls = (await readFile(trace, 'utf8')).split('\n').filter((line) => line !== '');
      return [
        ...new Set(urls.filter((url) => url.startsWith(BUNDLE)).map((url) => url.slice(BUNDLE.length))),
      ];
    },
    loaded: async () => {
      const urls = (await readFile(trace, 'utf8')).split('\n').filter((line) => line !== '');
      if (!urls.some((url) => url.startsWith(BUNDLE))) return urls;
      const inputs = await bundleInputs();
      return urls.flatMap((url) => {
        if (!url.startsWith(BUNDLE)) return [url];
        const built = inputs.get(url.slice(BUNDLE.length));
        if (built === undefined) throw new Error(`${url} is not in dist/bundle/meta.json: rebuild`);
        return built;
      });
    },
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
