// Figure 10: tokens of each role's prompt (doer, judge, strategist, retrospective from figure 5's loops,
// and a plain bead of an epic run here), with the real claude against the scripted server.
import { join } from 'node:path';
import { startModelServer, text, write } from '../../test/support/model-server/index.js';
import { claudeWorld, measureModelRequests, type ModelRequests } from './model-requests.js';
import { promptSizes, type PromptSize, type PromptTokens } from './prompt-sizes.js';
import { BIN, NODE, runTimed, tempDir } from './support.js';

const BEAD_TITLE = 'Write the greeting file';

/** One plain epic with one bead, run by claude: the prompt a bead of a user's epic gets. */
async function plainBeadPrompt(): Promise<PromptSize[]> {
  const root = await tempDir('prompt-bead');
  const server = await startModelServer({ rules: [] });
  try {
    const world = await claudeWorld(root.path, server.url, { 'README.md': '# bench repo\n' });
    server.addRule({
      name: 'bead',
      match: BEAD_TITLE,
      turns: [write(join(world.repo, 'greeting.txt'), 'hello\n'), text('Done: greeting.txt written.')],
    });
    const forge = (args: string[]) => world.run([BIN.forgePack, '--store', 'embedded', ...args]);
    const epic = (
      JSON.parse((await forge(['beads', 'create', 'Greetings', '-t', 'epic', '--json'])).stdout) as {
        id: string;
      }
    ).id;
    await forge([
      'beads',
      'create',
      BEAD_TITLE,
      '--parent',
      epic,
      '-d',
      'Create greeting.txt at the repository root containing the single line "hello".',
    ]);
    const run = await runTimed(
      NODE,
      [
        BIN.ralphLoop,
        '--store',
        'embedded',
        epic,
        '--agent',
        'claude',
        '--timeout',
        '180',
        '--max-attempts',
        '1',
      ],
      { cwd: world.repo, env: world.env, timeoutMs: 300_000 },
    );
    if (run.exitCode !== 0) {
      throw new Error(
        `ralph-loop (plain bead, real claude) exited ${String(run.exitCode)}:\n${run.stderr.slice(-2000)}\n${server.describe()}`,
      );
    }
    return promptSizes(server.requests);
  } finally {
    await server.close();
    await root.remove();
  }
}

/** Reuses figure 5's loops when they ran; otherwise runs the hard and soft loops itself. */
export async function measurePromptTokens(
  models: ModelRequests | { skipped: string } | undefined,
): Promise<PromptTokens | { skipped: string }> {
  const measured =
    models !== undefined && !('skipped' in models) && models.available
      ? models
      : await measureModelRequests(['hard', 'soft']);
  if (!measured.available) return { skipped: `n/a (${measured.reason})` };
  const byRole = new Map<string, PromptSize>();
  for (const loop of measured.loops)
    for (const size of loop.prompts) if (!byRole.has(size.role)) byRole.set(size.role, size);
  for (const size of await plainBeadPrompt()) byRole.set(size.role, size);
  const hard = measured.loops.find((loop) => loop.kind === 'hard');
  return {
    claudeVersion: measured.claudeVersion,
    prompts: [...byRole.values()],
    hardIteration: hard?.eventTokensPerIteration,
  };
}
