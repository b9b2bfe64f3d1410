// What Forge keeps under refs/forge/ (kept-refs.ts) on real temp repositories: put-backs kept a month,
// pins dropped when their step is done, and what a run left behind pruned.
import { describe, expect, it } from 'vitest';
import { doerPinRef, keeper, pinSaved, pinStep } from '../../src/autoresearch/kept-refs.js';
import { createTempRepo } from '../support/git-repo.js';

describe('refs/forge/ housekeeping', () => {
  it('prunes put-backs older than 30 days and step pins older than a day, and nothing else', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    const head = repo.head();
    const now = Date.parse('2026-12-02T12:00:00.000Z');
    const refs = [
      'refs/forge/undone/2026-10-01T08-00-00-000Z-41/head', // two months old: pruned
      'refs/forge/undone/2026-11-20T08-00-00-000Z-42/head', // twelve days: kept
      'refs/forge/undone/made-by-hand/head', // no stamp: kept
      'refs/forge/saved/step-2026-11-30T08-00-00-000Z-43-1', // a dead run's pin, two days old: pruned
      'refs/forge/saved/step-2026-12-02T11-00-00-000Z-44-1', // an hour old: kept
      'refs/forge/saved/doer-0123456789abcdef', // a loop's doer pin: kept
    ];
    for (const ref of refs) repo.run('update-ref', ref, head);
    const keep = keeper(repo.git, () => now);
    await keep(new Map([['head', head]]));
    const left = repo.run('for-each-ref', '--format=%(refname)', 'refs/forge/').trim().split('\n');
    expect(left.sort()).toEqual(
      [...refs.filter((_, i) => i !== 0 && i !== 3), `${keep.prefix()}/head`].sort(),
    );
    expect(keep.prefix()).toBe(`refs/forge/undone/2026-12-02T12-00-00-000Z-${process.pid}`);
  });

  it('a step pin prunes the same way, once per repository; a loop’s doer pin is replaced, not added', async () => {
    const repo = await createTempRepo({ 'a.txt': 'a\n' });
    repo.run('update-ref', 'refs/forge/saved/step-2026-11-01T08-00-00-000Z-43-1', repo.head());
    await repo.write('notes.md', 'saved\n');
    const blob = repo.run('hash-object', '-w', 'notes.md').trim();
    const files = new Map([['notes.md', { blob, mode: '100644' as const }]]);
    const pin = await pinStep(repo.git, files, [], Date.parse('2026-12-02T12:00:00.000Z'));
    expect(repo.run('for-each-ref', '--format=%(refname)', 'refs/forge/saved/').trim()).toBe(pin);
    expect(repo.run('ls-tree', pin!)).toContain(blob);

    const ref = doerPinRef('/repo/.autoresearch');
    expect(await pinSaved(repo.git, ref, files)).toBe(ref);
    await repo.write('notes.md', 'next iteration\n');
    const other = repo.run('hash-object', '-w', 'notes.md').trim();
    await pinSaved(repo.git, ref, new Map([['notes.md', { blob: other, mode: '100644' as const }]]));
    expect(repo.run('ls-tree', ref)).toContain(other);
    expect(repo.run('ls-tree', ref)).not.toContain(blob);
    // Nothing saved, nothing pinned; a blob gone already is no error, and no pin.
    expect(
      await pinSaved(repo.git, ref, new Map([['gone.md', { blob: null, mode: '100644' as const }]])),
    ).toBeUndefined();
    const missing = new Map([['x', { blob: 'f'.repeat(40), mode: '100644' as const }]]);
    expect(await pinSaved(repo.git, 'refs/forge/saved/other', missing)).toBeUndefined();
  });
});
