// Which program a bare name runs, for the programs Forge itself runs on the tree (git, br): the first
// on PATH outside the working tree. A PATH entry inside it (direnv's `PATH_add node_modules/.bin`, a
// relative `./bin`) is a folder any agent at work in the tree can put a `git` or a `br` into, and Forge
// would then run that script and believe what it prints.
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative, sep } from 'node:path';

/** The top of the working tree `dir` is in (the nearest folder holding `.git`), else `dir`. */
function treeRootOf(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return dir;
  }
}

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

const resolved = new Map<string, string>();

/**
 * The absolute path `name` runs as from `cwd` with `env.PATH`, skipping PATH entries that are relative
 * or inside `cwd`'s working tree; `name` itself when it holds a path separator, or when no entry
 * outside the tree has it (the spawn then fails as it would have, naming it).
 */
export function outsideTree(name: string, cwd: string, env: NodeJS.ProcessEnv): string {
  if (name.includes(sep) || name.includes('/')) return name;
  const path = env.PATH ?? '';
  const key = `${name}\0${cwd}\0${path}`;
  const known = resolved.get(key);
  if (known !== undefined) return known;
  const root = treeRootOf(cwd);
  let found = name;
  for (const dir of path.split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const rel = relative(root, dir);
    if (rel === '' || (!rel.startsWith('..') && !isAbsolute(rel))) continue;
    if (isExecutableFile(join(dir, name))) {
      found = join(dir, name);
      break;
    }
  }
  resolved.set(key, found);
  return found;
}
