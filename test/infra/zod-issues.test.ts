// The one zod issue formatter: structured problems (file, field, message), one line each for people.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { listSchema } from '../../src/beads/br/schemas.js';
import { describeProblem, formatFieldPath, zodProblems } from '../../src/infra/zod-issues.js';

const schema = z.strictObject({
  caps: z.strictObject({
    max_iterations: z.number().int().min(0, { error: 'expected a non-negative integer' }),
  }),
  scope: z.object({ doer_paths: z.array(z.string()) }).optional(),
  gates: z
    .record(z.string().regex(/^[a-z]+$/, { error: 'a gate name is lower-case letters' }), z.string())
    .optional(),
  metric: z
    .discriminatedUnion('type', [
      z.object({ type: z.literal('hard') }),
      z.object({ type: z.literal('soft') }),
    ])
    .optional(),
});

function problems(value: unknown) {
  const parsed = schema.safeParse(value);
  if (parsed.success) throw new Error('expected a failure');
  return zodProblems('cfg.json', parsed.error);
}

describe('zodProblems', () => {
  it.each([
    {
      name: 'a field deep in the document, zod’s "Invalid input: " dropped',
      value: { caps: { max_iterations: 'x' } },
      expected: [
        { file: 'cfg.json', field: 'caps.max_iterations', message: 'expected number, received string' },
      ],
    },
    {
      name: 'a custom message as written',
      value: { caps: { max_iterations: -1 } },
      expected: [
        { file: 'cfg.json', field: 'caps.max_iterations', message: 'expected a non-negative integer' },
      ],
    },
    {
      name: 'array items in brackets',
      value: { caps: { max_iterations: 1 }, scope: { doer_paths: ['a', 3] } },
      expected: [
        { file: 'cfg.json', field: 'scope.doer_paths[1]', message: 'expected string, received number' },
      ],
    },
    {
      name: 'each unknown key its own problem, at any depth',
      value: { caps: { max_iterations: 1, max_iter: 2 }, colour: 'red' },
      expected: [
        { file: 'cfg.json', field: 'caps.max_iter', message: 'unknown key' },
        { file: 'cfg.json', field: 'colour', message: 'unknown key' },
      ],
    },
    {
      name: 'a bad record key says why, by the key’s own rule',
      value: { caps: { max_iterations: 1 }, gates: { 'Unit Tests': 'npm test' } },
      expected: [
        { file: 'cfg.json', field: 'gates.Unit Tests', message: 'a gate name is lower-case letters' },
      ],
    },
    {
      name: 'the document itself has no field',
      value: 42,
      expected: [{ file: 'cfg.json', field: '', message: 'expected object, received number' }],
    },
  ])('$name', ({ value, expected }) => {
    expect(problems(value)).toEqual(expected);
  });

  it('a union with no matching type lists the types it accepts', () => {
    expect(problems({ caps: { max_iterations: 1 }, metric: { type: 'medium' } })).toEqual([
      { file: 'cfg.json', field: 'metric.type', message: 'expected one of "hard", "soft"' },
    ]);
  });
});

describe('describeProblem and formatFieldPath', () => {
  it('reads file: field: message, or file: message for the whole document', () => {
    expect(describeProblem({ file: 'a.json', field: 'caps.x', message: 'bad' })).toBe('a.json: caps.x: bad');
    expect(describeProblem({ file: 'a.json', field: '', message: 'bad' })).toBe('a.json: bad');
    expect(formatFieldPath(['scope', 'doer_paths', 0, 'x'])).toBe('scope.doer_paths[0].x');
    expect(formatFieldPath([])).toBe('');
  });
});

describe('zodProblems over br output (unions: furthest)', () => {
  function brProblems(schema: z.ZodType, value: unknown) {
    const parsed = schema.safeParse(value);
    if (parsed.success) throw new Error('expected a failure');
    return {
      whole: zodProblems('br', parsed.error),
      furthest: zodProblems('br', parsed.error, { unions: 'furthest' }),
    };
  }

  it.each([
    {
      name: 'a bare list: the field of the bead that is wrong',
      value: [{ id: 7 }],
      field: '[0].id',
    },
    {
      name: 'an envelope: the field inside it',
      value: { issues: [{ id: 'bd-1', title: 3 }] },
      field: 'issues[0].title',
    },
  ])('$name', ({ value, field }) => {
    const { whole, furthest } = brProblems(listSchema, value);
    expect(whole).toEqual([{ file: 'br', field: '', message: 'Invalid input' }]);
    expect(furthest[0]).toMatchObject({ file: 'br', field });
    expect(furthest[0]!.message).toMatch(/^expected string/);
  });
});
