// Whether a path stays inside a directory once every symlink on the way is followed.
import { lstat, readlink, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { mapConcurrent } from './concurrent.js';

function inside(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * Where `path` (relative to `root`) really leads: the real path of its deepest existing ancestor, with
 * the rest appended. Links are followed, so a link to /tmp resolves under /tmp.
 */
export async function realLocation(root: string, path: string): Promise<string> {
  let existing = resolve(root, path);
  const rest: string[] = [];
  for (;;) {
    try {
      const real = await realpath(existing);
      return rest.length === 0 ? real : resolve(real, ...rest.reverse());
    } catch {
      const parent = dirname(existing);
      if (parent === existing) return resolve(root, path);
      rest.push(existing.slice(parent.length + 1));
      existing = parent;
    }
  }
}

/** True when `path` (relative to `root`), followed through every link, stays inside `root`. */
export async function staysInside(root: string, path: string): Promise<boolean> {
  return inside(await realpath(root), await realLocation(root, path));
}

/**
 * Of `paths` (relative to `root`), the symlinks whose target leads out of `root`, or into one of
 * `closed` (directories inside it that no commit holds: git's own, a tool's state).
 */
export async function linksLeadingOut(
  root: string,
  paths: readonly string[],
  closed: readonly string[] = [],
): Promise<string[]> {
  const realRoot = await realpath(root);
  const fenced = await Promise.all(closed.map((dir) => realLocation(realRoot, dir)));
  const leading = await mapConcurrent(paths, async (path) => {
    const absolute = resolve(root, path);
    const stat = await lstat(absolute).catch(() => undefined);
    if (stat?.isSymbolicLink() !== true) return false;
    const target = resolve(await realpath(dirname(absolute)), await readlink(absolute));
    const real = await realLocation(realRoot, target);
    return !inside(realRoot, real) || fenced.some((dir) => inside(dir, real));
  });
  return paths.filter((_, index) => leading[index]).sort();
}
