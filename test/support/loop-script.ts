// The scripted agent's rules that play a loop's agent roles in end-to-end tests of the built CLIs:
// a doer writing one value, a strategist stamping the next cycle (or the retrospective once the loop
// ended), a retrospective writing its notes. Steps run as argv, never through a shell.
import { BIN } from './cli.js';

/** A forge-pack argv for a strategist's run step (absolute paths, the embedded store). */
export const forgeArgv = (dir: string): string[] => [
  process.execPath,
  BIN['forge-pack'],
  '-C',
  dir,
  '--store',
  'embedded',
];

/** The doer of iteration `iter` writes `value` to src/value.txt and names it as its hypothesis. */
export const doer = (iter: number, value: string) => ({
  when: { role: 'doer', iter },
  steps: [{ write: 'src/value.txt', content: `${value}\n` }, { say: `HYPOTHESIS: ${value} is better` }],
});

/** A strategist that writes a directive and stamps the next cycle through `forge-pack stamp`. */
export const stampNext = (dir: string, directive = 'Try another value.') => ({
  when: { role: 'strategist' },
  steps: [
    { write: '.autoresearch/directives/directive-{{next_iter}}.md', content: `${directive}\n` },
    {
      run: [
        ...forgeArgv(dir),
        'stamp',
        '--epic',
        '{{epic}}',
        '--iter',
        '{{next_iter}}',
        '--directive-file',
        `${dir}/.autoresearch/directives/directive-{{next_iter}}.md`,
      ],
    },
    { say: 'stamped' },
  ],
});

/** Once the loop ended: the strategist stamps the retrospective, which writes `notes`. List before stampNext. */
export const retrospectiveRules = (dir: string, notes = '# What we learned') => [
  {
    when: { role: 'strategist', exists: '.autoresearch/terminal-signal.json' },
    steps: [{ run: [...forgeArgv(dir), 'stamp', '--epic', '{{epic}}', '--retrospective'] }, { say: 'done' }],
  },
  {
    when: { role: 'retrospective' },
    steps: [{ write: '.autoresearch/retrospective.md', content: `${notes}\n` }, { say: 'written' }],
  },
];
