// `--store auto`: is there a br on the PATH Forge was given, and which version is it?
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
export async function probeBr(options: ProbeBrOptions): Promise<BrProbe | undefined> {
  const cwd = options.cwd ?? process.cwd();
  const path = await findExecutable(options.brPath ?? 'br', options.env.PATH ?? '', cwd);
  if (path === undefined) return undefined;
  const result = await runShortProcess(
    { file: path, args: ['--json', 'version'] },
    {
      cwd,
      env: quietEnvironment(options.env),
      timeoutMs: options.timeoutMs ?? 10_000,
    },
  );
  if (result.spawnError !== undefined) return undefined;
  const fromJson = extractJsonDocuments(result.stdout)
    .map(parseBrVersion)
    .find((v) => v !== undefined);
  return { path, version: fromJson ?? parseBrVersion(result.stdout) ?? 'unknown' };
}

/** As for every br call: quiet, uncoloured, and no output-format override fighting `--json`. */
function quietEnvironment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const result: NodeJS.ProcessEnv = { ...env, RUST_LOG: 'error', NO_COLOR: '1' };
  delete result.BR_OUTPUT_FORMAT;
  delete result.TOON_DEFAULT_FORMAT;
  return result;
}
