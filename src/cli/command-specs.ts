// The lazily loaded commands: what a program's --help lists for each, and the one import that defines it.
import type { LazyCommandSpec } from './lazy-command.js';

export const LOOP_COMMAND: LazyCommandSpec = {
  name: 'loop',
  description:
    'create an autoresearch loop: workspace, epic, baseline and the first cycle of beads; prints the epic id',
  usage: '[options] <subject>',
  load: async () => (await import('./loop-command.js')).defineLoopCommand,
};

export const STAMP_COMMAND: LazyCommandSpec = {
  name: 'stamp',
  description: "stamp a loop's next beads: an iteration, the retrospective, or a question for the user",
  usage: '[options]',
  load: async () => (await import('./stamp-command.js')).defineStampCommand,
};

export const STATUS_COMMAND: LazyCommandSpec = {
  name: 'status',
  description:
    "where an epic stands (works while it runs): a loop's scores, phase, cost and last iterations; a plain epic's beads, live bead, last run and failures",
  usage: '[options] <epic-id>',
  load: async () => (await import('./status-command.js')).defineStatusCommand,
};

export const RESUME_COMMAND: LazyCommandSpec = {
  name: 'resume',
  description: "fold the user's answer into a waiting loop, then run it on",
  usage: '[options] <epic-id>',
  load: async () => (await import('./resume-command.js')).defineResumeCommand,
};
