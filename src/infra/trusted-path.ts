// Which program a bare name runs, for the programs Forge itself runs on the tree (git, br): the first
// on PATH outside the working tree. A PATH entry inside it (direnv's `PATH_add node_modules/.bin`, a
// relative `./bin`) is a folder any agent at work in the tree can put a `git` or a `br` into, and Forge
// would then run that script and believe what it prints.
import { existsSync } from 'node:fs';
import { delimiter, dirname, isAbsolute, join, relative } from 'node:path';
import { findExecutable } from './executables.js';

/** The top of the working tree `dir` is in (the nearest folder holding `.git`), else `dir`. */
function treeRootOf(dir: string): string {
  for (let at = dir; ; at = dirname(at)) {
    if (existsSync(join(at, '.git'))) return at;
    if (dirname(at) === at) return dir;
  }
}

/** `pathList` without its relative entries and those inside the working tree `cwd` is in. */
export function pathOutsideTree(pathList: string, cwd: string): string {
  const root = treeRootOf(cwd);
  return pathList
    .split(delimiter)
    .filter((dir) => {
      if (dir === '' || !isAbsolute(dir)) return false;
      const rel = relative(root, dir);
      return rel !== '' && (rel.startsWith('..') || isAbsolute(rel));
    })
    .join(delimiter);
}

const resolved = new Map<string, Promise<string>>();

/**
 * What `name` runs as from `cwd` with `env.PATH`, PATH taken without the entries `pathOutsideTree`
 * drops; `name` itself when it holds a `/` (a path the user gave), or when no entry outside the tree
 * has it (the spawn then fails as it would have, naming it). Asked once per name, cwd and PATH.
 */
export function outsideTree(name: string, cwd: string, env: NodeJS.ProcessEnv): Promise<string> {
  if (name.includes('/')) return Promise.resolve(name);
  const path = env.PATH ?? '';
  const key = `${name}\0${cwd}\0${path}`;
  let found = resolved.get(key);
  if (found === undefined) {
    found = findExecutable(name, pathOutsideTree(path, cwd), cwd).then((file) => file ?? name);
    resolved.set(key, found);
  }
  return found;
}
