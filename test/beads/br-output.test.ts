// Pure tests of how the br adapter reads br's output: documents among log lines, envelopes, and every shape.
import { describe, expect, it } from 'vitest';
import { brEnvironment } from '../../src/beads/br/client.js';
import { classifyOutput, extractJsonDocuments, unwrapDataEnvelope } from '../../src/beads/br/output.js';
import { toBead, toDetail } from '../../src/beads/br/rows.js';
import {
  closeSchema,
  depAddSchema,
  issueSchema,
  listSchema,
  showSchema,
} from '../../src/beads/br/schemas.js';
import { featuresOf, parseBrVersion } from '../../src/beads/br/version.js';

const row = {
  id: 'bd-1x9',
  title: 't',
  status: 'open',
  priority: 2,
  issue_type: 'task',
  created_at: '2026-01-21T21:46:54.405167897Z',
  updated_at: '2026-01-21T21:46:54.405167897Z',
};

describe('extractJsonDocuments', () => {
  it('skips log lines before, between and after documents', () => {
    const text = [
      '2026-01-21T21:46:54.405Z  INFO beads_rust::storage: opening db path=[.beads/beads.db]',
      '[INFO] auto-import: nothing to do',
      '[',
      '  {"id": "bd-1", "title": "a [x] {y}"}',
      ']',
      'WARN something {not json}',
      '{"error": {"code": "NOTHING_TO_DO", "message": "m"}}',
      '',
    ].join('\n');
    expect(extractJsonDocuments(text)).toEqual([
      [{ id: 'bd-1', title: 'a [x] {y}' }],
      { error: { code: 'NOTHING_TO_DO', message: 'm' } },
    ]);
  });

  it('reads documents printed back to back on one line', () => {
    expect(extractJsonDocuments('[]{"a":1}\n')).toEqual([[], { a: 1 }]);
  });

  it('finds nothing in garbage, truncated JSON or a bracketed log line', () => {
    expect(extractJsonDocuments('<html>502 Bad Gateway</html>\n')).toEqual([]);
    expect(extractJsonDocuments('[{"id": "bd-1",')).toEqual([]);
    expect(extractJsonDocuments('[2026-01-21 INFO] started\n')).toEqual([]);
  });

  it('keeps escaped quotes and braces inside strings', () => {
    expect(extractJsonDocuments('{"t":"say \\"}\\" ok"}')).toEqual([{ t: 'say "}" ok' }]);
  });
});

describe('classifyOutput', () => {
  it('separates a result document from a NOTHING_TO_DO envelope after it on stdout (br 0.2.16+)', () => {
    const stdout = `${JSON.stringify({ closed: [], skipped: [{ id: 'bd-1', reason: 'already closed' }] }, null, 2)}\n${JSON.stringify(
      {
        error: {
          code: 'NOTHING_TO_DO',
          message: 'Nothing to do',
          hint: null,
          retryable: false,
          context: null,
        },
      },
      null,
      2,
    )}\n`;
    const { results, error } = classifyOutput(stdout, '');
    expect(results).toEqual([{ closed: [], skipped: [{ id: 'bd-1', reason: 'already closed' }] }]);
    expect(error).toMatchObject({ code: 'NOTHING_TO_DO', message: 'Nothing to do', hint: undefined });
  });

  it('finds the error envelope on stderr (br up to 0.2.15) after log lines', () => {
    const stderr = `2026-01-21T21:46:54Z  INFO opening\n{"error":{"code":"ISSUE_NOT_FOUND","message":"Issue not found: bd-x","hint":"Run 'br list'","retryable":false,"context":{"searched_id":"bd-x"}}}\n`;
    expect(classifyOutput('', stderr).error).toEqual({
      code: 'ISSUE_NOT_FOUND',
      message: 'Issue not found: bd-x',
      hint: "Run 'br list'",
      retryable: false,
      context: { searched_id: 'bd-x' },
    });
  });

  it('takes only well-formed error envelopes as errors; anything else is a result', () => {
    // Optional fields may be null (br prints them so); the rest of the document is ignored.
    expect(
      classifyOutput('{"error":{"code":"X","message":"m","hint":null,"retryable":null},"extra":1}', '').error,
    ).toEqual({ code: 'X', message: 'm', hint: undefined, retryable: false, context: undefined });
    expect(classifyOutput('{"error":"gone","code":null}', '').error).toMatchObject({
      code: 'UNKNOWN',
      message: 'gone',
    });
    expect(classifyOutput('{"error":"gone","code":"ISSUE_NOT_FOUND"}', '').error?.code).toBe(
      'ISSUE_NOT_FOUND',
    );
    // A wrong type anywhere in the envelope: not br's error report, so it is a result document.
    for (const document of [
      { error: { code: 3, message: 'm' } },
      { error: { code: 'X' } },
      { error: { code: 'X', message: 'm', hint: 7 } },
      { error: { code: 'X', message: 'm', retryable: 'yes' } },
      { error: 'gone', hint: false },
      { error: 'gone', code: 4 },
      { error: null },
      { error: ['X'] },
    ]) {
      const classified = classifyOutput(JSON.stringify(document), '');
      expect(classified.error, JSON.stringify(document)).toBeUndefined();
      expect(classified.results, JSON.stringify(document)).toEqual([document]);
    }
    // An array is never an envelope, even of envelopes.
    expect(classifyOutput('[{"error":"gone"}]', '').error).toBeUndefined();
  });

  it("accepts bd's string error and unwraps bd's data envelope", () => {
    expect(classifyOutput('', '{"error":"no such issue","hint":"check the id"}').error).toMatchObject({
      code: 'UNKNOWN',
      message: 'no such issue',
      hint: 'check the id',
    });
    expect(classifyOutput('{"schema_version":1,"data":[{"id":"bd-1"}]}', '').results).toEqual([
      [{ id: 'bd-1' }],
    ]);
    expect(unwrapDataEnvelope({ data: 1, total: 2 })).toEqual({ data: 1, total: 2 });
  });

  it('ignores structured log records on stdout', () => {
    const stdout = '{"level":"INFO","target":"beads_rust","fields":{"message":"hi"}}\n[]\n';
    expect(classifyOutput(stdout, '').results).toEqual([[]]);
  });
});

describe('br shapes', () => {
  it('reads show rows with dep_type (before v0.1.8) and derives the parent from the parent-child edge', () => {
    const [detail] = showSchema.parse([
      {
        ...row,
        schema_version: 1,
        dependencies: [
          { id: 'bd-epic', title: 'Epic', status: 'open', priority: 1, dep_type: 'parent-child' },
          { id: 'bd-2', title: 'b', status: 'closed', priority: 2, dep_type: 'blocks' },
        ],
        comments: [{ id: '3', issue_id: 'bd-1x9', author: 'me', body: 'hello', created_at: row.created_at }],
      },
    ]);
    const bead = toDetail(detail!);
    expect(bead.parent).toBe('bd-epic');
    expect(bead.dependencies).toEqual([
      { id: 'bd-epic', title: 'Epic', status: 'open', priority: 1, dependency_type: 'parent-child' },
      { id: 'bd-2', title: 'b', status: 'closed', priority: 2, dependency_type: 'blocks' },
    ]);
    expect(bead.comments).toEqual([
      { id: 3, issue_id: 'bd-1x9', author: 'me', text: 'hello', created_at: row.created_at },
    ]);
    expect(bead.labels).toEqual([]);
  });

  it('reads a single show object as a one-element array', () => {
    expect(showSchema.parse({ ...row, labels: ['a'] })).toHaveLength(1);
  });

  it('reads list as a bare array (up to v0.1.29) and as an envelope (v0.1.30+)', () => {
    expect(listSchema.parse([row])).toHaveLength(1);
    const envelope = {
      issues: [row, { ...row, id: 'bd-2' }],
      total: 2,
      limit: 0,
      offset: 0,
      has_more: false,
    };
    expect(listSchema.parse(envelope).map((r) => r.id)).toEqual(['bd-1x9', 'bd-2']);
  });

  it('reads close as a bare array and as {closed, skipped}', () => {
    expect(closeSchema.parse([{ id: 'bd-1', status: 'closed' }])).toEqual({
      closed: [{ id: 'bd-1' }],
      skipped: [],
    });
    expect(closeSchema.parse({ closed: [], skipped: [{ id: 'bd-1', reason: 'already closed' }] })).toEqual({
      closed: [],
      skipped: [{ id: 'bd-1', reason: 'already closed' }],
    });
  });

  it('reads dep add status and tolerant priorities, and leaves unset fields out of a bead', () => {
    expect(depAddSchema.parse({ status: 'exists', issue_id: 'a', depends_on_id: 'b' })).toEqual({
      status: 'exists',
    });
    const bead = toBead(issueSchema.parse({ ...row, priority: 'P1', description: null, assignee: null }));
    expect(bead.priority).toBe(1);
    expect(Object.keys(bead)).not.toContain('description');
    expect(Object.keys(bead)).not.toContain('assignee');
  });

  it('rejects rows that miss what a bead needs', () => {
    expect(issueSchema.safeParse({ id: 'bd-1', title: 't' }).success).toBe(false);
  });
});

describe('versions and environment', () => {
  it('parses versions from JSON, bd envelopes and text, and gates features on them', () => {
    expect(parseBrVersion({ version: '0.1.12', build: 'x' })).toBe('0.1.12');
    expect(parseBrVersion({ data: { version: 'v0.2.19' } })).toBe('0.2.19');
    expect(parseBrVersion('br 0.2.19 (abc1234)\n')).toBe('0.2.19');
    expect(featuresOf('0.1.12')).toMatchObject({ readyParent: false, readyEpic: false });
    expect(featuresOf('0.1.13')).toMatchObject({ readyParent: true, readyEpic: false });
    expect(featuresOf('0.2.12')).toMatchObject({ readyParent: true, readyEpic: true });
    expect(featuresOf(undefined)).toMatchObject({ readyParent: false, version: 'unknown' });
  });

  it('pins br to the workspace, quiet and uncoloured, without the caller output-format overrides', () => {
    const given = {
      PATH: '/bin',
      BR_OUTPUT_FORMAT: 'toon',
      TOON_DEFAULT_FORMAT: 'toon',
      BEADS_DIR: '/elsewhere',
    };
    const env = brEnvironment(given, '/project/.beads');
    expect(env).toEqual({ PATH: '/bin', BEADS_DIR: '/project/.beads', RUST_LOG: 'error', NO_COLOR: '1' });
    expect(given.BR_OUTPUT_FORMAT).toBe('toon');
  });
});
