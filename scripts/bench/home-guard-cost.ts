// What the guard of the agent CLIs' files in HOME costs around each agent run (src/infra/
// home-instructions.ts): every watched file is read before the run and again after it, on the path
// between a bead's claim and its agent, then between its agent and its close. The bench's runs use an
// empty HOME; a user's holds Forge's own skills (installed in up to three folders) and often more.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { homeAgentConfig, readContents, restoreChanged } from '../../src/infra/home-instructions.js';
import type { Row } from './report.js';
import { summarize, type Summary } from './stats.js';
import { tempDir } from './support.js';

export interface HomeGuardCost {
  homes: { skills: number; filesPerSkill: number; files: number; ms: Summary; cpuMs: Summary }[];
}

/** The skills folders an agent CLI user may have, each holding every skill. */
const SKILL_FOLDERS = ['.claude/skills', '.codex/skills', '.agents/skills'];

export async function measureHomeGuardCost(options: {
  /** [skills, files per skill] for each home measured. */
  homes: [number, number][];
  rounds: number;
}): Promise<HomeGuardCost> {
  const dir = await tempDir('home-guard');
  try {
    const homes: HomeGuardCost['homes'] = [];
    for (const [index, [skills, filesPerSkill]] of options.homes.entries()) {
      const home = join(dir.path, `home-${index}`);
      for (const folder of SKILL_FOLDERS) {
        for (let skill = 0; skill < skills; skill += 1) {
          const at = join(home, folder, `skill-${skill}`);
          await mkdir(join(at, 'scripts'), { recursive: true });
          await writeFile(join(at, 'SKILL.md'), '# A skill\n\nWhat it does, and how.\n'.repeat(60));
          for (let file = 1; file < filesPerSkill; file += 1)
            await writeFile(join(at, 'scripts', `step-${file}.py`), 'print("step")\n'.repeat(40));
        }
      }
      await writeFile(join(home, '.claude', 'CLAUDE.md'), '# My rules\n');
      const config = homeAgentConfig({ HOME: home }, join(home, 'etc'));
      const ms: number[] = [];
      const cpuMs: number[] = [];
      let files = 0;
      for (let round = 0; round < options.rounds + 1; round += 1) {
        const cpu = process.cpuUsage();
        const started = performance.now();
        const before = await readContents(config);
        const restored = await restoreChanged(before);
        const took = performance.now() - started;
        const used = process.cpuUsage(cpu);
        if (restored.length > 0)
          throw new Error(`the guard put back what nothing changed: ${restored.join(', ')}`);
        files = before.files.size;
        // The first round warms the page cache and the functions: a runner does it on its first bead.
        if (round === 0) continue;
        ms.push(took);
        cpuMs.push((used.user + used.system) / 1000);
      }
      homes.push({ skills, filesPerSkill, files, ms: summarize(ms), cpuMs: summarize(cpuMs) });
    }
    return { homes };
  } finally {
    await dir.remove();
  }
}

/** The figure's rows; `ms` is the table's duration format. */
export function homeGuardRows(g: HomeGuardCost, ms: (value: number) => string): Row[] {
  return g.homes.map((home, index) => ({
    figure: index === 0 ? '13' : '',
    measure: `${index === 0 ? 'HOME guard around an agent run (read before, checked after), ' : ''}${home.skills} skills of ${home.filesPerSkill} file(s) in each of ${SKILL_FOLDERS.length} folders: ${home.files} files watched, median wall / CPU`,
    value: `${ms(home.ms.median)} / ${ms(home.cpuMs.median)}`,
    budget: '',
    verdict: '',
  }));
}
