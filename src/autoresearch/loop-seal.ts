// The seal between beads and between runs: the loop's files as the runner last left them (hashes,
// plus copies in git's own directory, infra/file-vault.ts), checked before each bead, when it ends
// and when a run starts. What the runner wrote meanwhile is in the seal's journal and stands; a setting
// a person changed is recorded in the ledger; anything else is put back and recorded as tamper.
import { isAbsolute, join, relative } from 'node:path';
import {
  checkSeal,
  restoreFromSeal,
  takeSnapshot,
  writeSeal,
  type SealedVault,
} from '../infra/file-vault.js';
import { removePath } from '../infra/fs-ops.js';
import type { LoopFiles } from '../infra/loop-files.js';
import { loadLoopConfig } from './config.js';
import { appendLedgerEvent } from './ledger.js';

/** What the seal needs of the loop (the state guard's context gives it). */
export interface LoopSealContext {
  /** The repository root the workspace lives in. */
  repo: string;
  /** Absolute path of the workspace. */
  workspace: string;
  files: LoopFiles;
  now: () => number;
  /** Where the seal and its copies live (in git's common directory, outside the watched files). */
  vaultDir: string;
  warn?: ((message: string) => void) | undefined;
}

/**
 * Rounds of check-and-put-back before the loop's files are sealed: a second round finds only what
 * changed while the first put things back; a file still changing after that is sealed as found, and
 * the next check (before the next bead) puts it back.
 */
const MAX_SEAL_ROUNDS = 3;

/** Settings a person may change between runs: recorded in the ledger, never put back. */
function isSetting(workspaceRel: string | undefined): boolean {
  if (workspaceRel === undefined) return true; // rubric, metric files, Forge's config: the user's own
  return (
    ['config.json', 'program.md', '.gitignore'].includes(workspaceRel) ||
    workspaceRel.startsWith('templates/')
  );
}

/** What people write to talk with the loop (answers, directives, notes): theirs to change, unrecorded. */
function isConversation(workspaceRel: string | undefined): boolean {
  if (workspaceRel === undefined) return false;
  return (
    ['retrospective.md', 'rubric-suggestions.md'].includes(workspaceRel) ||
    workspaceRel.startsWith('directives/') ||
    workspaceRel.startsWith('needs-human')
  );
}

/** `path` relative to the workspace, with forward slashes; undefined outside it. */
export function workspaceRelative(ctx: Pick<LoopSealContext, 'workspace'>, path: string): string | undefined {
  const rel = relative(ctx.workspace, path);
  return rel === '' || rel.startsWith('..') || isAbsolute(rel) ? undefined : rel.split('\\').join('/');
}

/**
 * The loop's seal over its workspace and `guardedFiles()` (the metric's files, Forge's config).
 * `ctx` is read at each check, so a `warn` set on it later is the one used.
 */
export function createLoopSeal(
  ctx: LoopSealContext,
  guardedFiles: () => Promise<string[]>,
): { verify(when: string): Promise<void> } {
  const vault = async (): Promise<SealedVault> => ({
    dir: ctx.vaultDir,
    layout: { repo: ctx.repo, dirs: [ctx.workspace], files: await guardedFiles() },
  });
  const ledgerPath = join(ctx.workspace, 'research-log.jsonl');

  /**
   * Compares the loop's files with the seal: settings changes are recorded, anything else put back.
   * Then seals the very snapshot it found clean, not one read afterwards: a file changed between the
   * check and the seal (by a process an agent hid from the sweep, racing the runner) would otherwise
   * be sealed as the runner's. What the runner itself writes meanwhile (a put-back, a ledger event)
   * is in the seal's journal, so the next round finds only such a change, and puts it back too.
   */
  async function verify(when: string): Promise<void> {
    const sealed = await vault();
    // Changes that stand once seen (settings, conversations, the dropped summary): settled once.
    const accepted = new Set<string>();
    for (let round = 1; ; round += 1) {
      const snapshot = await takeSnapshot(sealed.layout);
      const check = await checkSeal(sealed, snapshot);
      const fresh = check.changed.filter((name) => !accepted.has(name));
      if (fresh.length === 0 || round > MAX_SEAL_ROUNDS) {
        await writeSeal(sealed, snapshot);
        return;
      }
      for (const name of await settleChanges(sealed, fresh, when)) accepted.add(name);
    }
  }

  /**
   * Puts back (and records) what changed not by Forge; records settings; drops the summary cache.
   * Returns the names whose change stands (all but those put back).
   */
  async function settleChanges(
    sealed: SealedVault,
    changed: readonly string[],
    when: string,
  ): Promise<string[]> {
    const wsRel = (name: string) => workspaceRelative(ctx, join(ctx.repo, name));
    // The summary is a cache of the ledger (a `status` may refresh it): dropped, then rebuilt.
    const derived = changed.filter((name) => wsRel(name) === 'ledger-summary.json');
    for (const name of derived) await removePath(join(ctx.repo, name));
    const rest = changed.filter((name) => !derived.includes(name) && !isConversation(wsRel(name)));
    const settings = rest.filter((name) => isSetting(wsRel(name)));
    const state = rest.filter((name) => !isSetting(wsRel(name)));
    let restored: string[] = [];
    if (state.length > 0) {
      restored = await restoreFromSeal(sealed, state);
      const lost = state.filter((name) => !restored.includes(name));
      const message = `${state.join(', ')} changed ${when}, not by Forge; ${
        lost.length === 0 ? 'put back from the runner’s copy' : `put back except ${lost.join(', ')} (no copy)`
      }`;
      ctx.warn?.(`Tamper: ${message}.`);
      await appendLedgerEvent(ctx.files, ledgerPath, {
        kind: 'tamper_between_runs',
        ts: new Date(ctx.now()).toISOString(),
        paths: state,
        message,
      });
    }
    if (settings.length > 0) {
      const message = `settings changed ${when}: ${settings.join(', ')}`;
      ctx.warn?.(`The loop's ${message}; recorded in the ledger.`);
      await appendLedgerEvent(ctx.files, ledgerPath, {
        kind: 'settings_changed',
        ts: new Date(ctx.now()).toISOString(),
        paths: settings,
        message,
      });
      // A config the next bead would fail on is the run's stop, now, as a config error (exit 4): made
      // invalid while a doer ran, it was found only by the strategist's stamp, blamed on the strategist.
      if (settings.some((name) => wsRel(name) === 'config.json')) {
        await loadLoopConfig(ctx.files, join(ctx.workspace, 'config.json'));
      }
    }
    // What could not be put back (no copy) stands too: recorded once, not once a round.
    return changed.filter((name) => !restored.includes(name));
  }

  return { verify };
}
