// Which command lines the executable's short status path takes, and which it leaves to commander.
import { describe, expect, it } from 'vitest';
import { parseStatusArgs } from '../../src/cli/status-shortcut.js';

describe('the short status path', () => {
  it.each([
    [['status', 'bd-1'], { epicId: 'bd-1', options: {}, flags: {} }],
    [
      ['--store', 'embedded', 'status', 'bd-1', '--json'],
      { epicId: 'bd-1', options: { store: 'embedded', json: true }, flags: {} },
    ],
    [
      ['status', '--json', 'bd-1', '--ascii', '--beads', '--workspace', 'w'],
      { epicId: 'bd-1', options: { json: true }, flags: { ascii: true, beads: true, workspace: 'w' } },
    ],
    [
      ['-C', 'repo', 'status', 'bd-1', '--actor=me', '--store=br', '--workspace=w', '--debug'],
      {
        epicId: 'bd-1',
        options: { cwd: 'repo', actor: 'me', store: 'br', debug: true },
        flags: { workspace: 'w' },
      },
    ],
    [['status', 'bd-1', '--cwd', 'x'], { epicId: 'bd-1', options: { cwd: 'x' }, flags: {} }],
  ])('runs %j itself', (args, expected) => {
    expect(parseStatusArgs(args)).toEqual(expected);
  });

  it.each([
    ['another command', ['run', 'bd-1']],
    ['an epic as the first word', ['bd-1', 'status']],
    ['no epic', ['status']],
    ['no epic but a flag', ['status', '--json']],
    ['two epics', ['status', 'bd-1', 'bd-2']],
    ['an empty epic', ['status', '']],
    ['help', ['status', 'bd-1', '--help']],
    ['-h', ['status', '-h']],
    ['the version', ['--version', 'status', 'bd-1']],
    ['an unknown flag', ['status', 'bd-1', '--bogus']],
    ['a short flag commander may bundle', ['status', 'bd-1', '-Cx']],
    ['a store commander refuses', ['--store', 'sqlite', 'status', 'bd-1']],
    ['a store commander refuses, with =', ['--store=sqlite', 'status', 'bd-1']],
    ['a value that looks like a flag', ['status', 'bd-1', '--workspace', '--json']],
    ['a missing value', ['status', 'bd-1', '--actor']],
    ['an empty value', ['status', 'bd-1', '--actor=']],
    ['a repeated flag', ['status', 'bd-1', '--json', '--json']],
    ['-C and --cwd both', ['-C', 'a', 'status', 'bd-1', '--cwd', 'b']],
    ["status's own flag before status", ['--ascii', 'status', 'bd-1']],
    ['a value on a switch', ['status', 'bd-1', '--json=yes']],
    ['the end of options', ['status', '--', 'bd-1']],
  ])('leaves %s to commander', (_name, args) => {
    expect(parseStatusArgs(args)).toBeUndefined();
  });
});
