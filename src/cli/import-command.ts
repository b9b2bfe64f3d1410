// `forge-pack beads import <file|dir>`: another loop runner's work items become an epic of beads.
import { Command, Option } from 'commander';
import { applyImport, type ImportReport } from '../beads/import/apply.js';
import { draftImport } from '../beads/import/draft.js';
import { formatProblem, IMPORT_FORMATS, type ImportFormat } from '../beads/import/types.js';
import { ConfigError } from '../infra/errors.js';
import { globals, openStoreFor, userPath } from './common.js';
import type { CliDeps } from './deps.js';
import { IMPORTS_PATH, recordSyncBack, type SyncBackEntry } from './import-registry.js';
import { loadImportSource } from './import-source.js';
import { printJson, say } from './output.js';

interface ImportFlags {
  format?: ImportFormat;
  epic?: string;
  dryRun?: boolean;
  syncBack?: boolean;
}

const MAX_PROBLEMS_SHOWN = 20;

export function createImportCommand(deps: CliDeps): Command {
  const command = new Command('import')
    .description(
      'import work items from other loop runners (prd.json, specs/*.md, IMPLEMENTATION_PLAN.md, requirements.json) as an epic of beads',
    )
    .argument('<path>', 'a file, a directory holding one, or a specs/ directory')
    .addOption(
      new Option('--format <format>', 'the source format (default: from the name and content)').choices([
        ...IMPORT_FORMATS,
      ]),
    )
    .option('--epic <id>', 'import under this existing epic instead of a new one')
    .option('--dry-run', 'show what would be created; write nothing')
    .option(
      '--sync-back',
      `when ralph-loop closes an imported bead, mark its item done in the source file (recorded in ${IMPORTS_PATH})`,
    )
    .action(async (path: string, flags: ImportFlags, self: Command) => {
      const options = globals(self);
      const { opened, cwd: repo } = await openStoreFor(deps, options);
      const { source, result } = await loadImportSource(userPath(deps, options, path), repo, flags.format);
      if (!result.ok) {
        const shown = result.problems.slice(0, MAX_PROBLEMS_SHOWN).map((p) => `  ${formatProblem(p)}`);
        const more = result.problems.length - shown.length;
        throw new ConfigError(
          `Nothing was imported: ${source} has ${result.problems.length} problem(s):\n${shown.join('\n')}${more > 0 ? `\n  … and ${more} more` : ''}`,
          { hint: 'Fix the source and run the import again; nothing was created.' },
        );
      }
      const draft = draftImport(result.source, source);
      const report = await applyImport(opened.store, draft, {
        dryRun: flags.dryRun === true,
        epicId: flags.epic,
      });
      if (flags.syncBack === true && !report.dry_run) {
        const entries: Record<string, SyncBackEntry> = {};
        for (const [index, bead] of report.beads.entries()) {
          const item = draft.beads[index]!.item;
          if (bead.id !== undefined)
            entries[bead.id] = { format: draft.format, file: item.file, item: item.id };
        }
        await recordSyncBack(repo, entries);
      }
      if (options.json) printJson(deps, { ...report, sync_back: flags.syncBack === true });
      else printReport(deps, report, flags.syncBack === true);
    });
  command.addHelpText(
    'after',
    `
Formats (detected from the file name, then the content; --format overrides):
  prd           Ralph's prd.json: userStories by priority (1 first); passes: true imports closed
  specs         specs/*.md, one spec per file with YAML frontmatter (title, passes, priority, risk,
                created, depends_on): depends_on become bead dependencies
  plan          IMPLEMENTATION_PLAN.md checklist ('- [ ]' / '- [x]'): each item waits for the one before
  requirements  ralph1's requirements.json [{id, requirement, status}]: done/complete/closed/… import closed

Importing the same source again creates nothing new ("0 new, N already imported"); items added to it
since are added. A malformed source is refused whole, naming file, line and field.

Examples:
  forge-pack beads import prd.json --dry-run            # what would be created
  forge-pack beads import specs/ --json                 # the epic and beads as JSON
  forge-pack beads import IMPLEMENTATION_PLAN.md --sync-back && ralph-loop <epic>
                                                        # closed beads check their items off
  forge-pack beads import requirements.json --epic bd-a1b   # under an existing epic`,
  );
  return command;
}

function printReport(deps: CliDeps, report: ImportReport, syncBack: boolean): void {
  const verb = report.dry_run ? 'would create' : 'created';
  const epic = report.epic.id ?? '(new epic)';
  if (!report.epic.existing) say(deps, `${verb} epic ${epic}: ${report.epic.title}`);
  for (const bead of report.beads) {
    const what = bead.existing ? 'already imported' : verb;
    const deps_ = bead.depends_on.length === 0 ? '' : `  after ${bead.depends_on.length} item(s)`;
    say(
      deps,
      `${what.padEnd(16)} ${(bead.id ?? '-').padEnd(12)} P${bead.priority} ${bead.status.padEnd(6)} ${bead.title}${deps_}`,
    );
  }
  const counts = `${report.created} new, ${report.already_imported} already imported`;
  if (report.dry_run) say(deps, `Dry run: ${counts}; nothing was written.`);
  else {
    say(
      deps,
      `Imported ${report.source} into ${epic}: ${counts}.${syncBack ? ` Closing a bead marks its item done (${IMPORTS_PATH}).` : ''}`,
    );
    deps.stdout.write(`${epic}\n`);
  }
}
