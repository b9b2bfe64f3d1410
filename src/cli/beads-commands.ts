// `forge-pack beads …`: br's vocabulary and --json shapes over whichever bead store is active.
import { readFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { Bead, BeadStore } from '../beads/types.js';
import { AppError, ExitCode } from '../infra/errors.js';
import type { CliDeps } from './deps.js';
import { createImportCommand } from './import-command.js';
import { globals, openStoreFor, parseInteger, parseList, userPath, type GlobalOptions } from './common.js';
import { printJson, say } from './output.js';

type Action<T extends unknown[]> = (
  ctx: { store: BeadStore; deps: CliDeps; options: GlobalOptions; cwd: string },
  ...args: T
) => Promise<void>;

function withStore<T extends unknown[]>(deps: CliDeps, action: Action<T>) {
  return async (...args: unknown[]): Promise<void> => {
    const command = args[args.length - 1] as Command;
    const options = globals(command);
    const { opened, cwd } = await openStoreFor(deps, options);
    await action({ store: opened.store, deps, options, cwd }, ...(args.slice(0, -1) as T));
  };
}

export function defineBeadsCommand(beads: Command, deps: CliDeps): void {
  beads
    .command('init')
    .description('create the bead store in this repo (br init, or the embedded store)')
    .option('--prefix <prefix>', 'id prefix for new beads (default: bd)')
    .action(
      withStore(deps, async ({ store, options, deps: d }, local: { prefix?: string | undefined }) => {
        await store.init({ prefix: local.prefix });
        if (options.json) printJson(d, { status: 'ok', store: store.kind });
        else say(d, `Initialised the ${store.kind} bead store.`);
      }),
    );

  beads
    .command('create')
    .description('create a bead; prints its id (or the issue with --json)')
    .argument('<title>', 'title of the bead')
    .option('-t, --type <type>', 'task, epic, bug, feature, chore', 'task')
    .option('-p, --priority <n>', 'priority from 0 (highest) to 4', parseInteger(0, 4), 2)
    .option('-d, --description <text>', 'description: the whole context an agent gets')
    .option('--description-file <file>', 'read the description from a file')
    .option('-l, --labels <labels>', 'comma-separated labels (repeatable)', parseList)
    .option('--parent <id>', 'parent epic; the new bead gets the id <parent>.<n>')
    .option('--deps <ids>', 'comma-separated ids this bead is blocked by (repeatable)', parseList)
    .action(
      withStore(deps, async ({ store, options, deps: d }, title: string, local: CreateFlags) => {
        if (local.description !== undefined && local.descriptionFile !== undefined) {
          throw new AppError('Give either --description or --description-file, not both.', {
            exitCode: ExitCode.usage,
          });
        }
        const description =
          local.descriptionFile === undefined
            ? local.description
            : await readFile(userPath(d, options, local.descriptionFile), 'utf8');
        const bead = await store.create({
          title,
          type: local.type,
          priority: local.priority,
          description,
          labels: local.labels,
          parent: local.parent,
          dependsOn: local.deps,
        });
        if (options.json) printJson(d, bead);
        else {
          d.stdout.write(`${bead.id}\n`);
          say(d, `Created ${bead.id}: ${bead.title}`);
        }
      }),
    );

  beads
    .command('show')
    .description('show beads with dependencies, dependents and comments (--json: an array)')
    .argument('<ids...>', 'bead ids')
    .action(
      withStore(deps, async ({ store, options, deps: d }, ids: string[]) => {
        const details = [];
        for (const id of ids) details.push(await store.show(id));
        if (options.json) return printJson(d, details);
        for (const detail of details) {
          d.stdout.write(`${formatRow(detail)}\n`);
          if (detail.description) d.stdout.write(`${indent(detail.description)}\n`);
          for (const dep of detail.dependencies)
            d.stdout.write(`  depends on ${dep.id} (${dep.dependency_type})\n`);
          for (const dep of detail.dependents)
            d.stdout.write(`  needed by ${dep.id} (${dep.dependency_type})\n`);
          for (const c of detail.comments)
            d.stdout.write(`  comment ${c.created_at} ${c.author}: ${c.text}\n`);
        }
      }),
    );

  beads
    .command('list')
    .description('list beads (open and in progress by default)')
    .option('-s, --status <status>', 'only beads with this status')
    .option('-l, --label <label>', 'only beads with this label')
    .option('-a, --all', 'include closed beads')
    .action(
      withStore(
        deps,
        async ({ store, options, deps: d }, local: { status?: string; label?: string; all?: boolean }) => {
          const rows = await store.list({
            status: local.status,
            label: local.label,
            ...(local.all === true ? { all: true } : {}),
          });
          printRows(d, options, rows);
        },
      ),
    );

  beads
    .command('ready')
    .description('beads of an epic that can run now, in the order the runner takes them')
    .requiredOption('--parent <epic>', 'the epic whose children to consider')
    .option('-r, --recursive', 'all descendants, not only direct children')
    .action(
      withStore(deps, async ({ store, options, deps: d }, local: { parent: string; recursive?: boolean }) => {
        const rows = await store.ready(local.parent, { recursive: local.recursive === true });
        printRows(d, options, rows);
      }),
    );

  beads
    .command('children')
    .description('children of an epic with their statuses')
    .argument('<epic>', 'epic id')
    .option('-r, --recursive', 'all descendants')
    .action(
      withStore(deps, async ({ store, options, deps: d }, epic: string, local: { recursive?: boolean }) => {
        printRows(d, options, await store.children(epic, { recursive: local.recursive === true }));
      }),
    );

  beads
    .command('close')
    .description('close beads with a reason (--json: the closed issues)')
    .argument('<ids...>', 'bead ids')
    .option('-r, --reason <reason>', 'why it is closed', 'closed with forge-pack')
    .action(
      withStore(deps, async ({ store, options, deps: d }, ids: string[], local: { reason: string }) => {
        const closed: Bead[] = [];
        const skipped: { id: string; reason: string }[] = [];
        for (const id of ids) {
          const result = await store.close(id, local.reason);
          if (result.ok) closed.push(await store.show(id));
          else skipped.push({ id, reason: result.reason });
        }
        if (options.json) printJson(d, skipped.length === 0 ? closed : { closed, skipped });
        else {
          for (const bead of closed) say(d, `Closed ${bead.id}: ${bead.title}`);
          for (const skip of skipped) say(d, `Skipped ${skip.id}: ${skip.reason}`);
        }
        if (closed.length === 0) {
          throw new AppError('Nothing was closed.', { exitCode: ExitCode.failure, hint: skipped[0]?.reason });
        }
      }),
    );

  beads
    .command('reopen')
    .description('set beads back to open')
    .argument('<ids...>', 'bead ids')
    .option('-r, --reason <reason>', 'why it is reopened (kept as a comment)')
    .action(
      withStore(deps, async ({ store, options, deps: d }, ids: string[], local: { reason?: string }) => {
        for (const id of ids) await store.reopen(id, local.reason);
        if (options.json) printJson(d, { reopened: ids, skipped: [] });
        else for (const id of ids) say(d, `Reopened ${id}`);
      }),
    );

  const dep = beads.command('dep').description('dependencies between beads');
  dep
    .command('add')
    .description('make <blocked> depend on <blocker>')
    .argument('<blocked>', 'the bead that waits')
    .argument('<blocker>', 'the bead it waits for')
    .option('-t, --type <type>', 'blocks, conditional-blocks, waits-for, related, parent-child', 'blocks')
    .action(
      withStore(
        deps,
        async ({ store, options, deps: d }, blocked: string, blocker: string, local: { type: string }) => {
          const result = await store.addDependency(blocked, blocker, local.type);
          const json = {
            status: result.status,
            issue_id: blocked,
            depends_on_id: blocker,
            type: local.type,
            action: result.status === 'ok' ? 'added' : 'unchanged',
          };
          if (options.json) printJson(d, json);
          else
            say(
              d,
              `${blocked} depends on ${blocker} (${local.type})${result.status === 'exists' ? ': already so' : ''}`,
            );
        },
      ),
    );

  const label = beads.command('label').description('labels on beads');
  label
    .command('add')
    .description('add labels to a bead')
    .argument('<id>', 'bead id')
    .argument('<labels...>', 'labels (letters, digits, _ : -)')
    .action(
      withStore(deps, async ({ store, options, deps: d }, id: string, labels: string[]) => {
        for (const l of labels) await store.addLabel(id, l);
        if (options.json) printJson(d, [await store.show(id)]);
        else say(d, `Labelled ${id}: ${labels.join(', ')}`);
      }),
    );
  label
    .command('remove')
    .description('remove labels from a bead')
    .argument('<id>', 'bead id')
    .argument('<labels...>', 'labels')
    .action(
      withStore(deps, async ({ store, options, deps: d }, id: string, labels: string[]) => {
        for (const l of labels) await store.removeLabel(id, l);
        if (options.json) printJson(d, [await store.show(id)]);
        else say(d, `Removed from ${id}: ${labels.join(', ')}`);
      }),
    );

  beads
    .command('comment')
    .alias('comments')
    .description('add a comment to a bead')
    .argument('<id>', 'bead id')
    .argument('<text>', 'comment text (kept verbatim)')
    .action(
      withStore(deps, async ({ store, options, deps: d }, id: string, text: string) => {
        const comment = await store.comment(id, text);
        if (options.json) printJson(d, comment);
        else say(d, `Commented on ${id}`);
      }),
    );

  beads
    .command('sync')
    .description('flush everything to .beads/issues.jsonl (br sync --flush-only)')
    .action(
      withStore(deps, async ({ store, options, deps: d }) => {
        await store.flush();
        if (options.json) printJson(d, { status: 'ok', errors: [] });
        else say(d, 'Flushed.');
      }),
    );

  beads.addCommand(createImportCommand(deps));
}

interface CreateFlags {
  type: string;
  priority: number;
  description?: string;
  descriptionFile?: string;
  labels?: string[];
  parent?: string;
  deps?: string[];
}

function printRows(deps: CliDeps, options: GlobalOptions, rows: Bead[]): void {
  if (options.json) return printJson(deps, rows);
  if (rows.length === 0) say(deps, 'No beads.');
  for (const row of rows) deps.stdout.write(`${formatRow(row)}\n`);
}

function formatRow(bead: Bead): string {
  const labels = bead.labels.length > 0 ? `  [${bead.labels.join(' ')}]` : '';
  return `${bead.id}  P${bead.priority}  ${bead.status.padEnd(11)}  ${bead.issue_type.padEnd(7)}  ${bead.title}${labels}`;
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}
