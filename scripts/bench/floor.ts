// The floor of the minimal safe protocol: per bead one `br ready`, one claim, one no-op agent spawn and one
// `br close`, back to back, from the smallest loop that can do it. Forge's runner is compared with this.
import { beadPrompt } from '../../src/loop/agent-executor.js';
import type { Bead } from '../../src/beads/types.js';
import { expectSuccess, NODE, runTimed } from './support.js';

export interface FloorOptions {
  cwd: string;
  env: Record<string, string>;
  beadsDir: string;
  epicId: string;
  agentScript: string;
  /** Stop after this many beads (default: until nothing is ready). */
  limit?: number;
}

export interface FloorRun {
  beads: number;
  totalMs: number;
  /** One whole bead: ready + claim + spawn + close. */
  perBead: number[];
  /** The no-op agent's spawn to exit. */
  spawn: number[];
  /** The three br calls together (perBead − spawn). */
  br: number[];
  ready: number[];
  claim: number[];
  close: number[];
}

interface ReadyRow {
  id: string;
  title: string;
  status: string;
  priority: number;
  issue_type: string;
  created_at: string;
  updated_at: string;
  description?: string;
  labels?: string[];
}

export async function runFloor(options: FloorOptions): Promise<FloorRun> {
  // Exactly the argv and environment Forge's br adapter uses, so only the loop around them differs.
  const env = { ...options.env, BEADS_DIR: options.beadsDir, RUST_LOG: 'error', NO_COLOR: '1' };
  const globals = ['--json', '--actor=ralph-loop', '--lock-timeout', '60000'];
  const br = async (args: string[]) => {
    const result = expectSuccess(
      await runTimed('br', [...globals, ...args], { cwd: options.cwd, env }),
      `br ${args[0] ?? ''}`,
    );
    return result;
  };

  const perBead: number[] = [];
  const spawn: number[] = [];
  const ready: number[] = [];
  const claim: number[] = [];
  const close: number[] = [];
  const started = performance.now();
  for (;;) {
    if (options.limit !== undefined && perBead.length >= options.limit) break;
    const t0 = performance.now();
    const listed = await br(['ready', '--limit', '0', `--parent=${options.epicId}`]);
    ready.push(listed.ms);
    const rows = (JSON.parse(listed.stdout) as ReadyRow[]).filter(
      (row) => row.status === 'open' && row.issue_type !== 'epic',
    );
    rows.sort(
      (a, b) =>
        a.priority - b.priority ||
        (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0) ||
        (a.id < b.id ? -1 : 1),
    );
    const next = rows[0];
    if (next === undefined) break;
    claim.push((await br(['update', next.id, '--claim'])).ms);
    const bead: Bead = { ...next, labels: next.labels ?? [] };
    const agent = await runTimed(NODE, [options.agentScript], {
      cwd: options.cwd,
      env: options.env,
      input: beadPrompt({ bead, epicId: options.epicId }),
    });
    expectSuccess(agent, 'the no-op agent');
    spawn.push(agent.ms);
    close.push((await br(['close', next.id, '--reason=done by the floor loop'])).ms);
    perBead.push(performance.now() - t0);
  }
  return {
    beads: perBead.length,
    totalMs: performance.now() - started,
    perBead,
    spawn,
    br: perBead.map((ms, i) => ms - (spawn[i] ?? 0)),
    ready,
    claim,
    close,
  };
}
