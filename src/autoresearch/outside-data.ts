// The data outside the repository that the loop's commands name: `python3 eval.py /data/val.csv`, a
// script holding `DATA = '/home/me/datasets/val'`. The measured code can write there as well as in the
// tree (seen: a Python artifact that wrote its own answer over the dataset the metric named, 0 → 100,
// kept, and the user's dataset left holding its answer). measured-data.ts holds these files too: each
// absolute path the commands or their scripts name, outside the trees and the system's own folders,
// that exists (a folder: every file in it).
import { isAbsolute, join, normalize, relative, resolve, sep } from 'node:path';
import { changeStamp, fileStat, readBytesIfReadable } from '../infra/fs-ops.js';
import { fingerprintFiles } from '../infra/ignored-files.js';
import type { LoopConfig } from './config.js';
import { commandFiles, loopCommands } from './metric-files.js';

/** The system's folders: programs, libraries and settings, never a loop's data. */
const SYSTEM_DIRS = [
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/usr',
  '/etc',
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/boot',
  '/nix',
  '/snap',
  '/var/lib',
  '/var/run',
  '/var/cache',
  '/System',
  '/Library',
  '/Applications',
  '/opt/homebrew',
];
/** A script past this size is not read for paths. */
const MAX_SCRIPT_BYTES = 256 * 1024;
/**
 * A path out of the tree as written in a script: absolute (`/` and at least one name), from the home or
 * a variable (`~/`, `$HOME/`, `${DATA_DIR}/`) or above the folder the commands run in (`../`), quoted or
 * bare.
 */
const OUTSIDE_PATH =
  /(?<![\w.~$/-])(?:~|\$[A-Za-z_]\w*|\$\{[A-Za-z_]\w*\}|(?:\.\.\/)*\.\.)?\/(?:[\w.@+-]+\/)*[\w.@+-]+\/?/g;
/** `~`, `$NAME` or `${NAME}` at a path's start, and the rest of it. */
const FROM_VARIABLE = /^(?:~|\$([A-Za-z_]\w*)|\$\{([A-Za-z_]\w*)\})(\/.*)$/;

function under(path: string, dir: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Whether a named path may be the loop's data: outside the trees and the system's folders, and not `/`. */
function mayBeData(path: string, trees: readonly string[]): boolean {
  // /dev/shm is a folder anyone writes, as /tmp is.
  if (path === sep || (SYSTEM_DIRS.some((dir) => under(path, dir)) && !under(path, '/dev/shm'))) return false;
  return !trees.some((tree) => under(path, tree) || under(tree, path));
}

/**
 * The paths out of the trees the loop's commands name, in their argv (`--data=/x`, `../data` too) and in
 * the text of the scripts they run (`~/`, `$HOME/`, `${DATA_DIR}/` read from `env`, the environment
 * the commands run with), that exist and may be data (see mayBeData), absolute and sorted.
 */
export async function namedOutsidePaths(
  config: LoopConfig,
  cwd: string,
  trees: readonly string[],
  env: Readonly<Record<string, string | undefined>> = {},
): Promise<string[]> {
  const words = loopCommands(config).flatMap((argv) =>
    argv.flatMap((arg) => [arg, ...(arg.includes('=') ? [arg.slice(arg.indexOf('=') + 1)] : [])]),
  );
  for (const file of await commandFiles(config, cwd)) {
    const text = await readScript(join(cwd, file));
    if (text !== undefined) words.push(...(text.match(OUTSIDE_PATH) ?? []));
  }
  const found = new Set<string>();
  for (const word of words) {
    const variable = FROM_VARIABLE.exec(word);
    const base = variable === null ? undefined : env[variable[1] ?? variable[2] ?? 'HOME'];
    const resolved =
      variable !== null
        ? base === undefined || !isAbsolute(base)
          ? undefined
          : join(base, variable[3] ?? '')
        : isAbsolute(word)
          ? word
          : word.startsWith('../')
            ? resolve(cwd, word)
            : undefined;
    if (resolved === undefined) continue;
    const path = normalize(resolved).replace(/(.)\/$/, '$1');
    if (found.has(path) || !mayBeData(path, trees)) continue;
    if ((await changeStamp(path)) !== undefined) found.add(path);
  }
  return [...found].sort();
}

async function readScript(path: string): Promise<string | undefined> {
  const stats = await fileStat(path);
  if (stats === undefined || !stats.regular || stats.size > MAX_SCRIPT_BYTES) return undefined;
  const text = (await readBytesIfReadable(path))?.toString('utf8');
  return text === undefined || text.includes('\0') ? undefined : text;
}

/** Every file under `paths` (absolute) with its identity, as the ignored files' fingerprint takes them. */
export function fingerprintOutside(paths: readonly string[]): Map<string, string> {
  if (paths.length === 0) return new Map();
  const found = fingerprintFiles('/', paths);
  return new Map([...found.others, ...found.caches, ...found.dependencies]);
}
