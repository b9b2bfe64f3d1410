// `--store auto`: is there a br on the PATH Forge was given, and which version is it?
import { statSync } from 'node:fs';
import { findExecutable } from '../../infra/executables.js';
import { runShortProcess } from '../../infra/short-process.js';
import { extractJsonDocuments } from './output.js';
import { parseBrVersion } from './version.js';

export interface ProbeBrOptions {
  env: NodeJS.ProcessEnv;
  /** Default `br`; a name is looked up on `env.PATH`, a path is used as it is. */
  brPath?: string;
  /** Where relative paths resolve and br runs; default the current directory. */
  cwd?: string;
  timeoutMs?: number;
}

export interface BrProbe {
  /** Absolute path of the executable found. */
  path: string;
  /** `unknown` when the executable answered but named no version. */
  version: string;
}

/** Finds br and asks its version; undefined when there is no executable br. */
export function probeBr(options: ProbeBrOptions): Promise<BrProbe | undefined> {
  return rememberingProbe()(options);
}

/**
 * probeBr that asks each br once: a command that opens the store twice (`ralph-loop once` finds the
 * bead's epic, then runs it) makes one `br version`. Remembered by executable and its file's identity:
 * a br replaced at the same path (an upgrade) is asked again, and one that could not be started is too.
 */
export function rememberingProbe(): (options: ProbeBrOptions) => Promise<BrProbe | undefined> {
  const asked = new Map<string, Promise<string | undefined>>();
  return async (options) => {
    const cwd = options.cwd ?? process.cwd();
    const path = await findExecutable(options.brPath ?? 'br', options.env.PATH ?? '', cwd);
    if (path === undefined) return undefined;
    const key = fileKey(path);
    let version = key === undefined ? undefined : asked.get(key);
    if (version === undefined) {
      version = askVersion(path, cwd, options);
      if (key !== undefined) {
        asked.set(key, version);
        void version.then((found) => found === undefined && asked.delete(key));
      }
    }
    const found = await version;
    return found === undefined ? undefined : { path, version: found };
  };
}

/** `br --json version`: the version it names, `unknown` when it names none, undefined when it did not run. */
async function askVersion(path: string, cwd: string, options: ProbeBrOptions): Promise<string | undefined> {
  const result = await runShortProcess(
    { file: path, args: ['--json', 'version'] },
    {
      cwd,
      env: quietEnvironment(options.env),
      timeoutMs: options.timeoutMs ?? 10_000,
    },
  );
  if (result.spawnError !== undefined || result.outputError !== undefined) return undefined;
  const fromJson = extractJsonDocuments(result.stdout)
    .map(parseBrVersion)
    .find((v) => v !== undefined);
  return fromJson ?? parseBrVersion(result.stdout) ?? 'unknown';
}

/**
 * The executable's identity as a file: its content changes its size or time, a new file its inode.
 * Not its ctime, which a chmod moves. Undefined when it cannot be read: then it is not remembered.
 */
function fileKey(path: string): string | undefined {
  try {
    const stat = statSync(path);
    return [path, stat.dev, stat.ino, stat.size, stat.mtimeMs].join('\0');
  } catch {
    return undefined;
  }
}

/** As for every br call: quiet, uncoloured, and no output-format override fighting `--json`. */
function quietEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env, RUST_LOG: 'error', NO_COLOR: '1' };
  delete result.BR_OUTPUT_FORMAT;
  delete result.TOON_DEFAULT_FORMAT;
  return result;
}
