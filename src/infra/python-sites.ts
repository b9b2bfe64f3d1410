// The site-packages directories of the Python interpreters on PATH (`python3`, `python`), as each says:
// every `.pth` file at the top of one is run by every Python process as it starts, and a
// `sitecustomize.py` there is imported. Where the runner runs as root (a container), an agent can write
// them too. Asked once per runner process and PATH; nothing when no Python is there.
import { readdir } from 'node:fs/promises';
import { runProcess } from './process.js';

const ASK = 'import json, site; print(json.dumps(site.getsitepackages()))';
const known = new Map<string, Promise<string[]>>();

export function pythonSitePackages(env: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  const key = env.PATH ?? '';
  let sites = known.get(key);
  if (sites === undefined) {
    sites = ask(env);
    known.set(key, sites);
  }
  return sites;
}

async function ask(env: Readonly<Record<string, string | undefined>>): Promise<string[]> {
  const found = new Set<string>();
  if (env.PATH === undefined || env.PATH === '') return [];
  // Both at once: behind a version manager's shim (pyenv) each answer takes ~0.25 s here.
  const results = await Promise.all(
    ['python3', 'python'].map((file) =>
      runProcess(
        { file, args: ['-c', ASK] },
        { cwd: '/', env: { PATH: env.PATH, HOME: env.HOME }, timeoutMs: 10_000 },
      ),
    ),
  );
  for (const result of results) {
    if (result.exitCode !== 0) continue;
    try {
      const sites: unknown = JSON.parse(result.stdout);
      if (Array.isArray(sites)) for (const site of sites) if (typeof site === 'string') found.add(site);
    } catch {
      // Not what was asked for: nothing from this one.
    }
  }
  return [...found];
}

/**
 * The top-level names the interpreters' site-packages hold (packages, modules, extension modules):
 * what `import name` finds there. A module of the same name earlier on the path is imported instead.
 */
export async function pythonInstalledModules(
  env: Readonly<Record<string, string | undefined>>,
): Promise<Set<string>> {
  const names = new Set<string>();
  for (const site of await pythonSitePackages(env)) {
    for (const entry of await readdir(site, { withFileTypes: true }).catch(() => [])) {
      const name = entry.isDirectory()
        ? /^([A-Za-z_]\w*)$/.exec(entry.name)?.[1]
        : /^([A-Za-z_]\w*)(?:\.pyw?|(?:\.[\w-]+)?\.so)$/.exec(entry.name)?.[1];
      if (name !== undefined) names.add(name);
    }
  }
  return names;
}
