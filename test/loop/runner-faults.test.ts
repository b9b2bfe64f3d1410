// Core runner faults a first night hits: dirty trees and commits, environment errors, true attempt
// counts, an agent that closes its own bead, a locked index, stale stop requests, `once` and the epic.
import { gitFailureDetail } from '../../src/infra/git-command.js';
import { describe, expect, it } from 'vitest';
import { FAILED_LABEL } from '../../src/loop/select.js';
import type { DirtyPaths, RunnerGit, LoopEvent } from '../../src/loop/types.js';
import { createHarness, ok } from './harness.js';

/** A working tree as the runner's git port sees it: dirty paths with a fingerprint of their content. */
function fakeGit(dirty: Record<string, string> = {}) {
  const tree = new Map(Object.entries(dirty));
  const commits: { message: string; paths: string[] }[] = [];
  const state: { indexLock?: string } = {};
  const git: RunnerGit = {
    operationInProgress: async () => undefined,
    indexLock: async () => state.indexLock,
    dirtyPaths: async () => new Map(tree),
    async commitChanges(message: string, before: DirtyPaths) {
      const paths = [...tree.keys()].filter((path) => !before.has(path));
      const leftOut = [...before].filter(([path, print]) => tree.has(path) && tree.get(path) !== print);
      for (const path of paths) tree.delete(path);
      commits.push({ message, paths });
      return { ...(paths.length > 0 ? { sha: 'c0ffee' } : {}), leftOut: leftOut.map(([path]) => path) };
    },
  };
  return { git, tree, commits, state };
}

const warnings = (events: LoopEvent[]) => events.flatMap((e) => (e.type === 'warning' ? [e.message] : []));

describe('runner: --auto-commit holds only what the bead changed', () => {
  it('refuses to start on a dirty tree, before any agent runs, naming the paths and --allow-dirty', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a']);
    const { git, commits } = fakeGit({ 'notes.txt': 'v1', 'src/mine.ts': 'v1' });
    const error = (await h.run({ epicId, autoCommit: true }, { git }).catch((e: unknown) => e)) as {
      exitCode?: number;
      message: string;
      hint?: string;
    };
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain('notes.txt');
    expect(error.hint).toContain('--allow-dirty');
    expect(h.requests).toHaveLength(0);
    expect(commits).toHaveLength(0);
    expect((await h.store.show(ids[0]!)).status).toBe('open');
    // Nothing was started: no run_started for `ralph-loop logs` to show as the latest run.
    expect(h.events).toEqual([]);
  });

  it('takes the tree check made while the run was checked in place of its own, refusal and all', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a']);
    let asked = 0;
    const { git } = fakeGit();
    const counted: RunnerGit = {
      ...git,
      operationInProgress: async () => {
        asked += 1;
        return undefined;
      },
    };
    const refusal = new Error('a git merge is in progress (checked at start)');
    const refused = await h
      .run({ epicId, treeCheckedAtStart: Promise.reject(refusal) }, { git: counted })
      .catch((e: unknown) => e);
    expect(refused).toBe(refusal);
    expect(h.requests).toHaveLength(0);
    expect(h.events).toEqual([]);
    expect((await h.store.show(ids[0]!)).status).toBe('open');
    // Passed: the runner goes on without asking git again.
    const summary = await h.run({ epicId, treeCheckedAtStart: Promise.resolve() }, { git: counted });
    expect(summary.reason).toBe('done');
    expect(asked).toBe(0);
    // Not given: the runner checks the tree itself.
    const { epicId: other } = await h.epic(['b']);
    await h.run({ epicId: other }, { git: counted });
    expect(asked).toBe(1);
  });

  it('with allowDirty, commits only what the bead changed and says which of the user’s paths it left out', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['write']);
    const { git, tree, commits } = fakeGit({ 'notes.txt': 'v1', 'src/mine.ts': 'v1' });
    h.behaviours.set('write', () => {
      tree.set('feature.txt', 'new');
      tree.set('notes.txt', 'v2'); // the user's dirty file, changed by the bead too
      return ok();
    });
    const summary = await h.run({ epicId, autoCommit: true, allowDirty: true }, { git });
    expect(summary.reason).toBe('done');
    expect(commits.map((c) => c.paths)).toEqual([['feature.txt']]);
    expect(warnings(h.events).join('\n')).toMatch(/notes\.txt.*not committed|left .*notes\.txt/);
    expect(warnings(h.events).join('\n')).not.toContain('src/mine.ts');
    expect(tree.get('src/mine.ts')).toBe('v1');
  });

  it('reads the tree beside the claim, not after it, and the agent starts after both', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['write']);
    const { git, tree, commits } = fakeGit({ 'notes.txt': 'v1' });
    const order: string[] = [];
    let dirtyAsked!: () => void;
    const asked = new Promise<void>((resolve) => (dirtyAsked = resolve));
    const claim = h.store.claim.bind(h.store);
    h.store.claim = async (id) => {
      order.push('claim asked');
      // Sequential code would ask git only after this answers: wait (bounded) to see which it is.
      await Promise.race([asked, new Promise((resolve) => setTimeout(resolve, 500))]);
      order.push('claim answered');
      return claim(id);
    };
    const spied: RunnerGit = {
      ...git,
      dirtyPaths: async () => {
        order.push('tree asked');
        dirtyAsked();
        await new Promise((resolve) => setTimeout(resolve, 20));
        order.push('tree answered');
        return new Map(tree);
      },
    };
    h.behaviours.set('write', () => {
      order.push('agent');
      tree.set('feature.txt', 'new');
      return ok();
    });
    const summary = await h.run({ epicId, autoCommit: true, allowDirty: true }, { git: spied });
    expect(summary.reason).toBe('done');
    expect(order.slice(0, 2).sort()).toEqual(['claim asked', 'tree asked']);
    expect(order[2]).toBe('claim answered');
    expect(order.indexOf('agent')).toBe(order.length - 1);
    expect(order.indexOf('tree answered')).toBeLessThan(order.indexOf('agent'));
    // The read still tells the user's dirty file from the bead's own.
    expect(commits.map((c) => c.paths)).toEqual([['feature.txt']]);
  });

  it('a claim that fails leaves the tree read unused, even a read that failed too', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['taken']);
    const { git } = fakeGit();
    const claim = h.store.claim.bind(h.store);
    let claims = 0;
    h.store.claim = async (id) => {
      claims += 1;
      return claims === 1 ? { ok: false, reason: 'claimed by another runner' } : claim(id);
    };
    let reads = 0;
    const failing: RunnerGit = {
      ...git,
      dirtyPaths: async () => {
        reads += 1;
        if (reads === 1) throw new Error('git status failed');
        return new Map();
      },
    };
    const summary = await h.run({ epicId, autoCommit: true, allowDirty: true }, { git: failing });
    // The failed read went with the failed claim: the bead was skipped, then claimed and run.
    expect(warnings(h.events)).toEqual([`Could not claim ${ids[0]}: claimed by another runner`]);
    expect(h.requests.map((request) => request.bead.id)).toEqual([ids[0]]);
    expect(summary.beadsClosed).toBe(1);
    expect(reads).toBe(2);
  });

  it('snapshots the tree once per bead, before its first attempt, so a retried bead’s work is its own', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['flaky']);
    const { git, tree, commits } = fakeGit();
    h.behaviours.set('flaky', (_request, call) => {
      tree.set(`attempt-${call}.txt`, 'x');
      return call === 1 ? { outcome: 'error', message: 'try again' } : ok();
    });
    await h.run({ epicId, autoCommit: true, backoffMs: 0 }, { git });
    expect(commits.map((c) => c.paths)).toEqual([['attempt-1.txt', 'attempt-2.txt']]);
  });
});

describe('runner: environment errors and true attempt counts', () => {
  it('an agent binary that is missing stops the run as an environment error: bead open, no label, 1 attempt', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['a', 'b']);
    h.behaviours.set('a', () => ({
      outcome: 'error',
      fatal: true,
      environment: true,
      message:
        'Could not start `claude`: `claude` was not found on the PATH given to it; install it or fix PATH.',
    }));
    const summary = await h.run({ epicId });
    expect(summary.reason).toBe('environment');
    expect(summary.message).toContain('not found on the PATH');
    expect(summary.message).not.toMatch(/\d time\(s\)/);
    expect(h.requests).toHaveLength(1);
    const bead = await h.store.show(ids[0]!);
    expect(bead.status).toBe('open');
    expect(bead.labels).not.toContain(FAILED_LABEL);
    expect(bead.comments.map((c) => c.text).join('\n')).toContain('attempt 1: error');
    expect(h.events.some((e) => e.type === 'bead_failed')).toBe(false);
  });

  it.each([
    ['a full disk', Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' })],
    ['a read-only file', Object.assign(new Error('EPERM: operation not permitted, open'), { code: 'EPERM' })],
    ['git with no identity', new Error('git commit-tree failed: fatal: unable to auto-detect email address')],
    [
      'another git process holding the index',
      new Error(
        `git add failed in /r: ${gitFailureDetail(
          "fatal: Unable to create '/r/.git/index.lock': File exists.\n\nAnother git process seems to be running in this repository, e.g.\nan editor opened by 'git commit'. Please make sure all processes\nare terminated then try again. If it still fails, a git process\nmay have crashed in this repository earlier:\nremove the file manually to continue.\n",
        )}`,
      ),
    ],
    [
      'a full TMPDIR, as git says it',
      new Error(
        "git update-index failed in /r: fatal: sha1 file '/full/forge-index-1a2b.lock' write error. Out of diskspace",
      ),
    ],
    [
      'a missing TMPDIR, where Forge’s scratch index goes',
      new Error(
        "git update-index failed in /r: fatal: Unable to create '/gone/forge-index-1a2b.lock': No such file or directory",
      ),
    ],
  ])(
    '%s under a step of Forge’s own stops the run as an environment error: bead open, no label, 1 attempt',
    async (_what, error) => {
      // Seen: a full disk mid-bead labelled the bead ralph:failed after three attempts (exit 5, not 3).
      const h = createHarness();
      const { epicId, ids } = await h.epic(['a']);
      h.behaviours.set('a', () => {
        throw error;
      });
      const summary = await h.run({ epicId, maxAttempts: 3 });
      expect(summary.reason).toBe('environment');
      expect(summary.message).not.toContain('are terminated then try again');
      expect(h.requests).toHaveLength(1);
      const bead = await h.store.show(ids[0]!);
      expect(bead.status).toBe('open');
      expect(bead.labels).not.toContain(FAILED_LABEL);
    },
  );

  it('an error of Forge’s own step that is not the machine’s is still the bead’s failed attempt', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    h.behaviours.set('a', () => {
      throw new Error('the judge output is not JSON');
    });
    const summary = await h.run({ epicId, maxAttempts: 2, backoffMs: 0 });
    expect(summary.reason).toBe('failed');
    expect(h.requests).toHaveLength(2);
  });

  it('a failure retrying cannot help says how many attempts there really were', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['bad label']);
    h.behaviours.set('bad label', () => ({ outcome: 'error', fatal: true, message: 'unknown agent "gpt"' }));
    const summary = await h.run({ epicId, maxAttempts: 3 });
    expect(summary.reason).toBe('failed');
    expect(summary.message).not.toContain('3 time(s)');
    expect(summary.message).toMatch(/1 attempt|attempt 1/);
    const failed = h.events.find((e) => e.type === 'bead_failed');
    expect(failed).toMatchObject({ attempts: 1 });
  });

  it('a rate-limit wait comments with the true attempt number, not the count of waits', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['limited']);
    h.behaviours.set('limited', (_request, call) =>
      call <= 2
        ? { outcome: 'error', message: `failure ${call}` }
        : { outcome: 'rate_limited', message: 'limit', resetAt: h.clock.now() + 10 * 3_600_000 },
    );
    const summary = await h.run({ epicId, wallClockMs: 3_600_000, backoffMs: 0, maxAttempts: 5 });
    expect(summary.reason).toBe('wall_clock');
    const comments = (await h.store.show(ids[0]!)).comments.map((c) => c.text);
    expect(comments.at(-1)).toContain('attempt 3: rate_limited');
  });
});

describe('runner: faults around the bead', () => {
  it('accepts a bead the agent closed itself (it is done) and records it', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['closes itself', 'next']);
    h.behaviours.set('closes itself', async (request) => {
      await h.store.close(request.bead.id, 'closed by the agent');
      return ok();
    });
    const summary = await h.run({ epicId });
    expect(summary).toMatchObject({ reason: 'done', beadsClosed: 2 });
    expect(h.events.filter((e) => e.type === 'bead_closed').map((e) => (e as { bead: string }).bead)).toEqual(
      ids,
    );
    expect(warnings(h.events).join('\n')).toContain('already closed');
  });

  it('refuses to start on a locked git index, naming the file, before any agent runs', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a']);
    const { git, state } = fakeGit();
    state.indexLock = '/repo/.git/index.lock';
    const error = (await h.run({ epicId }, { git }).catch((e: unknown) => e)) as {
      exitCode?: number;
      message: string;
    };
    expect(error.exitCode).toBe(3);
    expect(error.message).toContain('/repo/.git/index.lock');
    expect(h.requests).toHaveLength(0);
  });

  it('drops a stop request left by an earlier run, says so, and runs', async () => {
    const h = createHarness();
    const { epicId } = await h.epic(['a', 'b']);
    const dropped: string[] = [];
    const summary = await h.run(
      { epicId },
      {
        control: {
          stopRequested: async () => false,
          clearStop: async () => undefined,
          transcriptPath: (bead) => `/logs/${bead}.log`,
          dropStaleStop: async () => {
            dropped.push('yes');
            return 'requested 2026-11-21T22:00:00Z by pid 17';
          },
        },
      },
    );
    expect(summary).toMatchObject({ reason: 'done', beadsRun: 2 });
    expect(dropped).toEqual(['yes']);
    expect(warnings(h.events).join('\n')).toContain('requested 2026-11-21T22:00:00Z by pid 17');
  });

  it('clears a stop request this run did not get to, so it never halts the next run', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['only', 'other']);
    h.behaviours.set('only', () => {
      h.stopFile.requested = true;
      return ok();
    });
    const summary = await h.run({ epicId, onlyBead: ids[0]! });
    expect(summary.reason).toBe('done');
    expect(h.stopFile.requested).toBe(false);
  });
});

describe('runner: once', () => {
  it('closes the epic when the bead it ran was the last open child, as a full run does', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['first', 'last']);
    await h.store.claim(ids[0]!);
    await h.store.close(ids[0]!, 'done earlier');
    const summary = await h.run({ epicId, onlyBead: ids[1]! });
    expect(summary.reason).toBe('done');
    expect((await h.store.show(epicId)).status).toBe('closed');
    expect(summary.message).toContain('the epic is closed');
  });

  it('leaves the epic open when other children are still open', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['first', 'second']);
    await h.run({ epicId, onlyBead: ids[1]! });
    expect((await h.store.show(epicId)).status).toBe('open');
  });
});

describe('runner: the lock is only a record', () => {
  it('a lock that cannot record the agent’s pid is warned about, and the bead still runs', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['spawns']);
    h.behaviours.set('spawns', (request) => {
      request.onSpawn?.(31337);
      return ok();
    });
    const lock = {
      acquire: async () => ({ ok: true as const }),
      update: (patch: object): Promise<void> => {
        if ('agent_pid' in patch && patch.agent_pid !== undefined) throw new Error('disk full');
        return Promise.resolve();
      },
      release: async () => undefined,
    };
    const summary = await h.run({ epicId, maxAttempts: 1 }, { lock });
    expect(summary.reason).toBe('done');
    expect((await h.store.show(ids[0]!)).status).toBe('closed');
    expect(warnings(h.events)).toEqual([expect.stringContaining('disk full')]);
  });

  it('no bead waits on the lock: a lock whose writes never finish still sees each update, in order', async () => {
    const h = createHarness();
    const { epicId, ids } = await h.epic(['first', 'second']);
    h.behaviours.set('first', (request) => {
      request.onSpawn?.(4242);
      return ok();
    });
    const patches: object[] = [];
    const lock = {
      acquire: async () => ({ ok: true as const }),
      // A write stuck on a slow disk: the run must go on without it.
      update: (patch: object, how?: { now?: boolean; soon?: boolean }): Promise<void> => {
        patches.push(how === undefined ? patch : { ...patch, how });
        return new Promise<void>(() => undefined);
      },
      release: async () => undefined,
    };
    const summary = await h.run({ epicId, maxAttempts: 1 }, { lock });
    expect(summary.reason).toBe('done');
    expect((await h.store.show(ids[1]!)).status).toBe('closed');
    // Only a new agent's pid is asked for on disk at once (the lock's `now`); the rest is progress,
    // written `soon` (mostly by that next `now` write).
    expect(patches).toEqual([
      expect.objectContaining({ bead: ids[0], how: { soon: true } }),
      { agent_pid: 4242, how: { now: true } },
      { agent_pid: undefined, how: { soon: true } },
      expect.objectContaining({ bead: ids[1], how: { soon: true } }),
      { agent_pid: undefined, how: { soon: true } },
    ]);
  });
});
