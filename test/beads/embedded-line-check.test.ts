// The hand-written shape check of an issues.jsonl line: what it accepts (br's defaults, null as unset,
// fields Forge does not model), and that every wrong field is named with what was expected.
import { describe, expect, it } from 'vitest';
import { parseIssuesJsonl, serializeIssuesJsonl } from '../../src/beads/embedded/index.js';
import { BeadStoreError } from '../../src/infra/errors.js';

const TS = '2026-01-02T03:04:05.123456789Z';
const minimal = { id: 'fx-1', title: 'one', created_at: TS, updated_at: TS };

function parseLine(value: unknown): ReturnType<typeof parseIssuesJsonl> {
  return parseIssuesJsonl(`${JSON.stringify(value)}\n`, 'issues.jsonl');
}

function problemOf(value: unknown): string {
  try {
    parseLine(value);
  } catch (error) {
    expect(error).toBeInstanceOf(BeadStoreError);
    const message = (error as BeadStoreError).message;
    expect(message).toMatch(/^issues\.jsonl:1: not a valid issue line: /);
    return message.replace(/^issues\.jsonl:1: not a valid issue line: /, '');
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe('an issue line, checked by hand', () => {
  it("fills br's serde defaults and reads null options as unset", () => {
    const record = parseLine({ ...minimal, description: null, assignee: null, labels: null }).get('fx-1');
    expect(record).toEqual({
      ...minimal,
      status: 'open',
      priority: 2,
      issue_type: 'task',
      labels: [],
      dependencies: [],
      comments: [],
    });
    expect(record !== undefined && 'description' in record).toBe(false);
  });

  it('keeps the fields it does not model, on the issue, its edges and its comments', () => {
    const line = {
      ...minimal,
      design: 'a design',
      dependencies: [
        { issue_id: 'fx-1', depends_on_id: 'fx-0', type: 'blocks', created_at: TS, metadata: '{}' },
      ],
      comments: [{ id: 1, issue_id: 'fx-1', author: 'a', text: 't', created_at: TS, kind: 'note' }],
    };
    const record = parseLine(line).get('fx-1');
    expect(record?.extra).toEqual({ design: 'a design' });
    expect(record?.dependencies[0]?.extra).toEqual({ metadata: '{}' });
    expect(record?.comments[0]?.extra).toEqual({ kind: 'note' });
    expect(serializeIssuesJsonl(parseLine(line).values())).toBe(`${JSON.stringify(line)}\n`);
  });

  it.each([
    ['a line that is no object', ['fx-1'], 'expected object, received array'],
    ['a missing title', { ...minimal, title: undefined }, 'title: expected string, received undefined'],
    ['an empty id', { ...minimal, id: '' }, 'id: expected a non-empty string'],
    ['a null status (only absence means open)', { ...minimal, status: null }, 'status: expected string'],
    ['a fractional priority', { ...minimal, priority: 1.5 }, 'priority: expected int, received number'],
    [
      'a date that is no RFC 3339',
      { ...minimal, updated_at: '2026-01-02' },
      'updated_at: expected an RFC 3339',
    ],
    [
      'an impossible date',
      { ...minimal, closed_at: '2026-13-45T00:00:00Z' },
      'closed_at: expected a valid date',
    ],
    [
      'a label that is no string',
      { ...minimal, labels: ['a', 3] },
      'labels[1]: expected string, received number',
    ],
    ['a flag that is a string', { ...minimal, pinned: 'yes' }, 'pinned: expected boolean, received string'],
    [
      'an edge without its target',
      { ...minimal, dependencies: [{ issue_id: 'fx-1', type: 'blocks', created_at: TS }] },
      'dependencies[0].depends_on_id: expected string, received undefined',
    ],
    [
      'a comment with a text id',
      { ...minimal, comments: [{ id: '1', issue_id: 'fx-1', author: 'a', text: 't', created_at: TS }] },
      'comments[0].id: expected int, received string',
    ],
  ])('names %s', (_name, line, expected) => {
    expect(problemOf(line)).toContain(expected);
  });

  it('lists every wrong field of a line, not only the first', () => {
    expect(problemOf({ ...minimal, title: 1, priority: 'high' })).toBe(
      'title: expected string, received number; priority: expected int, received string',
    );
  });
});
