// Which gates a bead runs, from its labels and the configured gate names: one line per case.
import { describe, expect, it } from 'vitest';
import { gatesForBead, type GateSelection } from '../../src/loop/gates.js';

const configured = ['test', 'lint', 'typecheck', 'cargo-test'];

interface Case {
  name: string;
  labels: string[];
  configured?: string[];
  expected: GateSelection | { error: RegExp };
}

// prettier-ignore
const cases: Case[] = [
  { name: 'no gates label runs every configured gate, in config order', labels: ['agent:codex', 'role:doer'], expected: { gates: configured } },
  { name: 'no gates configured runs none', labels: [], configured: [], expected: { gates: [] } },
  { name: 'gates:none runs none', labels: ['gates:none'], expected: { gates: [] } },
  { name: 'one gates: label runs that gate', labels: ['gates:lint'], expected: { gates: ['lint'] } },
  { name: 'several gates: labels run those, in config order', labels: ['gates:lint', 'gates:test'], expected: { gates: ['test', 'lint'] } },
  { name: 'a comma-joined label runs each name', labels: ['gates:typecheck,test'], expected: { gates: ['test', 'typecheck'] } },
  { name: 'a name given twice runs once', labels: ['gates:test', 'gates:test,lint'], expected: { gates: ['test', 'lint'] } },
  { name: 'a hyphenated gate name is found', labels: ['gates:cargo-test'], expected: { gates: ['cargo-test'] } },
  { name: 'gates:none twice is still none', labels: ['gates:none', 'gates:none'], expected: { gates: [] } },
  { name: 'an unknown name is an error naming it and the known ones', labels: ['gates:tests'], expected: { error: /unknown gate tests; the configured gates are test, lint, typecheck, cargo-test/ } },
  { name: 'several unknown names are all named', labels: ['gates:e2e,test,bench'], expected: { error: /unknown gates e2e, bench;/ } },
  { name: 'a name with no gates configured says so and how to fix', labels: ['gates:test'], configured: [], expected: { error: /unknown gate test; no gates are configured in \.forge\/config\.json \(fix the label/ } },
  { name: 'an empty name is an error', labels: ['gates:'], expected: { error: /an empty gate name/ } },
  { name: 'none beside a name is an error', labels: ['gates:none', 'gates:test'], expected: { error: /both gates:none and gates:test; remove one/ } },
  { name: 'labels that only look alike are ignored', labels: ['gate:none', 'xgates:none', 'GATES:none'], expected: { gates: configured } },
];

describe('gatesForBead', () => {
  it.each(cases)('$name', ({ labels, configured: names, expected }) => {
    const answer = gatesForBead(labels, names ?? configured);
    if ('error' in expected && expected.error instanceof RegExp) {
      expect(answer).toEqual({ error: expect.stringMatching(expected.error) as unknown });
    } else {
      expect(answer).toEqual(expected);
    }
  });
});
