// `forge-pack doctor`: is everything Forge needs here and healthy? One line per check, a fix for each problem.
import type { Command } from 'commander';
import { AppError, ExitCode } from '../infra/errors.js';
import { isProcessAlive } from '../infra/pid.js';
import { globals, parseInteger, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import type { CheckStatus, DoctorCheck } from './doctor-checks.js';
import { printJson } from './output.js';

/** What doctor adds to CliDeps, so tests can pose as another Node or another process table. */
export interface DoctorDeps {
  nodeVersion?: string;
  isProcessAlive?: (pid: number) => boolean;
}

export function defineDoctorCommand(command: Command, deps: CliDeps & DoctorDeps): void {
  command
    .option(
      '--timeout <seconds>',
      'how long each version probe (claude, codex, br) may take (default 10)',
      parseInteger(1),
    )
    .addHelpText(
      'after',
      `
Examples:
  forge-pack doctor
  forge-pack doctor --json | jq '.checks[] | select(.status != "ok")'

Each line is ok, info, warn or FAIL; every warn and FAIL says how to fix it. Exit codes: 0 nothing
needed is missing (warnings allowed), 3 something needed is missing (node ≥ 20.11, git and a
repository, a bead store that opens), 4 a config that does not validate (.forge/config.json,
.forge/loops.json, a loop's config.json).`,
    )
    .action(async (flags: { timeout?: number }, command: Command) => {
      const options = globals(command);
      const cwd = workingDir(deps, options);
      // The checks (and zod, execa, the stores) load only when doctor runs.
      const { runDoctorChecks } = await import('./doctor-checks.js');
      const checks = await runDoctorChecks({
        deps,
        cwd,
        nodeVersion: deps.nodeVersion ?? process.versions.node,
        store: options.store,
        actor: options.actor,
        timeoutMs: (flags.timeout ?? 10) * 1000,
        isAlive: deps.isProcessAlive ?? isProcessAlive,
      });
      const failed = checks.filter((check) => check.status === 'fail');
      if (options.json) printJson(deps, { ok: failed.length === 0, cwd, checks });
      else deps.stdout.write(renderChecks(cwd, checks));
      if (failed.length === 0) return;
      const onlyConfig = failed.every((check) => check.kind === 'config');
      throw new AppError(
        `${failed.length} problem${failed.length === 1 ? '' : 's'} found: ${failed.map((c) => c.name).join(', ')}.`,
        {
          exitCode: onlyConfig ? ExitCode.config : ExitCode.environment,
          hint: options.json
            ? 'See the checks with "status": "fail" and their "fix".'
            : 'Each FAIL line above says how to fix it.',
        },
      );
    });
}

const LABEL: Record<CheckStatus, string> = { ok: 'ok', info: 'info', warn: 'warn', fail: 'FAIL' };

/** Plain text, one check per line, its fix indented below; no colour, so it reads the same in a log. */
export function renderChecks(cwd: string, checks: readonly DoctorCheck[]): string {
  const width = Math.max(...checks.map((check) => check.name.length));
  const lines = [`Forge doctor: ${cwd}`];
  for (const check of checks) {
    lines.push(`${LABEL[check.status].padEnd(5)} ${check.name.padEnd(width)}  ${check.summary}`);
    if (check.fix !== undefined) lines.push(`${' '.repeat(5)} ${' '.repeat(width)}  fix: ${check.fix}`);
  }
  const count = (status: CheckStatus): number => checks.filter((check) => check.status === status).length;
  const problems = count('fail');
  const warnings = count('warn');
  lines.push(
    problems === 0
      ? `Ready${warnings === 0 ? '.' : `, with ${warnings} warning${warnings === 1 ? '' : 's'}.`}`
      : `${problems} problem${problems === 1 ? '' : 's'}, ${warnings} warning${warnings === 1 ? '' : 's'}.`,
  );
  return `${lines.join('\n')}\n`;
}
