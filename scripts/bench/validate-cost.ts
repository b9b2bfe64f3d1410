// What the check before every run costs: `validateEpics` on an epic of a few hundred beads, in process,
// on the embedded store and through the fake br (with the br calls it makes), and the whole
// `forge-pack validate` process on the embedded store.
import { join } from 'node:path';
import { createBrStore } from '../../src/beads/br/index.js';
import { createEmbeddedStore } from '../../src/beads/embedded/index.js';
import { forgeConfigSchema } from '../../src/cli/forge-config.js';
import { validateEpics } from '../../src/cli/validate-epic.js';
import type { Row } from './report.js';
import { brEnv, countBrCalls, seedEmbeddedEpic, seedFakeBrEpic } from './seed.js';
import { summarize, type Summary } from './stats.js';
import { BIN, cleanEnv, expectSuccess, NODE, runTimed, tempDir } from './support.js';
import { diskLoopFiles } from '../../src/infra/loop-files.js';

export interface ValidateCost {
  beads: number;
  /** validateEpics in process, per check. */
  embeddedMs: Summary;
  brMs: Summary;
  /** br calls one check makes. */
  brCallsPerCheck: number;
  /** `forge-pack validate <epic>` as a process (Node start included), embedded store. */
  processMs: Summary;
  /** `forge-pack --version`: the process floor the figure above includes. */
  versionMs: Summary;
}

export async function measureValidateCost(options: { beads: number; rounds: number }): Promise<ValidateCost> {
  const config = forgeConfigSchema.parse({});
  const dir = await tempDir('forge-bench-validate-');
  try {
    const embedded = await seedEmbeddedEpic(dir.path, options.beads);
    const store = createEmbeddedStore({ cwd: dir.path, actor: 'bench' });
    const check = { repo: dir.path, store, config, env: {}, files: diskLoopFiles() };
    const embeddedMs = await timeRounds(options.rounds, async () => {
      const report = await validateEpics([embedded.epicId], check);
      if (report.epics[0]?.beads !== options.beads) throw new Error('validate did not see every bead');
    });

    const seeded = await seedFakeBrEpic(options.beads);
    const env = brEnv(seeded.workspace);
    const brStore = createBrStore({ cwd: seeded.workspace.root, env });
    const brCheck = { repo: seeded.workspace.root, store: brStore, config, env, files: diskLoopFiles() };
    await validateEpics([seeded.epicId], brCheck); // probes br's version once, as a run does
    const before = (await countBrCalls(seeded.workspace)).total;
    const brMs = await timeRounds(options.rounds, async () => {
      await validateEpics([seeded.epicId], brCheck);
    });
    // timeRounds checks once more than `rounds` (its warm-up).
    const brCallsPerCheck = ((await countBrCalls(seeded.workspace)).total - before) / (options.rounds + 1);
    await seeded.workspace.cleanup();

    const procEnv = cleanEnv(join(dir.path, 'home'));
    const processMs = await timeRounds(options.rounds, async () => {
      expectSuccess(
        await runTimed(NODE, [BIN.forgePack, '--store', 'embedded', 'validate', embedded.epicId], {
          cwd: dir.path,
          env: procEnv,
        }),
        'forge-pack validate',
      );
    });
    const versionMs = await timeRounds(options.rounds, async () => {
      expectSuccess(
        await runTimed(NODE, [BIN.forgePack, '--version'], { cwd: dir.path, env: procEnv }),
        'forge-pack --version',
      );
    });
    return { beads: options.beads, embeddedMs, brMs, brCallsPerCheck, processMs, versionMs };
  } finally {
    await dir.remove();
  }
}

async function timeRounds(rounds: number, run: () => Promise<void>): Promise<Summary> {
  await run(); // warm: modules loaded, caches filled, as in a real run's second check
  const samples: number[] = [];
  for (let i = 0; i < rounds; i += 1) {
    const started = performance.now();
    await run();
    samples.push(performance.now() - started);
  }
  return summarize(samples);
}

/** The figure's rows; `ms` is the table's duration format (passed in, so this module needs no value from report.ts). */
export function validateRows(v: ValidateCost, ms: (value: number) => string): Row[] {
  return [
    {
      figure: '7',
      measure: `validate before a run, ${v.beads} beads: embedded / fake br (in process, median)`,
      value: `${ms(v.embeddedMs.median)} / ${ms(v.brMs.median)} (${v.brCallsPerCheck} br calls)`,
      budget: '',
      verdict: '',
    },
    {
      figure: '',
      measure: 'forge-pack validate as a process, embedded / forge-pack --version',
      value: `${ms(v.processMs.median)} / ${ms(v.versionMs.median)}`,
      budget: '',
      verdict: '',
    },
  ];
}
