// The lazily loaded commands: what a program's --help lists for each, and the one import that defines it.
import type { LazyCommandSpec } from './lazy-command.js';

export const INIT_COMMAND: LazyCommandSpec = {
  name: 'init',
  description: 'set this repo up for Forge: .forge/config.json, .forge/.gitignore and the bead store',
  usage: '[options]',
  load: async () => (await import('./init-command.js')).defineInitCommand,
};

export const DOCTOR_COMMAND: LazyCommandSpec = {
  name: 'doctor',
  description:
    "check node, the program's code cache, git, br, agent CLIs, containment, skills, the bead store, configs, locks and loops",
  usage: '[options]',
  load: async () => (await import('./doctor-command.js')).defineDoctorCommand,
};

export const LOOP_COMMAND: LazyCommandSpec = {
  name: 'loop',
  description:
    'create an autoresearch loop: workspace, epic, baseline and the first cycle of beads; prints the epic id',
  usage: '[options] <subject>',
  load: async () => (await import('./loop-command.js')).defineLoopCommand,
};

export const PIPELINE_COMMAND: LazyCommandSpec = {
  name: 'pipeline',
  description:
    'create a pipeline of loops from a JSON file: a parent epic whose stage beads run one after another; prints the epic id',
  usage: '<file>',
  load: async () => (await import('./pipeline-command.js')).definePipelineCommand,
};

export const STAMP_COMMAND: LazyCommandSpec = {
  name: 'stamp',
  description: "stamp a loop's next beads: an iteration, the retrospective, or a question for the user",
  usage: '[options]',
  load: async () => (await import('./stamp-command.js')).defineStampCommand,
};

export const VALIDATE_COMMAND: LazyCommandSpec = {
  name: 'validate',
  description:
    "check epics' bead graphs before a run: cycles, dangling dependencies, beads that can never run, unknown roles, agents and gates, labels, loops and their templates",
  usage: '[epic-ids...]',
  load: async () => (await import('./validate-command.js')).defineValidateCommand,
};

export const BEADS_COMMAND: LazyCommandSpec = {
  name: 'beads',
  description:
    "work with beads in the active store (br when installed, else the embedded .beads/issues.jsonl); br's vocabulary and --json shapes",
  usage: '',
  load: async () => (await import('./beads-commands.js')).defineBeadsCommand,
};

export const WORKER_COMMAND: LazyCommandSpec = {
  name: 'worker',
  description:
    "take bead attempts off a Redis queue (--redis <url>; ralph-loop --executor queue) and run them with this machine's agents; pushes results to the job's git remote",
  // As commander lists the loaded command (its term ignores .usage()): the help is the same either way.
  usage: '[options]',
  load: async () => (await import('./worker-command.js')).defineWorkerCommand,
};

export const SKILLS_COMMAND: LazyCommandSpec = {
  name: 'skills',
  description: 'install, list or remove the Forge skills for Claude Code and Codex (from this package)',
  usage: '',
  load: async () => (await import('./skills-command.js')).defineSkillsCommand,
};

export const STATUS_COMMAND: LazyCommandSpec = {
  name: 'status',
  description:
    "where an epic stands (works while it runs): a loop's scores, phase, cost and last iterations; a plain epic's beads, live bead, last run and failures",
  usage: '[options] <epic-id>',
  load: async () => (await import('./status-command.js')).defineStatusCommand,
};

export const ONCE_COMMAND: LazyCommandSpec = {
  name: 'once',
  description: 'run exactly one bead through the same machinery (lock, retries, events), then stop',
  usage: '[options] <bead-id>',
  load: async () => (await import('./once-command.js')).defineOnceCommand,
};

export const STOP_COMMAND: LazyCommandSpec = {
  name: 'stop',
  description: 'ask the running loop of an epic to stop after its current bead (refused to its own agents)',
  usage: '<epic-id>',
  load: async () => (await import('./stop-command.js')).defineStopCommand,
};

export const LOGS_COMMAND: LazyCommandSpec = {
  name: 'logs',
  description:
    'show the events of the latest run of an epic, or the transcript of one bead; --follow watches a live run',
  usage: '[options] <epic-id> [bead-id]',
  load: async () => (await import('./logs-command.js')).defineLogsCommand,
};

export const RESUME_COMMAND: LazyCommandSpec = {
  name: 'resume',
  description: "fold the user's answer into a waiting loop, then run it on",
  usage: '[options] <epic-id>',
  load: async () => (await import('./resume-command.js')).defineResumeCommand,
};

export const SPEC_COMMAND: LazyCommandSpec = {
  name: 'spec',
  description:
    "read and move a spec's readiness state machine: status, record what a phase produced, advance (refused by a named rule)",
  usage: '',
  load: async () => (await import('./spec-command.js')).defineSpecCommand,
};

export const REPORT_COMMAND: LazyCommandSpec = {
  name: 'report',
  description:
    "the morning report: one HTML file (no network) with a loop's scores, decisions, cost and hypotheses, or a plain epic's beads",
  usage: '[options] <epic-id>',
  load: async () => (await import('./report-command.js')).defineReportCommand,
};

export const DASHBOARD_COMMAND: LazyCommandSpec = {
  name: 'dashboard',
  description: "a read-only local page (127.0.0.1) of the repo's epics and loops, live while they run",
  usage: '[options]',
  load: async () => (await import('./dashboard-command.js')).defineDashboardCommand,
};
