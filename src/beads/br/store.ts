// The br-backed BeadStore: each operation as br commands (argv arrays, never a shell), parsed with zod.
//
// The schemas (and zod with them, ~30 ms to load here) are imported by the first call that reads an
// answer, beside that call, not with this module: a run's first br calls start before zod is loaded, and
// it loads while br answers them.
import { mkdir } from 'node:fs/promises';
import type { z } from 'zod';
import type { Clock } from '../../infra/clock.js';
import { systemClock } from '../../infra/clock.js';
import { BeadStoreError } from '../../infra/errors.js';
import { zodProblems } from '../../infra/zod-issues.js';
import type { Bead, BeadDetail, BeadStore, ClaimResult, CreateBeadInput, ListFilter } from '../types.js';
import { LABEL_PATTERN } from '../types.js';
import type { BrCall, BrOutcome, RetryPolicy } from './client.js';
import { createBrClient } from './client.js';
import { BrError, badOutputError } from './errors.js';
import type { HierarchyDeps } from './hierarchy.js';
import { childrenOfEpic, graphOfEpic, readyOfEpic } from './hierarchy.js';
import { beadOnly, toBead, toComment, toDetail } from './rows.js';
import type * as BrSchemaModule from './schemas.js';

/** The br schemas, loaded on first use. */
export type BrSchemas = typeof BrSchemaModule;
let schemasLoading: Promise<BrSchemas> | undefined;
function brSchemas(): Promise<BrSchemas> {
  return (schemasLoading ??= import('./schemas.js'));
}

export interface BrStoreOptions {
  /** Project root: br runs here with `BEADS_DIR=<cwd>/.beads`. */
  cwd: string;
  /** The environment br runs with (PATH included); never read from process.env here. */
  env: NodeJS.ProcessEnv;
  /** Recorded by br as the author of every change; default `ralph-loop`. */
  actor?: string;
  brPath?: string;
  clock?: Clock;
  /** Per br call (default 120 s; br itself waits up to 60 s for its database lock first). */
  timeoutMs?: number;
  retry?: Partial<RetryPolicy>;
  /** How long a bead listed by `ready` counts as known to be open for `claim` (default 10 s). */
  readyFreshnessMs?: number;
  /**
   * br's version when the caller asks it (`probeBr`), or the answer to come; otherwise the store asks
   * once. See BrClientOptions.version.
   */
  version?: string | Promise<string | undefined>;
}

const DEFAULT_RETRY: RetryPolicy = { attempts: 5, baseDelayMs: 250, maxDelayMs: 4000 };

/** br 0.2 warns on stderr when a claim finds the bead already in progress: a same-actor re-claim "succeeds". */
const REDUNDANT_CLAIM = /already '?in_progress'?/i;

export function createBrStore(options: BrStoreOptions): BeadStore {
  const clock = options.clock ?? systemClock;
  const actor = options.actor ?? 'ralph-loop';
  const client = createBrClient({
    cwd: options.cwd,
    env: options.env,
    actor,
    brPath: options.brPath ?? 'br',
    clock,
    timeoutMs: options.timeoutMs ?? 120_000,
    lockTimeoutMs: 60_000,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    ...(options.version === undefined ? {} : { version: options.version }),
  });
  const freshnessMs = options.readyFreshnessMs ?? 10_000;
  /**
   * Beads a recent read found open (the last `ready`, or a `show` of that one bead): `claim` on them
   * needs no `show` first.
   */
  const seenOpen = new Map<string, { bead: Bead; at: number }>();

  async function parse<S extends z.ZodType>(
    call: BrCall,
    pick: (schemas: BrSchemas) => S,
    document: unknown,
  ): Promise<z.output<S>> {
    const parsed = pick(await brSchemas()).safeParse(document);
    if (parsed.success) return parsed.data;
    // The first place the document departs from the schema; for a union, the branch that got furthest.
    const first = zodProblems('', parsed.error, { unions: 'furthest' })[0];
    const where =
      first === undefined ? 'unknown mismatch' : `${first.field || 'top level'}: ${first.message}`;
    throw badOutputError(
      client.describe(call),
      `JSON of an unexpected shape (${where})`,
      JSON.stringify(document) ?? '',
    );
  }

  async function query<S extends z.ZodType>(
    call: BrCall,
    pick: (schemas: BrSchemas) => S,
  ): Promise<z.output<S>> {
    const answer = client.expect(call);
    // Loads beside the call (a failed load is reported when the answer is parsed).
    brSchemas().catch(() => undefined);
    return parse(call, pick, (await answer)[0]);
  }

  async function showMany(ids: readonly string[]): Promise<BeadDetail[]> {
    if (ids.length === 0) return [];
    const rows = await query({ command: ['show'], args: [...ids] }, (s) => s.showSchema);
    return rows.map(toDetail);
  }

  const hierarchy: HierarchyDeps = { client, query, showMany };

  /** Runs a `br update` and returns the row for `id`. */
  async function update(id: string, args: readonly string[]): Promise<{ id: string; status: string }> {
    const call: BrCall = { command: ['update'], args: [id, ...args], write: true };
    seenOpen.delete(id);
    const rows = await query(call, (s) => s.updateSchema);
    const row = rows.find((r) => r.id === id) ?? (rows.length === 1 ? rows[0] : undefined);
    if (row === undefined) {
      throw badOutputError(client.describe(call), 'no row for the bead', JSON.stringify(rows));
    }
    return row;
  }

  function takeFreshOpen(id: string): Bead | undefined {
    const entry = seenOpen.get(id);
    seenOpen.delete(id);
    return entry !== undefined && clock.now() - entry.at <= freshnessMs ? entry.bead : undefined;
  }

  function claimLost(outcome: BrOutcome & { ok: false }): boolean {
    // Exit 4 (validation): blocked, or assigned to someone else; br's word for a lost race.
    return outcome.exitCode === 4 || /^(VALIDATION_FAILED|INVALID_STATUS)$/.test(outcome.report?.code ?? '');
  }

  const store: BeadStore = {
    kind: 'br',

    async init(initOptions) {
      await mkdir(client.beadsDir, { recursive: true });
      const args = initOptions?.prefix === undefined ? [] : [`--prefix=${initOptions.prefix}`];
      const outcome = await client.run({ command: ['init'], args, write: true, json: false });
      if (outcome.ok) return;
      const alreadyDone =
        outcome.report?.code === 'ALREADY_INITIALIZED' ||
        /already initiali[sz]ed/i.test(outcome.error.brMessage);
      if (!alreadyDone) throw outcome.error;
    },

    async create(input: CreateBeadInput) {
      const labels = [...(input.labels ?? [])];
      for (const label of labels) assertLabel(label);
      const args = ['-t', input.type ?? 'task', '-p', String(input.priority ?? 2)];
      if (input.description !== undefined) args.push(`--description=${input.description}`);
      if (labels.length > 0) args.push(`--labels=${labels.join(',')}`);
      if (input.parent !== undefined) args.push(`--parent=${input.parent}`);
      // In the create itself, so a crash can never leave the bead without its blockers (ready too early).
      const deps = input.dependsOn ?? [];
      if (deps.length > 0) args.push(`--deps=${deps.map((id) => `blocks:${id}`).join(',')}`);
      // The title after `--`, so one starting with `-` is never read as a flag.
      const row = await query(
        { command: ['create'], args: [...args, '--', input.title], write: true },
        (s) => s.issueSchema,
      );
      return toBead(row, { labels, parent: input.parent });
    },

    async ready(epicId, readyOptions) {
      const beads = await readyOfEpic(hierarchy, epicId, readyOptions?.recursive === true);
      const at = clock.now();
      seenOpen.clear();
      for (const bead of beads) seenOpen.set(bead.id, { bead, at });
      return beads;
    },

    async show(id) {
      const details = await showMany([id]);
      const detail = details.find((d) => d.id === id) ?? (details.length === 1 ? details[0] : undefined);
      if (detail === undefined) {
        throw new BrError(`br show found no bead ${id}.`, {
          code: 'ISSUE_NOT_FOUND',
          brMessage: `Issue not found: ${id}`,
          argv: client.describe({ command: ['show'], args: [id] }).argv,
        });
      }
      // `ralph-loop once` shows its bead just before it claims it; the claim need not show it again.
      if (detail.status === 'open') seenOpen.set(id, { bead: detail, at: clock.now() });
      return detail;
    },

    async list(filter: ListFilter = {}) {
      const args = ['--limit', '0'];
      if (filter.status !== undefined) args.push(`--status=${filter.status}`);
      if (filter.label !== undefined) args.push(`--label=${filter.label}`);
      // `-a` with a status too: a status filter must not be cut down by the default "not closed".
      if (filter.all === true || filter.status !== undefined) args.push('-a');
      const rows = await query({ command: ['list'], args }, (s) => s.listSchema);
      return rows
        .map((row) => toBead(row))
        .filter((bead) =>
          filter.status !== undefined
            ? bead.status === filter.status
            : filter.all === true || (bead.status !== 'closed' && bead.status !== 'tombstone'),
        );
    },

    children: (epicId, childOptions) => childrenOfEpic(hierarchy, epicId, childOptions?.recursive === true),

    graph: (epicId, graphOptions) => graphOfEpic(hierarchy, epicId, [...(graphOptions?.known ?? [])]),

    async claim(id): Promise<ClaimResult> {
      let before = takeFreshOpen(id);
      if (before === undefined) {
        // Not listed open by a recent `ready`: check, because br lets the same actor claim again and even
        // claims a closed bead that has no assignee.
        const current = await store.show(id);
        if (current.status !== 'open') return { ok: false, reason: `${id} is ${current.status}, not open` };
        before = current;
      }
      const call: BrCall = { command: ['update'], args: [id, '--claim'], write: true };
      const outcome = await client.run(call);
      if (!outcome.ok) {
        if (claimLost(outcome)) return { ok: false, reason: outcome.error.brMessage };
        throw outcome.error;
      }
      const rows = await parse(call, (s) => s.updateSchema, outcome.results[0]);
      const row = rows.find((r) => r.id === id) ?? (rows.length === 1 ? rows[0] : undefined);
      if (row?.status !== 'in_progress') {
        return { ok: false, reason: `br left ${id} ${row?.status ?? 'unchanged'} after the claim` };
      }
      if (REDUNDANT_CLAIM.test(outcome.stderr)) {
        return { ok: false, reason: `${id} was already in progress (claimed by another run as ${actor})` };
      }
      const bead = beadOnly(before);
      return {
        ok: true,
        bead: {
          ...bead,
          status: 'in_progress',
          assignee: actor,
          updated_at: row.updated_at ?? bead.updated_at,
        },
      };
    },

    async reopen(id, reason) {
      await update(id, ['--status', 'open']);
      if (reason !== undefined && reason !== '') await store.comment(id, reason);
    },

    async close(id, reason) {
      seenOpen.delete(id);
      const call: BrCall = { command: ['close'], args: [id, `--reason=${reason}`], write: true };
      const outcome = await client.run(call);
      // All skipped: exit 3 NOTHING_TO_DO, after a result document that says why (v0.2.16+ on stdout).
      const nothingToDo = !outcome.ok && outcome.report?.code === 'NOTHING_TO_DO';
      if (!outcome.ok && !nothingToDo) throw outcome.error;
      const document = outcome.results[0];
      const result =
        document === undefined
          ? { closed: [], skipped: [] }
          : await parse(call, (s) => s.closeSchema, document);
      if (result.closed.some((row) => row.id === id)) return { ok: true };
      const skipped = result.skipped.find((row) => row.id === id)?.reason;
      const fallback = nothingToDo && !outcome.ok ? outcome.error.brMessage : 'br did not report it closed';
      return { ok: false, reason: skipped ?? fallback };
    },

    async addDependency(blocked, blocker, type = 'blocks') {
      const args = [blocked, blocker, ...(type === 'blocks' ? [] : [`--type=${type}`])];
      return query({ command: ['dep', 'add'], args, write: true }, (s) => s.depAddSchema);
    },

    async addLabel(id, label) {
      assertLabel(label);
      await update(id, [`--add-label=${label}`]);
    },

    async removeLabel(id, label) {
      await update(id, [`--remove-label=${label}`]);
    },

    async comment(id, text) {
      const call: BrCall = { command: ['comments', 'add'], args: [id, '--', text], write: true };
      return toComment(await query(call, (s) => s.commentAddSchema));
    },

    async flush(flushOptions) {
      // The runner's end of run: a run that wrote nothing through br has nothing of its own to flush.
      if (flushOptions?.onlyIfWritten === true && !client.wrote()) return;
      const call: BrCall = { command: ['sync'], args: ['--flush-only'], write: true };
      const result = await query(call, (s) => s.syncSchema);
      const errors = result.errors ?? [];
      const count = typeof errors === 'number' ? errors : errors.length;
      if (count > 0) {
        throw new BrError(`br sync --flush-only reported ${count} error(s) writing .beads/issues.jsonl.`, {
          code: 'SYNC_FAILED',
          brMessage: JSON.stringify(errors),
          hint: 'Run `br sync --flush-only` to see the errors, then `br doctor`.',
          argv: client.describe(call).argv,
        });
      }
    },
  };
  return store;
}

/** br rejects these anyway; checking first also keeps a `,` from splitting one label into two on create. */
function assertLabel(label: string): void {
  if (!LABEL_PATTERN.test(label)) {
    throw new BeadStoreError(
      `Label "${label}" is not valid: br labels are 1 to 50 letters, digits, "_", ":" or "-".`,
      { code: 'VALIDATION_FAILED', hint: 'Use a label such as role:doer or iter:3.' },
    );
  }
}
