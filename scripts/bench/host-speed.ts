// How fast this host starts processes, measured once before the figures. Most figures start Node
// processes (ralph-loop, the fake br, no-op agents) and git, Forge's side and the floor's alike: on a
// host where a bare Node start takes 50 ms instead of 20 (seen between two days on the same kind of
// machine here), every such figure is slower and each ratio moves with it. The line says which kind of
// host a set of figures comes from.
import { tmpdir } from 'node:os';
import { NODE, cleanEnv, expectSuccess, runTimed } from './support.js';
import { summarize, type Summary } from './stats.js';

export interface HostSpeed {
  /** `node -e 0` with the clean environment, spawn to exit (ms). */
  nodeStart: Summary;
  /** `true` from PATH, spawn to exit (ms): the cost of a process start alone. */
  spawn: Summary;
}

/** `samples` starts of each, interleaved, after one of each not counted (cold caches). */
export async function measureHostSpeed(samples = 15): Promise<HostSpeed> {
  const options = { cwd: tmpdir(), env: cleanEnv(tmpdir()), timeoutMs: 30_000 };
  const node: number[] = [];
  const spawned: number[] = [];
  for (let round = 0; round <= samples; round += 1) {
    const started = expectSuccess(await runTimed(NODE, ['-e', '0'], options), 'node -e 0');
    const ran = expectSuccess(await runTimed('true', [], options), 'true');
    if (round === 0) continue;
    node.push(started.ms);
    spawned.push(ran.ms);
  }
  return { nodeStart: summarize(node), spawn: summarize(spawned) };
}

/** The line printed under the load average. */
export function hostSpeedNote(speed: HostSpeed): string {
  return (
    `process starts here: a bare Node ${speed.nodeStart.median.toFixed(1)} ms, \`true\` ` +
    `${speed.spawn.median.toFixed(1)} ms (medians of ${speed.nodeStart.n}): ` +
    'figures that start processes scale with these'
  );
}
