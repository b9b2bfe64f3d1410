// Bead label conventions read the same way in every layer (the runner, autoresearch, the scripted agent).
import { describe, expect, it } from 'vitest';
import { iterOf, labelValue } from '../../src/infra/labels.js';

describe('labels', () => {
  it.each([
    { labels: ['iter:3'], iter: 3 },
    { labels: ['role:doer', 'iter:12', 'iter:4'], iter: 12 },
    { labels: ['iter:0'], iter: 0 },
    { labels: ['iter:x'], iter: undefined },
    { labels: ['iter:-1'], iter: undefined },
    { labels: ['iter:1.5'], iter: undefined },
    { labels: ['iter:'], iter: undefined },
    { labels: ['iteration:3'], iter: undefined },
    { labels: [], iter: undefined },
  ])('iterOf $labels', ({ labels, iter }) => {
    expect(iterOf({ labels })).toBe(iter);
  });

  it('iterOf of no bead is undefined; labelValue takes the first label with the key', () => {
    expect(iterOf(undefined)).toBeUndefined();
    expect(labelValue({ labels: ['agent:claude-opus', 'agent:codex'] }, 'agent')).toBe('claude-opus');
    expect(labelValue({ labels: ['agents:x'] }, 'agent')).toBeUndefined();
    expect(labelValue({ labels: ['role:'] }, 'role')).toBe('');
  });
});
