// `forge-pack validate` for an autoresearch epic: is its workspace there and its config valid, do its
// stamped beads agree with the ledger, and do its templates render? Reading is separate from judging:
// `readLoopState` gathers the files, `checkLoop` is pure.
import { candidateOf } from './candidates.js';
import { join, relative } from 'node:path';
import type { Bead } from '../beads/types.js';
import { AppError } from '../infra/errors.js';
import type { LoopFiles } from '../infra/loop-files.js';
import type { ValidationProblem } from '../loop/validate/index.js';
import { loadLoopConfig } from './config.js';
import { iterationStatePath } from './iteration-state.js';
import { loadLedgerSummary } from './ledger-summary.js';
import { iterOf } from '../infra/labels.js';
import { LOOP_LABEL, loopRoleOf } from './loop-beads.js';
import { SAMPLE_VIEWS } from './template-samples.js';
import { renderTemplate, TEMPLATE_NAMES } from './templates.js';
import { workspacePaths } from './workspace.js';

/** What the checks need to know of a loop's files. Paths are relative to the repository root. */
export interface LoopState {
  workspace: string;
  exists: boolean;
  /** The config's problem, when it does not load (invalid, or missing). */
  configError?: string;
  /** The epic the config names. */
  configEpic?: string;
  /** The ledger's last iteration (-1: empty); undefined when it could not be read. */
  lastIter?: number;
  ledgerError?: string;
  /** Iteration records whose `iter` is not the one their file name says. */
  iterationMismatches: { path: string; recorded: unknown }[];
  templateErrors: { path: string; message: string }[];
  /** Files in `<workspace>/templates` that are not a template name (so they are never used). */
  strayTemplates: string[];
}

const OPEN = (bead: Bead) => bead.status !== 'closed' && bead.status !== 'tombstone';

/** Reads what the loop checks need: config, ledger summary (cached), the open iterations' records, templates. */
export async function readLoopState(
  files: LoopFiles,
  repo: string,
  root: string,
  beads: readonly Bead[],
): Promise<LoopState> {
  const paths = workspacePaths(root);
  const rel = (path: string) => relative(repo, path).split('\\').join('/');
  const state: LoopState = {
    workspace: rel(root),
    exists: false,
    iterationMismatches: [],
    templateErrors: [],
    strayTemplates: [],
  };
  const entries = await files.list(root);
  if (entries === undefined) return state;
  state.exists = true;
  const strip = (message: string) => message.split(`${repo}/`).join('');
  const config = await loadLoopConfig(files, paths.config).catch((error: unknown) => {
    if (!(error instanceof AppError)) throw error;
    state.configError = strip(error.message);
    return undefined;
  });
  if (config?.epic_id !== undefined) state.configEpic = config.epic_id;
  if (config !== undefined) {
    try {
      const params = { direction: config.metric.direction, target: config.target };
      state.lastIter = (
        await loadLedgerSummary(files, paths.ledger, params, { persist: false })
      ).summary.last_iter;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      state.ledgerError = strip(error.message);
    }
  }
  const iters = new Set(beads.filter((b) => OPEN(b) && b.labels.includes(LOOP_LABEL)).map(iterOf));
  for (const iter of iters) {
    if (iter === undefined) continue;
    const path = iterationStatePath(root, iter);
    const text = await files.readIfExists(path);
    if (text === undefined) continue;
    let recorded: unknown;
    try {
      recorded = (JSON.parse(text) as { iter?: unknown }).iter;
    } catch {
      recorded = 'unreadable JSON';
    }
    if (recorded !== iter) state.iterationMismatches.push({ path: rel(path), recorded });
  }
  for (const name of TEMPLATE_NAMES) {
    try {
      await renderTemplate(name, SAMPLE_VIEWS[name] as never, {
        overrides: { dir: paths.templatesDir, files },
      });
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      state.templateErrors.push({
        path: rel(join(paths.templatesDir, `${name}.hbs`)),
        message: strip(error.message),
      });
    }
  }
  const names = new Set<string>(TEMPLATE_NAMES.map((name) => `${name}.hbs`));
  state.strayTemplates = ((await files.list(paths.templatesDir)) ?? [])
    .filter((file) => !names.has(file))
    .map((file) => rel(join(paths.templatesDir, file)))
    .sort();
  return state;
}

/** The loop's problems: its files, and its beads against the ledger. Pure. */
export function checkLoop(epicId: string, beads: readonly Bead[], state: LoopState): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const error = (subject: string, message: string, fix: string, check: ValidationProblem['check'] = 'loop') =>
    problems.push({ severity: 'error', check, subject, message, fix });
  if (!state.exists) {
    error(
      state.workspace,
      `the workspace of ${epicId}'s loop, ${state.workspace}, is missing: its beads would run without their files`,
      `Restore ${state.workspace}, or remove ${epicId} from .forge/loops.json if the loop is gone.`,
    );
    return problems;
  }
  const config = `${state.workspace}/config.json`;
  if (state.configError !== undefined)
    error(
      config,
      state.configError,
      `Fix ${config} (the message names the field); every run of ${epicId} refuses it.`,
    );
  else if (state.configEpic !== undefined && state.configEpic !== epicId)
    error(
      config,
      `${config} belongs to epic ${state.configEpic}, not ${epicId}`,
      `Check .forge/loops.json: it maps ${epicId} to ${state.workspace}.`,
    );
  if (state.ledgerError !== undefined)
    error(
      `${state.workspace}/research-log.jsonl`,
      state.ledgerError,
      `ralph-loop ${epicId} --no-validate puts the ledger back from the runner's own copy (once a run has made one); else fix the line it names by hand (plain JSONL, one object a line).`,
    );

  const loop = beads.filter((bead) => bead.labels.includes(LOOP_LABEL));
  const byKey = new Map<string, Bead[]>();
  for (const bead of loop) {
    // A population's candidates share a role and iteration: each candidate index is stamped once.
    const candidate = candidateOf(bead);
    const key = `${loopRoleOf(bead) ?? '?'}-${iterOf(bead) ?? '?'}${candidate === undefined ? '' : ` c${candidate}`}`;
    byKey.set(key, [...(byKey.get(key) ?? []), bead]);
  }
  for (const [key, same] of byKey) {
    if (same.length < 2 || key.includes('?') || key.startsWith('resume-strategist')) continue;
    const ids = same.map((b) => b.id).sort();
    error(
      ids[0]!,
      `${ids.length} beads are ${key} (${ids.join(', ')}): a loop stamps each role once per iteration`,
      `Close the extra ones: forge-pack beads close ${ids.slice(1).join(' ')}`,
    );
  }
  const openDoers = loop.filter((b) => OPEN(b) && loopRoleOf(b) === 'doer');
  const openIters = new Set(openDoers.map((b) => iterOf(b)));
  if (openDoers.length > 1 && (openIters.size > 1 || openDoers.some((b) => candidateOf(b) === undefined))) {
    const ids = openDoers.map((b) => `${b.id} (iter ${iterOf(b) ?? '?'})`);
    error(
      openDoers[0]!.id,
      `${openDoers.length} doers are open: ${ids.join(', ')}; a loop runs one iteration at a time`,
      'Close the doers that should not run, keeping the one of the next iteration.',
    );
  }
  const last = state.lastIter;
  if (last !== undefined) {
    for (const bead of loop) {
      const iter = iterOf(bead);
      const role = loopRoleOf(bead);
      if (iter === undefined) continue;
      if (role === 'doer' && OPEN(bead) && iter <= last && iter > 0)
        error(
          bead.id,
          `doer-${iter} (${bead.id}) is open, but the ledger already decided iteration ${iter}`,
          `Close it (forge-pack beads close ${bead.id}): iteration ${iter} is done; the next one is ${last + 1}.`,
        );
      if (role === 'doer' && iter >= 2 && iter - 1 > last)
        error(
          bead.id,
          `doer-${iter} (${bead.id}) is stamped, but the ledger ends at iteration ${last}: iteration ${iter - 1} was never decided`,
          `ralph-loop ${epicId} --no-validate puts the ledger back from the runner's own copy (in git's folder, once a run has made one); else restore ${state.workspace}/research-log.jsonl from a copy of yours, or close the beads of iteration ${iter}.`,
        );
      if (role === 'arbiter' && !OPEN(bead) && iter > last)
        error(
          bead.id,
          `arbiter-${iter} (${bead.id}) is closed, but the ledger has no iteration ${iter}`,
          `ralph-loop ${epicId} --no-validate puts the ledger back from the runner's own copy (once a run has made one); else reopen ${bead.id} so the arbiter decides iteration ${iter} again.`,
        );
    }
  }
  for (const { path, recorded } of state.iterationMismatches)
    error(
      path,
      `${path} records iteration ${JSON.stringify(recorded)}`,
      `Delete ${path} to start that iteration's record afresh, or restore it from the vault copy (the next run does).`,
    );
  for (const { path, message } of state.templateErrors)
    error(path, message, `Fix the template, or delete ${path} to use the shipped one.`, 'template');
  for (const path of state.strayTemplates)
    problems.push({
      severity: 'warning',
      check: 'template',
      subject: path,
      message: `${path} is not a template name, so it is never used (names: ${TEMPLATE_NAMES.map((n) => `${n}.hbs`).join(', ')})`,
      fix: 'Rename it to the template it should replace, or delete it.',
    });
  return problems;
}
