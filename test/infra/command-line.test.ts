// The metric command split into argv without a shell, and refused when it needs one.
import { describe, expect, it } from 'vitest';
import { splitCommandLine } from '../../src/infra/command-line.js';

describe('splitCommandLine', () => {
  it.each([
    ['npm test -- --reporter=json', ['npm', 'test', '--', '--reporter=json']],
    ['  node   bench.js\t--runs 3 ', ['node', 'bench.js', '--runs', '3']],
    [`pytest -k 'not slow and fast'`, ['pytest', '-k', 'not slow and fast']],
    [`echo "a \\"quoted\\" word" ''`, ['echo', 'a "quoted" word', '']],
    [`grep 'it''s' x`, ['grep', 'its', 'x']],
    [`printf '$HOME ` + '`x`' + ` | ;'`, ['printf', '$HOME `x` | ;']],
    ['a\\ b c\\|d', ['a b', 'c|d']],
    ['vitest "src/**/*.test.ts"', ['vitest', 'src/**/*.test.ts']],
    ['env NODE_ENV=test npm test', ['env', 'NODE_ENV=test', 'npm', 'test']],
    ['node --flag=a=b x', ['node', '--flag=a=b', 'x']],
    // No glob or expansion a shell would make: passed as typed.
    ['[ -f x ]', ['[', '-f', 'x', ']']],
    ["cat 'sc[o]re.txt'", ['cat', 'sc[o]re.txt']],
    ['node -e {}', ['node', '-e', '{}']],
  ])('%s', (command, argv) => {
    expect(splitCommandLine(command)).toEqual({ ok: true, argv });
  });

  it.each([
    ['npm test > out.txt', /">" needs a shell/],
    ['npm test && echo ok', /"&" needs a shell/],
    ['echo $HOME', /"\$" needs a shell/],
    ['echo "$HOME"', /"\$" expansion needs a shell/],
    ['echo `id`', /"`" needs a shell/],
    ['ls src/*.ts', /"\*" would be a glob/],
    ['cat sc[o]re.txt', /"\[" would be a glob/],
    ['cat {a,b}.txt', /brace expansion/],
    ['echo x{1..3}', /brace expansion/],
    ['~/bin/metric', /home directory expansion/],
    ['NODE_ENV=test npm test', /write "env NODE_ENV=… <command>" instead/],
    ['echo "unterminated', /unterminated " quote/],
    ["echo 'unterminated", /unterminated ' quote/],
    ['   ', /empty/],
    ['trailing \\', /lone backslash/],
  ])('refuses %s', (command, reason) => {
    const result = splitCommandLine(command);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(reason);
  });
});
