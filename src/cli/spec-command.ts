// `forge-pack spec status|record|advance <slug>`: how skills and people read and move a spec's run
// state. Every change goes through the state machine's rules, under the spec's lock, written atomically.
import { createHash } from 'node:crypto';
import { join, relative, resolve, sep } from 'node:path';
import type { Command } from 'commander';
import {
  advance,
  isTarget,
  TARGETS,
  type AdvanceResult,
  type Target,
} from '../autoresearch/spec-state/machine.js';
import { changeRunState, readRunState, runStateFile } from '../autoresearch/spec-state/file.js';
import { applyRecord, type RecordResult } from '../autoresearch/spec-state/record.js';
import { newRunState } from '../autoresearch/spec-state/schema.js';
import type { Violation } from '../autoresearch/spec-state/rules.js';
import { readFileIfExists } from '../infra/atomic-file.js';
import { staysInside } from '../infra/contained-path.js';
import { AppError, ExitCode, UsageError } from '../infra/errors.js';
import { globals, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { printJson, say } from './output.js';
import { addRecordOptions, recordInputOf, type RecordFlags } from './spec-record-options.js';
import { specStatus, specStatusLines } from './spec-status-text.js';

/** A move or record the rules refuse: exit 4, naming the rule. */
export class SpecRefusedError extends AppError {
  constructor(
    message: string,
    readonly violations: readonly Violation[],
    hint: string,
  ) {
    super(message, { exitCode: ExitCode.config, hint });
    this.name = 'SpecRefusedError';
  }
}

export function defineSpecCommand(command: Command, deps: CliDeps): void {
  command
    .command('status')
    .description('where the spec stands, whether the readiness gate passes, and what the next step needs')
    .argument('<slug>', 'the spec, as in specs/<slug>/')
    .action(async (slug: string, _flags: unknown, cmd: Command) => {
      const options = globals(cmd);
      const state = await readRunState(workingDir(deps, options), slug);
      if (state === undefined) throw notStarted(slug);
      const status = specStatus(state);
      if (options.json === true) printJson(deps, status);
      else for (const line of specStatusLines(status)) say(deps, line);
    });

  addRecordOptions(
    command
      .command('record')
      .description(
        'record what a phase produced: evidence, claims, gaps, questions, scores, blockers, reviews',
      )
      .argument('<slug>', 'the spec, as in specs/<slug>/ (a first record starts its run state)'),
  )
    .option('--by <who>', 'who records it (default: --actor, else forge)')
    .option('--reason <why>', 'why; required to --resolve a blocker')
    .action(async (slug: string, _flags: unknown, cmd: Command) => {
      const flags = cmd.optsWithGlobals<RecordFlags & { by?: string; reason?: string }>();
      const options = globals(cmd);
      const input = recordInputOf(flags);
      const repo = workingDir(deps, options);
      if (flags.draft !== undefined) input.draft = await draftOf(repo, flags.draft);
      const who = {
        by: flags.by ?? options.actor ?? 'forge',
        reason: flags.reason ?? null,
        at: new Date(deps.clock.now()).toISOString(),
      };
      const result = await changeRunState<RecordResult>(repo, slug, (current) => {
        const outcome = applyRecord(current ?? newRunState(slug), input, who);
        return outcome.ok ? { write: outcome.state, result: outcome } : { result: outcome };
      });
      if (!result.ok) {
        if (result.rule === undefined) throw new UsageError(`Nothing recorded: ${result.message}.`);
        throw new SpecRefusedError(
          `Refused by ${result.rule}: ${result.message}. Nothing recorded.`,
          [{ rule: result.rule, message: result.message }],
          `forge-pack spec status ${slug} shows the run state.`,
        );
      }
      if (options.json === true)
        printJson(deps, { ok: true, recorded: result.what, ...specStatus(result.state) });
      else say(deps, `${slug}: recorded ${result.what.join('; ')}.`);
    });

  command
    .command('advance')
    .description('move the spec to a phase, a planning state or a handoff state; refused (exit 4) by a rule')
    .argument('<slug>', 'the spec, as in specs/<slug>/')
    .requiredOption(
      '--to <target>',
      'a phase (draft, verify, …), a planning state (ADVERSARIAL_REVIEW, …) or ELIGIBLE/WITHHELD',
    )
    .requiredOption('--by <who>', 'who moves it (goes into the history)')
    .requiredOption('--reason <why>', 'why (goes into the history)')
    .action(async (slug: string, flags: { to: string; by: string; reason: string }, cmd: Command) => {
      const options = globals(cmd);
      const target = parseTarget(flags.to);
      const who = { by: flags.by, reason: flags.reason, at: new Date(deps.clock.now()).toISOString() };
      const repo = workingDir(deps, options);
      // Checked before the lock, which would create specs/<slug>/ for a spec that does not exist.
      if ((await readRunState(repo, slug)) === undefined) throw notStarted(slug);
      const result = await changeRunState<AdvanceResult>(repo, slug, (current) => {
        if (current === undefined) throw notStarted(slug);
        const outcome = advance(current, target, who);
        return outcome.ok ? { write: outcome.state, result: outcome } : { result: outcome };
      });
      if (!result.ok) {
        const [first, ...more] = result.violations;
        if (options.json === true)
          printJson(deps, { ok: false, slug, to: target, violations: result.violations });
        throw new SpecRefusedError(
          `Refused: ${slug} may not move to ${target}: ${first?.rule ?? 'rule'}: ${first?.message ?? ''}` +
            more.map((v) => `\n  also ${v.rule}: ${v.message}`).join(''),
          result.violations,
          `Record what the rule needs (forge-pack spec record ${slug} …), then advance again. Nothing changed.`,
        );
      }
      const { from, to } = historyMove(result.state);
      if (options.json === true) printJson(deps, { ok: true, from, ...specStatus(result.state) });
      else
        say(
          deps,
          `${slug}: ${from.phase} (${from.planning}) → ${to.phase} (${to.planning}), handoff ${to.handoff}.`,
        );
    });

  command.addHelpText(
    'after',
    `
Phases, in order: intake, evidence_fan_out, reduce_merge, gap_analysis, user_input, draft, verify,
readiness_gate, adversarial_review, plan_handoff, beads_generation, beads_review.

Examples:
  forge-pack spec record rate-limiter --prompt sparse --by intake
  forge-pack spec record rate-limiter --evidence "store locks with O_EXCL" --source src/lock.ts
  forge-pack spec record rate-limiter --claim "writes are serialised" --from E1
  forge-pack spec record rate-limiter --score requirements=85 --score scope=90
  forge-pack spec advance rate-limiter --to evidence_fan_out --by intake --reason "request classified"
  forge-pack spec status rate-limiter --json

Exit codes: 0 done, 2 bad flags, 4 refused by a rule or a run state that does not validate, 8 locked.`,
  );
}

/** The draft file as recorded: a repository-relative path inside the repository, and its content's hash. */
async function draftOf(repo: string, path: string): Promise<{ path: string; sha256: string }> {
  const relativePath = relative(repo, resolve(repo, path)).split(sep).join('/');
  if (relativePath === '' || !(await staysInside(repo, relativePath)))
    throw new UsageError(`--draft ${path}: expected a file inside the repository.`);
  const text = await readFileIfExists(join(repo, relativePath)).catch(() => undefined);
  if (text === undefined) throw new UsageError(`--draft ${path}: no such file (write the draft first).`);
  return { path: relativePath, sha256: createHash('sha256').update(text).digest('hex') };
}

function parseTarget(value: string): Target {
  if (isTarget(value)) return value;
  throw new UsageError(`Unknown target ${JSON.stringify(value)}: expected one of ${TARGETS.join(', ')}.`);
}

function notStarted(slug: string): AppError {
  return new AppError(`${runStateFile(slug)} does not exist: the spec has no run state yet.`, {
    hint: `Start it at intake: forge-pack spec record ${slug} --prompt sparse|rich --by <who>`,
  });
}

function historyMove(state: Parameters<typeof specStatus>[0]) {
  const last = state.history.at(-1);
  if (last?.kind !== 'transition') throw new Error('advance left no transition in the history');
  return { from: last.from, to: last.to };
}
