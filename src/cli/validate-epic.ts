// Gathers what the epic checks need (the store's graph, the config's names, the loop's files, whether
// each gate's program is there) and runs them: `forge-pack validate` and the check before every run.
import { relative } from 'node:path';
import { findLoopWorkspace } from '../autoresearch/workspace.js';
import type { BeadStore, EpicGraph } from '../beads/types.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { ConfigError } from '../infra/errors.js';
import { checkEpic, sortProblems, uniqueProblems, type ValidationProblem } from '../loop/validate/index.js';
import { findExecutable } from './environment-probes.js';
import { configuredGates } from './config-gates.js';
import type { ForgeConfig } from './forge-config.js';

export interface ValidateOptions {
  /** The repository root: where the loops registry, workspaces and relative gate programs are. */
  repo: string;
  store: BeadStore;
  config: ForgeConfig;
  env: NodeJS.ProcessEnv;
  /** Where a loop's workspace is read. */
  files: LoopFiles;
  /** `--agent` on a run's command line: agent labels are not used by that run. */
  agentOverride?: boolean | undefined;
  /** `--gates`/`--no-gates` on a run's command line (default: `runner.run_gates`, else on). */
  gates?: boolean | undefined;
  /** Graphs already read (the run's own read before it starts): those epics are not read again. */
  graphs?: readonly EpicGraph[];
}

export interface EpicSummary {
  id: string;
  title: string;
  beads: number;
  loop: string | null;
}

export interface ValidationReport {
  ok: boolean;
  epics: EpicSummary[];
  problems: ValidationProblem[];
}

/** Checks each epic (one store read each); a problem found twice (an epic inside another) is listed once. */
export async function validateEpics(
  ids: readonly string[],
  options: ValidateOptions,
): Promise<ValidationReport> {
  const missingGatePrograms = await missingPrograms(options);
  const epics: EpicSummary[] = [];
  const problems: ValidationProblem[] = [];
  for (const id of ids) {
    const graph = options.graphs?.find((known) => known.epic.id === id) ?? (await options.store.graph(id));
    const workspace = await findLoopWorkspace(options.repo, id);
    const beads = graph.beads;
    const stamped = beads.some((bead) => bead.labels.includes('autoresearch'));
    problems.push(
      ...checkEpic({
        graph,
        storeKind: options.store.kind,
        loop: workspace !== undefined,
        configRoles: Object.keys(options.config.agents),
        agentCommands: options.config.agent_commands,
        gates: Object.keys(options.config.gates),
        missingGatePrograms,
        gatesOn: options.gates ?? options.config.runner.run_gates ?? true,
        ...(options.agentOverride === true ? { agentOverride: true } : {}),
      }),
    );
    if (workspace !== undefined) {
      // Only a loop loads the loop checks (its config schema, templates and ledger reader).
      const { checkLoop, readLoopState } = await import('../autoresearch/validate-loop.js');
      problems.push(
        ...checkLoop(id, beads, await readLoopState(options.files, options.repo, workspace, beads)),
      );
    } else if (stamped) {
      problems.push({
        severity: 'error',
        check: 'loop',
        subject: id,
        message: `${id} holds autoresearch beads, but no loop workspace is registered for it: they would run as plain agent beads`,
        fix: 'Run from the repository the loop was made in, or restore its entry in .forge/loops.json.',
      });
    }
    epics.push({
      id,
      title: graph.epic.title,
      beads: beads.length,
      loop: workspace === undefined ? null : relative(options.repo, workspace).split('\\').join('/'),
    });
  }
  const all = sortProblems(uniqueProblems(problems));
  return { ok: !all.some((p) => p.severity === 'error'), epics, problems: all };
}

async function missingPrograms(options: ValidateOptions): Promise<{ name: string; program: string }[]> {
  const found = await Promise.all(
    configuredGates(options.config).map(async ({ name, argv }) => ({
      name,
      program: argv[0] ?? '',
      path: await findExecutable(argv[0] ?? '', options.env, options.repo),
    })),
  );
  return found.filter((gate) => gate.path === undefined).map(({ name, program }) => ({ name, program }));
}

/** `subject: message`, without saying the subject twice when the message starts with it. */
export function describeProblem(problem: ValidationProblem): string {
  return problem.message.startsWith(problem.subject)
    ? problem.message
    : `${problem.subject}: ${problem.message}`;
}

export function renderReport(report: ValidationReport): string {
  const lines: string[] = [];
  for (const epic of report.epics)
    lines.push(
      `${epic.id} ${JSON.stringify(epic.title)}: ${epic.beads} bead(s)${epic.loop === null ? '' : ', an autoresearch loop'}`,
    );
  let check = '';
  for (const problem of report.problems) {
    if (problem.check !== check) {
      check = problem.check;
      lines.push('', `${check}:`);
    }
    lines.push(
      `  ${problem.severity === 'error' ? 'error  ' : 'warning'} ${problem.subject}: ${problem.message}`,
    );
    lines.push(`          fix: ${problem.fix}`);
  }
  const errors = report.problems.filter((p) => p.severity === 'error').length;
  const warnings = report.problems.length - errors;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  lines.push(
    '',
    report.problems.length === 0
      ? 'No problems found.'
      : `${count(errors, 'error')}, ${count(warnings, 'warning')}.`,
  );
  return `${lines.join('\n')}\n`;
}

export interface PreRunCheck extends ValidateOptions {
  epicId: string;
  /** `ralph-loop once <bead>`: only problems of that bead, and of the files every bead uses, refuse it. */
  onlyBead?: string | undefined;
  /** Where warnings are said (stderr). */
  warn(line: string): void;
}

/** Whether a problem stands in the way of running `bead` alone: it names the bead, or is about the loop or a file. */
function concerns(problem: ValidationProblem, bead: string | undefined): boolean {
  if (bead === undefined || problem.subject === bead || problem.subject.includes('/')) return true;
  if (problem.check === 'loop' || problem.check === 'template') return true;
  const escaped = bead.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[\\s(,])${escaped}($|[\\s),:])`).test(problem.message);
}

/**
 * Before a run claims anything: the epic's errors refuse the run (exit 4) with each named; its
 * warnings are said and the run goes on.
 */
export async function refuseInvalidEpic(check: PreRunCheck): Promise<void> {
  const report = await validateEpics([check.epicId], check);
  for (const problem of report.problems.filter((p) => p.severity === 'warning'))
    check.warn(`warning: ${describeProblem(problem)}`);
  const errors = report.problems.filter((p) => p.severity === 'error' && concerns(p, check.onlyBead));
  if (errors.length === 0) return;
  throw new ConfigError(
    `${check.epicId} has ${errors.length} problem${errors.length === 1 ? '' : 's'} a run cannot get past; nothing was claimed:\n${errors.map((p) => `  ${describeProblem(p)}`).join('\n')}`,
    {
      hint: `forge-pack validate ${check.epicId} shows each with its fix; to run anyway: ralph-loop ${check.onlyBead === undefined ? check.epicId : `once ${check.onlyBead}`} --no-validate`,
    },
  );
}
