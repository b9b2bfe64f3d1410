// What ralph-loop says when it is given a forge-pack command (`ralph-loop pipeline stages.json`): where
// that command lives, and how its epic is then run. The list it knows must be forge-pack's own.
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { FORGE_PACK_COMMANDS } from '../../src/cli/ralph-loop.js';
import { runCliInProcess } from '../support/cli.js';

async function run(
  program: 'forge-pack' | 'ralph-loop',
  args: string[],
): Promise<{ code: number; out: string; err: string }> {
  const result = await runCliInProcess(program, args, { cwd: tmpdir(), env: {}, extendEnv: false });
  return { code: result.exitCode, out: result.stdout, err: result.stderr };
}

describe('ralph-loop given a forge-pack command', () => {
  it('says it is forge-pack’s, with the command line to use (exit 2)', async () => {
    const pipeline = await run('ralph-loop', ['pipeline', 'stages.json']);
    expect(pipeline.code).toBe(2);
    expect(pipeline.err).toContain("pipeline is a forge-pack command, not ralph-loop's.");
    expect(pipeline.err).toContain(
      'hint: forge-pack pipeline stages.json  (it prints the epic id; run it with: ralph-loop <epic-id>)',
    );
    // And its help says where epics, loops and pipelines are made.
    expect((await run('ralph-loop', ['--help'])).out).toContain(
      'forge-pack pipeline <file>): each prints the epic id',
    );
    const beads = await run('ralph-loop', ['beads', 'list']);
    expect(beads.code).toBe(2);
    expect(beads.err).toContain('hint: forge-pack beads list\n');
  });

  it('knows every forge-pack command, and no other', async () => {
    const help = await run('forge-pack', ['--help']);
    const from = help.out.indexOf('Commands:');
    const section = help.out.slice(from, help.out.indexOf('\n\n', from));
    const names = [...section.matchAll(/^ {2}([a-z-]+)/gm)].map((match) => match[1]);
    expect(new Set(names.filter((name) => name !== 'help' && name !== 'completion'))).toEqual(
      FORGE_PACK_COMMANDS,
    );
  });
});
