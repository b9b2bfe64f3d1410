// Finds an executable the way a shell would (a path, or a name on PATH) without running anything.
import { constants } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import { delimiter, isAbsolute, join, resolve } from 'node:path';

export async function findExecutable(
  name: string,
  pathList: string,
  cwd: string,
): Promise<string | undefined> {
  const candidates = name.includes('/')
    ? [isAbsolute(name) ? name : resolve(cwd, name)]
    : pathList
        .split(delimiter)
        .filter((dir) => dir !== '')
        .map((dir) => join(resolve(cwd, dir), name));
  for (const candidate of candidates) {
    try {
      await access(candidate, constants.X_OK);
      if ((await stat(candidate)).isFile()) return candidate;
    } catch {
      // not here; try the next directory
    }
  }
  return undefined;
}
