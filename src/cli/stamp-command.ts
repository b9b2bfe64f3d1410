// `forge-pack stamp`: a strategist's last act, stamping the loop's next beads (or asking the user).
import { join } from 'node:path';
import type { Command } from 'commander';
import type { StampResult } from '../autoresearch/stamp.js';
import {
  globals,
  openStoreFor,
  parseNumberArg,
  readUserFile,
  userPath,
  workingDir,
  type GlobalOptions,
} from './common.js';
import type { CliDeps } from './deps.js';
import { printJson, say } from './output.js';

interface StampFlags {
  epic: string;
  iter?: number;
  directiveFile?: string;
  retrospective?: boolean;
  needsHuman?: string;
  workspace?: string;
}

export function defineStampCommand(command: Command, deps: CliDeps): void {
  command
    .requiredOption('--epic <id>', "the loop's epic")
    .option('--iter <n>', 'stamp iteration <n> (doer, judge, arbiter, strategist)', parseNumberArg)
    .option('--directive-file <file>', "the strategist's focus directive for that iteration's doer")
    .option('--retrospective', 'stamp the retrospective (after a terminal signal)')
    .option('--needs-human <file>', 'ask the user: copy the question to needs-human.md; stamps nothing')
    .option('--workspace <dir>', "the loop's workspace (default: the one registered for the epic)")
    .action(async (flags: StampFlags, cmd: Command) => {
      const options = globals(cmd);
      const repo = workingDir(deps, options);
      const { UsageError } = await import('../infra/errors.js');
      const modes = [flags.iter !== undefined, flags.retrospective === true, flags.needsHuman !== undefined];
      if (modes.filter(Boolean).length !== 1) {
        throw new UsageError('Give exactly one of --iter <n>, --retrospective or --needs-human <file>.', {
          hint: 'See: forge-pack stamp --help',
        });
      }
      if (flags.directiveFile !== undefined && flags.iter === undefined) {
        throw new UsageError('--directive-file goes with --iter <n>.');
      }
      if (flags.needsHuman !== undefined) {
        await askFromFile(deps, options, repo, flags);
        return;
      }
      const [{ openLoop }, { stampIteration, stampRetrospective }] = await Promise.all([
        import('../autoresearch/loop-context.js'),
        import('../autoresearch/stamp.js'),
      ]);
      const { store } = (await openStoreFor(deps, options, flags.epic)).opened;
      const ctx = await openLoop(repo, flags.epic, {
        storeKind: store.kind,
        workspace: flags.workspace,
        files: deps.loopFiles,
      });
      const directive =
        flags.iter === undefined || flags.directiveFile === undefined
          ? undefined
          : {
              text: await readUserFile(deps, options, flags.directiveFile, 'the directive file'),
              source: userPath(deps, options, flags.directiveFile),
            };
      // One stamp of an epic at a time: the check for what exists and the creates are one step. Six
      // stamps of one iteration at once (an agent's parallel tool calls) made four doers and five judges.
      const held = await holdStampLock(repo, flags.epic, deps.env);
      let result: StampResult;
      try {
        result =
          flags.iter === undefined
            ? await stampRetrospective(ctx, store)
            : await stampIteration(ctx, store, { iter: flags.iter, directive });
      } finally {
        await held.release();
      }
      reportStamp(
        deps,
        options,
        result,
        flags.iter === undefined ? 'the retrospective' : `iteration ${flags.iter}`,
      );
    });
  command.addHelpText(
    'after',
    `
Examples (a strategist's last act):
  forge-pack stamp --epic bd-a1b --iter 4 --directive-file .autoresearch/directives/directive-4.md
  forge-pack stamp --epic bd-a1b --retrospective
  forge-pack stamp --epic bd-a1b --needs-human /tmp/question.md

Stamping is idempotent: an iteration (or retrospective) that already exists is reported and nothing is
created (--json: {"created": [], "existing": [...]}). --iter must be the next iteration; nothing but the
retrospective is stamped once the loop has a terminal signal, nor while a question waits for the user.
Mentions of the metric or rubric in a directive are removed before the doer sees it.`,
  );
}

/** The stamp lock of `epic`, in the repository's git directory (there for every loop, never committed). */
async function holdStampLock(
  repo: string,
  epic: string,
  env: NodeJS.ProcessEnv,
): Promise<{ release(): Promise<void> }> {
  const [{ createGit }, { acquireStoreLock }, { AppError, BeadStoreError, ExitCode }] = await Promise.all([
    import('../infra/git.js'),
    import('../beads/embedded/lock.js'),
    import('../infra/errors.js'),
  ]);
  const path = join(
    await createGit({ cwd: repo, env }).gitDir(),
    `forge-stamp-${epic.replace(/[^A-Za-z0-9._-]/g, '_')}.lock`,
  );
  try {
    return await acquireStoreLock(path, { waitMs: 60_000 });
  } catch (error) {
    if (error instanceof BeadStoreError && error.code === 'DATABASE_LOCKED') {
      throw new AppError(`Another forge-pack stamp of ${epic} has held ${path} for a minute.`, {
        exitCode: ExitCode.locked,
        hint: `Run it again once that one is done; if no forge-pack stamp is running, delete ${path}.`,
      });
    }
    throw error;
  }
}

async function askFromFile(
  deps: CliDeps,
  options: GlobalOptions,
  repo: string,
  flags: StampFlags,
): Promise<void> {
  const [{ askHuman }, { requireLoopWorkspace, resolveWorkspaceDir, workspacePaths }] = await Promise.all([
    import('../autoresearch/resume.js'),
    import('../autoresearch/workspace.js'),
  ]);
  const paths =
    flags.workspace === undefined
      ? await requireLoopWorkspace(repo, flags.epic)
      : workspacePaths(resolveWorkspaceDir(repo, flags.workspace).root);
  const question = await readUserFile(deps, options, flags.needsHuman ?? '', 'the question file');
  await askHuman(deps.loopFiles, paths, flags.epic, question, new Date(deps.clock.now()).toISOString());
  if (options.json)
    printJson(deps, { epic: flags.epic, needs_human: paths.needsHuman, created: [], existing: [] });
  say(
    deps,
    `Asked the user in ${paths.needsHuman}; nothing was stamped. The loop waits for: ralph-loop resume ${flags.epic}`,
  );
}

function reportStamp(deps: CliDeps, options: GlobalOptions, result: StampResult, what: string): void {
  if (options.json) {
    printJson(deps, {
      epic: result.epic,
      created: result.created.map((b) => b.id),
      existing: result.existing.map((b) => b.id),
      beads: [
        ...result.created.map((b) => ({ ...b, status: 'created' })),
        ...result.existing.map((b) => ({ ...b, status: 'existing' })),
      ],
      redactions: result.redactions,
    });
  } else {
    for (const bead of result.created) deps.stdout.write(`${bead.id}\n`);
  }
  const names = (beads: StampResult['created']) =>
    beads.map((b) => `${b.title.split(':')[0]} ${b.id}`).join(', ');
  if (result.created.length === 0) {
    say(
      deps,
      `${capitalize(what)} of ${result.epic} is already stamped (${names(result.existing)}): nothing created.`,
    );
  } else {
    say(deps, `Stamped ${what} of ${result.epic}: ${names(result.created)}.`);
    if (result.existing.length > 0) say(deps, `Already there: ${names(result.existing)}.`);
  }
  if (result.redactions > 0) {
    say(
      deps,
      `warning: removed ${result.redactions} mention(s) of the metric or rubric from the doer's description (the doer is blind to them).`,
    );
  }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
