// `forge-pack skills install|list|uninstall`: the packaged skills for Claude Code and Codex, without the
// checkout that install.sh needs (an npm install has only the package).
import type { Command } from 'commander';
import { AppError, ExitCode, UsageError } from '../infra/errors.js';
import { globals, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { printJson, say } from './output.js';
import type { SkillsReport, SkillTarget, TargetChoice } from './skills.js';

type Flags = TargetChoice;

function addTargetOptions(command: Command): Command {
  return command
    .option('--project', "this repository's .claude/skills and .agents/skills, not your user directories")
    .option('--claude', 'for Claude Code ($CLAUDE_CONFIG_DIR/skills or ~/.claude/skills)')
    .option('--codex', 'for Codex ($CODEX_HOME/skills or ~/.codex/skills, and ~/.agents/skills)');
}

async function targetsFor(
  deps: CliDeps,
  command: Command,
  flags: Flags,
  all: boolean,
): Promise<SkillTarget[]> {
  const { skillTargets } = await import('./skills.js');
  const repo = workingDir(deps, globals(command));
  const { targets } = await skillTargets(deps.env, repo, flags, { all });
  if (targets.length === 0) {
    throw new UsageError('Neither Claude Code (~/.claude) nor Codex (~/.codex) is set up for this user.', {
      hint: 'Say which agent the skills are for: forge-pack skills install --claude (or --codex).',
    });
  }
  return targets;
}

const COUNTED: Record<string, string> = {
  installed: 'new',
  updated: 'updated',
  unchanged: 'unchanged',
  removed: 'removed',
  kept: 'left in place (not Forge’s)',
  changed: 'left in place (changed since Forge placed them)',
  absent: 'not there',
};

function summary(report: SkillsReport['targets'][number]): string {
  const counts = new Map<string, number>();
  for (const skill of report.skills) counts.set(skill.action, (counts.get(skill.action) ?? 0) + 1);
  return [...counts].map(([action, n]) => `${n} ${COUNTED[action] ?? action}`).join(', ');
}

export function defineSkillsCommand(skills: Command, deps: CliDeps): void {
  addTargetOptions(skills.command('install'))
    .description('copy the packaged skills where the agents read them (again: updates them; idempotent)')
    .action(async (flags: Flags, command: Command) => {
      const { installSkills } = await import('./skills.js');
      const targets = await targetsFor(deps, command, flags, false);
      const outcome = await installSkills(targets, { env: deps.env });
      if (!outcome.ok) {
        throw new AppError(
          `These paths exist and were not placed by Forge; nothing was changed: ${outcome.conflicts.join(', ')}`,
          {
            exitCode: ExitCode.failure,
            hint: 'Move them away (they may be your own skills of the same name), then run forge-pack skills install again.',
          },
        );
      }
      if (globals(command).json) printJson(deps, outcome.report);
      else {
        for (const target of outcome.report.targets)
          say(deps, `Skills for ${target.agent} in ${target.dir}: ${summary(target)}.`);
        say(
          deps,
          `Recorded in ${outcome.report.manifest}; forge-pack skills uninstall (or uninstall.sh) removes them.`,
        );
      }
    });

  addTargetOptions(skills.command('list'))
    .description(
      'the packaged skills and, for each place, whether it holds them current, outdated or not at all',
    )
    .action(async (flags: Flags, command: Command) => {
      const { listSkills } = await import('./skills.js');
      const targets = await targetsFor(deps, command, flags, true);
      const listed = await listSkills(targets);
      if (globals(command).json) {
        printJson(deps, { targets: targets.map((t) => t.dir), skills: listed });
        return;
      }
      deps.stdout.write(`${['skill', ...targets.map((t) => t.dir)].join('\t')}\n`);
      for (const skill of listed)
        deps.stdout.write(`${[skill.name, ...skill.targets.map((t) => t.state)].join('\t')}\n`);
    });

  addTargetOptions(skills.command('uninstall'))
    .description('remove the skills Forge placed (never a directory without its marker file)')
    .action(async (flags: Flags, command: Command) => {
      const { uninstallSkills } = await import('./skills.js');
      const targets = await targetsFor(deps, command, flags, true);
      const report = await uninstallSkills(targets, { env: deps.env });
      if (globals(command).json) printJson(deps, report);
      else
        for (const target of report.targets)
          say(deps, `Skills for ${target.agent} in ${target.dir}: ${summary(target)}.`);
    });

  skills.addHelpText(
    'after',
    `
Examples:
  forge-pack skills install                  # for each agent set up here (~/.claude, ~/.codex)
  forge-pack skills install --project --claude   # into this repository's .claude/skills
  forge-pack skills list --json
  forge-pack skills uninstall

Each skill is a directory with SKILL.md and Forge's marker file .forge-skill; what is placed is recorded
in install.sh's manifest (FORGE_STATE_DIR, default ~/.local/share/forge/install-manifest.txt), so
uninstall.sh removes it too. A directory of the same name that Forge did not place stops the install.`,
  );
}
