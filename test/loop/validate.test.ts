// Table tests of the epic checks behind `forge-pack validate`: each row a small graph and what it must report.
import { describe, expect, it } from 'vitest';
import type { Bead, BeadDetail, EpicGraph } from '../../src/beads/types.js';
import {
  checkEpic,
  findCycles,
  hasErrors,
  SKILL_ROLES,
  type EpicCheckInput,
  type ValidationProblem,
} from '../../src/loop/validate/index.js';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ROOT } from '../support/cli.js';

interface Spec {
  status?: string;
  type?: string;
  labels?: string[];
  parent?: string;
  deps?: string[];
  reason?: string;
}

function bead(id: string, spec: Spec = {}): BeadDetail {
  return {
    id,
    title: id,
    status: spec.status ?? 'open',
    priority: 2,
    issue_type: spec.type ?? 'task',
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    labels: spec.labels ?? [],
    parent: spec.parent,
    close_reason: spec.reason,
    dependencies: [
      ...(spec.parent === undefined ? [] : [{ id: spec.parent, dependency_type: 'parent-child' }]),
      ...(spec.deps ?? []).map((dep) => ({ id: dep, dependency_type: 'blocks' })),
    ],
    dependents: [],
    comments: [],
  };
}

/** An epic E with children E.<n> (parent E unless given), beads outside, and ids the store lacks. */
function graph(
  children: Record<string, Spec>,
  outside: Record<string, Spec> = {},
  missing: string[] = [],
  epic: Spec = {},
): EpicGraph {
  return {
    epic: bead('E', { type: 'epic', ...epic }),
    beads: Object.entries(children).map(([id, spec]) => bead(id, { parent: 'E', ...spec })),
    outside: Object.entries(outside).map(([id, spec]) => bead(id, spec) as Bead),
    missing,
  };
}

function check(g: EpicGraph, extra: Partial<EpicCheckInput> = {}): ValidationProblem[] {
  return checkEpic({
    graph: g,
    storeKind: 'embedded',
    loop: false,
    configRoles: [],
    agentCommands: {},
    gates: [],
    missingGatePrograms: [],
    ...extra,
  });
}

/** [check, severity, subject, a piece of the message] */
type Expected = [string, string, string, string];
const summary = (problems: ValidationProblem[]) => problems.map((p) => [p.check, p.severity, p.subject]);

const CASES: { name: string; graph: EpicGraph; input?: Partial<EpicCheckInput>; expected: Expected[] }[] = [
  {
    name: 'a clean chain',
    graph: graph({ 'E.1': {}, 'E.2': { deps: ['E.1'] }, 'E.3': { status: 'closed' } }),
    expected: [],
  },
  {
    name: 'a cycle, named, with the bead that waits on it',
    graph: graph({ 'E.1': { deps: ['E.2'] }, 'E.2': { deps: ['E.1'] }, 'E.3': { deps: ['E.2'] } }),
    expected: [
      [
        'cycle',
        'error',
        'E.1',
        'E.1 → E.2 → E.1: these beads wait for each other and none ever runs; 1 more never run because of it: E.3',
      ],
    ],
  },
  {
    name: 'a bead that waits for itself',
    graph: graph({ 'E.1': { deps: ['E.1'] } }),
    expected: [['cycle', 'error', 'E.1', 'E.1 → E.1']],
  },
  {
    name: 'a closed bead ends a cycle',
    graph: graph({ 'E.1': { deps: ['E.2'], status: 'closed' }, 'E.2': { deps: ['E.1'] } }),
    expected: [],
  },
  {
    name: 'a dangling dependency, and what waits behind it',
    graph: graph({ 'E.1': { deps: ['bd-gone'] }, 'E.2': { deps: ['E.1'] } }, {}, ['bd-gone']),
    expected: [
      [
        'dangling',
        'error',
        'E.1',
        'depends on bd-gone (blocks), which the store does not hold: it never runs; 1 bead(s) never run because of it: E.2',
      ],
    ],
  },
  {
    name: 'a dangling dependency of a closed bead only warns',
    graph: graph({ 'E.1': { deps: ['bd-gone'], status: 'closed' } }, {}, ['bd-gone']),
    expected: [['dangling', 'warning', 'E.1', 'which the store does not hold']],
  },
  {
    name: 'a deferred blocker, naming it and the beads after',
    graph: graph({ 'E.1': { status: 'deferred' }, 'E.2': { deps: ['E.1'] }, 'E.3': { deps: ['E.2'] } }),
    expected: [
      [
        'unreachable',
        'error',
        'E.2',
        'E.2 never runs: it waits for E.1, which is deferred: no run takes it until it is reopened; 1 bead(s) never run because of it: E.3',
      ],
    ],
  },
  {
    name: 'a blocker outside the epic and in no epic',
    graph: graph({ 'E.1': { deps: ['bd-x'] } }, { 'bd-x': {} }),
    expected: [
      ['unreachable', 'error', 'E.1', 'bd-x, which is outside E and in no epic: no run will take it'],
    ],
  },
  {
    name: 'a question for a person outside the epic is intended: a warning',
    graph: graph({ 'E.1': { deps: ['bd-q'] } }, { 'bd-q': { labels: ['role:human'] } }),
    expected: [['unreachable', 'warning', 'E.1', 'bd-q, which is a question for a person']],
  },
  {
    name: 'a blocker in another epic warns; one in progress, or closed, is fine',
    graph: graph(
      { 'E.1': { deps: ['F.1'] }, 'E.2': { deps: ['bd-w'] }, 'E.3': { deps: ['bd-c'] } },
      { 'F.1': { parent: 'F' }, 'bd-w': { status: 'in_progress' }, 'bd-c': { status: 'closed' } },
    ),
    expected: [['unreachable', 'warning', 'E.1', 'in F: only a run of F closes it']],
  },
  {
    name: 'a ralph:failed blocker warns: the run tries it again',
    graph: graph({ 'E.1': { labels: ['ralph:failed'] }, 'E.2': { deps: ['E.1'] } }),
    expected: [['unreachable', 'warning', 'E.2', 'failed in an earlier run (ralph:failed)']],
  },
  {
    name: "a blocker closed as won't fix warns",
    graph: graph({ 'E.1': { status: 'closed', reason: "won't fix" }, 'E.2': { deps: ['E.1'] } }),
    expected: [['unreachable', 'warning', 'E.2', "closed as won't fix"]],
  },
  {
    name: 'a bead that waits for its own epic',
    graph: graph({ 'E.1': { deps: ['E'] } }),
    expected: [['unreachable', 'error', 'E.1', 'E, which is its own epic']],
  },
  {
    name: 'a bead that waits for an epic inside this one',
    graph: graph({ 'E.1': { type: 'epic' }, 'E.1.1': { parent: 'E.1' }, 'E.2': { deps: ['E.1'] } }),
    expected: [
      [
        'unreachable',
        'error',
        'E.2',
        'E.1, which is an epic inside E: ralph-loop closes only the epic it runs',
      ],
    ],
  },
  {
    name: 'beads under an epic that waits for a dead bead',
    graph: graph(
      { 'E.1': { type: 'epic', deps: ['bd-x'] }, 'E.1.1': { parent: 'E.1' }, 'E.1.2': { parent: 'E.1' } },
      { 'bd-x': { status: 'deferred' } },
    ),
    expected: [
      [
        'unreachable',
        'error',
        'E.1.1',
        '2 bead(s) never run: E.1.1, E.1.2 sit under a parent that waits for bd-x',
      ],
    ],
  },
  {
    name: 'a bead with status blocked',
    graph: graph({ 'E.1': { status: 'blocked' } }),
    expected: [['unreachable', 'warning', 'E.1', 'has status "blocked"']],
  },
  {
    name: 'labels br refuses, two roles, a bad role name, a bad iteration',
    graph: graph({
      'E.1': { labels: ['has space'] },
      'E.2': { labels: ['role:judge', 'role:doer'] },
      'E.3': { labels: ['role:Doer'] },
      'E.4': { labels: ['iter:two'] },
    }),
    expected: [
      ['label', 'error', 'E.1', 'is not one br accepts'],
      [
        'label',
        'error',
        'E.2',
        'has 2 role: labels (role:judge, role:doer); the runner reads only the first',
      ],
      ['label', 'error', 'E.3', 'a role is lower-case letters'],
      ['label', 'error', 'E.4', 'an iteration is a whole number'],
    ],
  },
  {
    name: 'roles: unknown is an error, a loop role outside a loop a warning, role:human inside a warning',
    graph: graph({
      'E.1': { labels: ['role:revewer'] },
      'E.2': { labels: ['role:arbiter'] },
      'E.3': { labels: ['role:human'] },
      'E.4': { labels: ['role:spec-clarify'] },
      'E.5': { labels: ['role:reviewer'] },
      'E.6': { labels: ['role:judge'] },
    }),
    input: { configRoles: ['reviewer'] },
    expected: [
      ['role', 'error', 'E.1', 'E.1 has role:revewer, which is not a role Forge knows'],
      ['role', 'warning', 'E.2', 'is a loop role, and this epic is not an autoresearch loop'],
      ['role', 'warning', 'E.3', 'is for a person, but it is inside the epic'],
    ],
  },
  {
    name: 'loop roles in a loop are known',
    graph: graph({ 'E.1': { labels: ['role:arbiter'] }, 'E.2': { labels: ['role:resume-strategist'] } }),
    input: { loop: true },
    expected: [],
  },
  {
    name: 'agents: an unknown one is an error; built-in and your own are fine; --agent makes it a warning',
    graph: graph({
      'E.1': { labels: ['agent:gpt-9'] },
      'E.2': { labels: ['agent:claude-opus'] },
      'E.3': { labels: ['agent:my-agent'] },
      'E.4': { labels: ['agent:gpt-9'], status: 'closed' },
    }),
    input: { agentCommands: { 'my-agent': ['my-agent'] } },
    expected: [['agent', 'error', 'E.1', 'E.1 has agent:gpt-9: unknown agent "gpt-9"']],
  },
  {
    name: 'agents overridden by --agent only warn',
    graph: graph({ 'E.1': { labels: ['agent:gpt-9'] } }),
    input: { agentOverride: true },
    expected: [['agent', 'warning', 'E.1', '(--agent overrides it in this run)']],
  },
  {
    name: 'gates: an unknown name, none beside a name, a known one',
    graph: graph({
      'E.1': { labels: ['gates:tset'] },
      'E.2': { labels: ['gates:none', 'gates:test'] },
      'E.3': { labels: ['gates:test'] },
    }),
    input: { gates: ['test', 'lint'] },
    expected: [
      [
        'gate',
        'error',
        'E.1',
        "E.1: the bead's gates: label names unknown gate tset; the configured gates are test, lint",
      ],
      ['gate', 'error', 'E.2', 'say both gates:none and gates:test'],
    ],
  },
  {
    name: 'a bad gates: label on a bead that runs no gates (a judge, or gates off) only warns',
    graph: graph({ 'E.1': { labels: ['gates:tset', 'role:judge'] }, 'E.2': { labels: ['gates:tset'] } }),
    input: { gates: ['test'], gatesOn: false },
    expected: [
      ['gate', 'warning', 'E.1', '(no gates run after this bead in a run)'],
      ['gate', 'warning', 'E.2', '(no gates run after this bead in a run)'],
    ],
  },
  {
    name: 'a missing gate program is only a warning when gates are off, or only loop roles would run it',
    graph: graph({ 'E.1': { labels: ['role:doer'] } }),
    input: { loop: true, gates: ['test'], missingGatePrograms: [{ name: 'test', program: 'nope' }] },
    expected: [['gate', 'warning', '.forge/config.json', 'gates.test']],
  },
  {
    name: 'a gate whose program is missing: an error when a bead here runs it, else a warning',
    graph: graph({ 'E.1': { labels: ['gates:lint'] } }),
    input: {
      gates: ['test', 'lint'],
      missingGatePrograms: [
        { name: 'test', program: 'no-such-test' },
        { name: 'lint', program: 'no-such-lint' },
      ],
    },
    expected: [
      ['gate', 'error', '.forge/config.json', 'gates.lint: its program "no-such-lint" is not there'],
      ['gate', 'warning', '.forge/config.json', 'gates.test'],
    ],
  },
];

describe('checkEpic', () => {
  it.each(CASES)('$name', ({ graph: g, input, expected }) => {
    const problems = check(g, input);
    expect(summary(problems)).toEqual(expected.map(([c, s, subject]) => [c, s, subject]));
    problems.forEach((problem, i) => {
      expect(problem.message).toContain(expected[i]![3]);
      expect(problem.fix.length).toBeGreaterThan(10);
    });
    expect(hasErrors(problems)).toBe(expected.some(([, severity]) => severity === 'error'));
  });

  it('says how to remove a dependency with br', () => {
    const [problem] = check(graph({ 'E.1': { deps: ['bd-gone'] } }, {}, ['bd-gone']), { storeKind: 'br' });
    expect(problem!.fix).toContain('br dep remove E.1 bd-gone');
  });
});

describe('findCycles', () => {
  it('finds each cycle once, from its smallest id, through a long chain without overflowing', () => {
    const edges = new Map<string, string[]>();
    for (let i = 0; i < 20_000; i += 1) edges.set(`n${i}`, [`n${i + 1}`]);
    edges.set('n20000', []);
    edges.set('a', ['b']);
    edges.set('b', ['c']);
    edges.set('c', ['a', 'd']);
    edges.set('d', ['d']);
    expect(findCycles(edges)).toEqual([['a', 'b', 'c'], ['d']]);
  });
});

describe('roles Forge knows', () => {
  it("include every role:<name> Forge's skills put on beads", async () => {
    const skills = join(ROOT, 'skills');
    const roles = new Set<string>();
    for (const name of await readdir(skills)) {
      const text = await readFile(join(skills, name, 'SKILL.md'), 'utf8').catch(() => '');
      for (const match of text.matchAll(/role:([a-z][a-z0-9-]*)/g)) roles.add(match[1]!);
    }
    const loop = ['doer', 'judge', 'arbiter', 'strategist', 'retrospective', 'resume-strategist'];
    expect([...roles].filter((role) => !SKILL_ROLES.includes(role) && !loop.includes(role))).toEqual([]);
  });
});
