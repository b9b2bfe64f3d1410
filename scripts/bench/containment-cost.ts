// Figure 1b's containment share: the no-op agent started as the runner starts it, in a PID namespace of
// its own (unshare, then a shell as the namespace's process 1: src/infra/containment.ts), against the
// same agent started directly, as the floor starts it; the two alternate. This is a guarantee the floor
// does not give (nothing an agent starts outlives it), paid once per bead; the row says how much of the
// runner's excess per bead it is.
import type { Command } from '../../src/infra/process.js';
import { containCommand } from '../../src/infra/containment.js';
import { summarize, type Summary } from './stats.js';
import { expectSuccess, NODE, runTimed } from './support.js';

export interface ContainmentCost {
  /** False where this machine gives agents no namespace (then both rows are direct starts). */
  contained: boolean;
  direct: Summary;
  inNamespace: Summary;
}

export async function measureContainmentCost(options: {
  agentScript: string;
  cwd: string;
  env: Record<string, string>;
  rounds: number;
}): Promise<ContainmentCost> {
  const direct: Command = { file: NODE, args: [options.agentScript] };
  const launch = await containCommand(direct, options.env, options.cwd);
  const samples = { direct: [] as number[], inNamespace: [] as number[] };
  const run = async (command: Command, into: number[]) => {
    const timed = await runTimed(command.file, command.args, {
      cwd: options.cwd,
      env: options.env,
      input: 'a bead',
    });
    into.push(expectSuccess(timed, 'the no-op agent').ms);
  };
  for (let round = 0; round < options.rounds; round += 1) {
    // Each goes first in every other round: what warms up for the second counts against neither.
    if (round % 2 === 0) {
      await run(direct, samples.direct);
      await run(launch.command, samples.inNamespace);
    } else {
      await run(launch.command, samples.inNamespace);
      await run(direct, samples.direct);
    }
  }
  return {
    contained: launch.contained,
    direct: summarize(samples.direct),
    inNamespace: summarize(samples.inNamespace),
  };
}
