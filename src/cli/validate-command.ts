// `forge-pack validate [epic…]`: checks bead graphs before a night's run and lists each problem with a fix.
import type { Command } from 'commander';
import type { EpicGraph } from '../beads/types.js';
import { AppError, ExitCode } from '../infra/errors.js';
import { globals, openStoreFor } from './common.js';
import type { CliDeps } from './deps.js';
import { printJson } from './output.js';

export function defineValidateCommand(command: Command, deps: CliDeps): void {
  command
    .argument('[epic-ids...]', 'the epics to check (default: every open epic in the store)')
    .addHelpText(
      'after',
      `
Examples:
  forge-pack validate bd-a1b                 # one epic, before ralph-loop bd-a1b
  forge-pack validate                        # every open epic in the store
  forge-pack validate bd-a1b --json | jq '.problems[] | select(.severity == "error")'

Each problem has a severity (error or warning), a subject (the bead id or file it concerns), a
message and a fix. Errors: dependency cycles, dependencies on ids the store does not hold, beads
that wait for something that can never close (deferred, an epic inside this one, a bead outside
every epic), labels br refuses or that route nowhere (an unknown role:, agent: or gates: name), a
loop whose workspace, config, ledger or templates disagree with its beads. Warnings: things a run
survives but you may not mean (a blocker in another epic, one closed as won't fix, a loop role in
a plain epic). ralph-loop runs the same checks before every run and refuses errors (skip with
--no-validate). --json prints {ok, epics, problems}.
Exit codes: 0 no errors (warnings allowed), 2 usage (no such epic), 3 environment, 4 errors found.`,
    )
    .action(async (ids: string[], _flags: unknown, command: Command) => {
      const options = globals(command);
      const { config, opened, cwd } = await openStoreFor(
        deps,
        options,
        ids.length === 1 ? ids[0] : undefined,
      );
      let epics = ids;
      const graphs: EpicGraph[] = [];
      if (epics.length === 0) {
        epics = (await opened.store.list({}))
          .filter((bead) => bead.issue_type === 'epic')
          .map((bead) => bead.id)
          .sort();
      } else {
        // Each epic's graph, read once, serves both the check that it exists and its validation; one
        // the store does not hold gets the run's usage error, which names the closest id there is.
        const { readRunGraph, showRunTarget } = await import('./run-target.js');
        for (const id of epics) {
          const graph = await readRunGraph(opened.store, id);
          if (graph !== undefined) {
            graphs.push(graph);
            continue;
          }
          const inGitRepo = (await deps.createRunnerGit(cwd)) !== undefined;
          await showRunTarget(opened.store, id, 'epic', { dir: cwd, inGitRepo });
        }
      }
      const { renderReport, validateEpics } = await import('./validate-epic.js');
      const report = await validateEpics(epics, {
        repo: cwd,
        store: opened.store,
        config,
        env: deps.env,
        files: deps.loopFiles,
        graphs,
      });
      if (options.json) printJson(deps, report);
      else if (epics.length === 0) deps.stdout.write('No open epics to check.\n');
      else deps.stdout.write(renderReport(report));
      if (report.ok) return;
      const errors = report.problems.filter((p) => p.severity === 'error').length;
      throw new AppError(
        `${errors} error${errors === 1 ? '' : 's'} in ${epics.length === 1 ? `epic ${epics[0] ?? ''}` : `${epics.length} epics`}: a run would refuse ${epics.length === 1 ? 'it' : 'them'}.`,
        {
          exitCode: ExitCode.config,
          hint: options.json
            ? 'See the problems with "severity": "error" and their "fix".'
            : 'Each error above says how to fix it.',
        },
      );
    });
}
