// Lock files as Forge reads them: one parser per kind of lock, and one rule for a holder that is gone.
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { isOwnerLive, parseLockRecord, parseStoreLockHolder } from '../../src/infra/lock-record.js';

const runner = { pid: 42, host: 'h', started_at: 't', epic: 'bd-1', run_id: 'r' };

describe('parseLockRecord', () => {
  it.each([
    {
      name: 'a full record',
      text: JSON.stringify({ ...runner, bead: 'bd-1.2', agent_pid: 43 }),
      parsed: { ...runner, bead: 'bd-1.2', agent_pid: 43 },
    },
    {
      name: 'no started_at: unknown, not unreadable',
      text: JSON.stringify({ ...runner, started_at: undefined }),
      parsed: { ...runner, started_at: '' },
    },
    { name: 'unknown keys are dropped', text: JSON.stringify({ ...runner, later: 1 }), parsed: runner },
    {
      name: "a parallel run's beads in flight",
      text: JSON.stringify({ ...runner, running: ['bd-1.2', 'bd-1.3'] }),
      parsed: { ...runner, running: ['bd-1.2', 'bd-1.3'] },
    },
    {
      name: 'the runs whose work it took on',
      text: JSON.stringify({ ...runner, recovered: ['r2', 'r1'] }),
      parsed: { ...runner, recovered: ['r2', 'r1'] },
    },
    {
      name: 'a list of recovered runs that is not one costs only the list',
      text: JSON.stringify({ ...runner, recovered: 'r2' }),
      parsed: runner,
    },
    {
      name: 'a running list that is not a list of ids costs only the list',
      text: JSON.stringify({ ...runner, bead: 'bd-1.2', running: ['bd-1.2', 7] }),
      parsed: { ...runner, bead: 'bd-1.2' },
    },
    {
      name: 'an older record: a start that is not text, no pid starts, no live bead',
      text: JSON.stringify({ pid: 42, host: 'h', started_at: 1700000000, epic: 'bd-1', run_id: 'r' }),
      parsed: { ...runner, started_at: '' },
    },
    {
      name: 'every optional field, checked and kept',
      text: JSON.stringify({
        ...runner,
        pid_start: 9,
        bead: 'bd-1.2',
        bead_started_at: 'u',
        agent_pid: 43,
        agent_pid_start: 10,
      }),
      parsed: {
        ...runner,
        pid_start: 9,
        bead: 'bd-1.2',
        bead_started_at: 'u',
        agent_pid: 43,
        agent_pid_start: 10,
      },
    },
    { name: 'a bead that is not text', text: JSON.stringify({ ...runner, bead: 5 }), parsed: undefined },
    {
      name: 'a pid start that is not whole',
      text: JSON.stringify({ ...runner, pid_start: 1.5 }),
      parsed: undefined,
    },
    { name: 'a null agent pid', text: JSON.stringify({ ...runner, agent_pid: null }), parsed: undefined },
    {
      name: 'an epic that is not text',
      text: JSON.stringify({ ...runner, epic: ['bd-1'] }),
      parsed: undefined,
    },
    { name: 'an array', text: JSON.stringify([runner]), parsed: undefined },
    { name: 'torn JSON', text: '{"pid": 42, "host"', parsed: undefined },
    { name: 'empty', text: '', parsed: undefined },
    { name: 'not an object', text: '42', parsed: undefined },
    { name: 'a pid that is a string', text: JSON.stringify({ ...runner, pid: '42' }), parsed: undefined },
    {
      name: 'a pid of 0 (would signal our own group)',
      text: JSON.stringify({ ...runner, pid: 0 }),
      parsed: undefined,
    },
    { name: 'a negative agent pid', text: JSON.stringify({ ...runner, agent_pid: -5 }), parsed: undefined },
    { name: 'no run id', text: JSON.stringify({ ...runner, run_id: undefined }), parsed: undefined },
    {
      name: 'a store lock is not a runner lock',
      text: JSON.stringify({ pid: 1, host: 'h', token: 'x' }),
      parsed: undefined,
    },
  ])('$name', ({ text, parsed }) => {
    expect(parseLockRecord(text)).toEqual(parsed);
  });
});

describe('parseStoreLockHolder', () => {
  it.each([
    {
      text: '{"pid":1,"host":"h","started_at":"t","token":"k"}',
      parsed: { pid: 1, host: 'h', started_at: 't', token: 'k' },
    },
    { text: '{"pid":1,"host":"h","token":"k"}\n', parsed: { pid: 1, host: 'h', started_at: '', token: 'k' } },
    { text: '{"pid":1,"host":"h"}', parsed: undefined },
    { text: '{"pid":1,"host":"h","token":7}', parsed: undefined },
    {
      text: '{"pid":1,"host":"h","token":"k","pid_start":5,"epic":"e"}',
      parsed: { pid: 1, host: 'h', started_at: '', token: 'k', pid_start: 5 },
    },
    {
      text: '{"pid":1,"host":"h","token":"k","pid_ns":"pid:[4026532999]"}',
      parsed: { pid: 1, host: 'h', started_at: '', token: 'k', pid_ns: 'pid:[4026532999]' },
    },
    { text: '{"pid":1,"host":"h","token":"k","pid_ns":7}', parsed: undefined },
    { text: '{"pid":1.5,"host":"h","token":"k"}', parsed: undefined },
    { text: '', parsed: undefined },
  ])('$text', ({ text, parsed }) => {
    expect(parseStoreLockHolder(text)).toEqual(parsed);
  });
});

describe('isOwnerLive', () => {
  const here = hostname();
  it.each<{
    name: string;
    owner: { pid: number; host: string; pid_ns?: string };
    alive: number[];
    live: boolean;
  }>([
    { name: 'this host, process running', owner: { pid: 7, host: here }, alive: [7], live: true },
    { name: 'this host, process gone', owner: { pid: 7, host: here }, alive: [], live: false },
    { name: 'another host, whatever its pid', owner: { pid: 7, host: 'elsewhere' }, alive: [], live: true },
    {
      name: 'another PID namespace here, whatever its pid',
      owner: { pid: 7, host: here, pid_ns: 'pid:[4026532999]' },
      alive: [],
      live: true,
    },
    {
      name: 'this PID namespace, process gone',
      owner: { pid: 7, host: here, pid_ns: 'pid:[4026531836]' },
      alive: [],
      live: false,
    },
  ])('$name', ({ owner, alive, live }) => {
    expect(
      isOwnerLive(
        { ...owner, started_at: '' },
        here,
        undefined,
        (pid) => alive.includes(pid),
        'pid:[4026531836]',
      ),
    ).toBe(live);
  });
});
