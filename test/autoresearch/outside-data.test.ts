// Which absolute paths the loop's commands name are data outside the repository: in their argv
// (`--data=/x` too) and in the scripts they run; never the system's folders, a tree or a folder above
// one, nor what is not there.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { LoopConfig } from '../../src/autoresearch/config.js';
import { fingerprintOutside, namedOutsidePaths } from '../../src/autoresearch/outside-data.js';
import { tempTree } from '../support/temp-tree.js';

const loop = (argv: string[]) =>
  ({ metric: { type: 'hard', argv }, scope: { doer_paths: ['src/'] } }) as unknown as LoopConfig;

describe('namedOutsidePaths', () => {
  it('takes what the argv and the scripts name that exists outside the trees', async () => {
    const data = await tempTree({ 'val.csv': 'a\n', 'set/x.csv': 'b\n', 'set/y.csv': 'c\n' });
    const repo = await tempTree({
      'metric/score.sh': `#!/bin/sh\npython3 /usr/bin/true "${join(data, 'set')}/" /no/such/file\n`,
    });
    const config = loop(['sh', 'metric/score.sh', `--data=${join(data, 'val.csv')}`, join(repo, 'metric')]);
    expect(await namedOutsidePaths(config, repo, [repo])).toEqual([join(data, 'set'), join(data, 'val.csv')]);
    expect([...fingerprintOutside([join(data, 'set')]).keys()].sort()).toEqual([
      join(data, 'set', 'x.csv'),
      join(data, 'set', 'y.csv'),
    ]);
  });

  it('never a folder holding a tree (the home the repository is in), nor the system’s own', async () => {
    const repo = await tempTree({ 'metric/score.sh': '#!/bin/sh\ncat /etc/hostname /dev/null\n' });
    const config = loop(['sh', 'metric/score.sh', join(repo, '..'), '/', '/usr/share']);
    expect(await namedOutsidePaths(config, repo, [repo])).toEqual([]);
  });

  it('reads `~/`, `$HOME/` and `../` in a script, and `../` in the argv, from the home and the tree', async () => {
    const home = await tempTree({ 'ds/a.csv': 'a\n', 'ds/b.csv': 'b\n', 'ds/c.csv': 'c\n' });
    const parent = await tempTree({ 'repo/metric/score.py': '', 'sibling/d.csv': 'd\n', 'e.csv': 'e\n' });
    const repo = join(parent, 'repo');
    await writeFile(
      join(repo, 'metric', 'score.py'),
      'A = "~/ds/a.csv"\nB = f"$HOME/ds/b.csv"\nC = "${HOME}/ds/c.csv"\nD = "../sibling/d.csv"\nU = "https://example.org/x"\n',
    );
    const config = loop(['python3', 'metric/score.py', '../e.csv']);
    expect(await namedOutsidePaths(config, repo, [repo], { HOME: home })).toEqual(
      [
        join(home, 'ds', 'a.csv'),
        join(home, 'ds', 'b.csv'),
        join(home, 'ds', 'c.csv'),
        join(parent, 'e.csv'),
        join(parent, 'sibling', 'd.csv'),
      ].sort(),
    );
    // No home given: its paths are not guessed.
    expect(await namedOutsidePaths(config, repo, [repo])).toEqual(
      [join(parent, 'e.csv'), join(parent, 'sibling', 'd.csv')].sort(),
    );
  });

  it('reads a variable of the environment the commands run with; one not set, or relative, names nothing', async () => {
    const data = await tempTree({ 'val.csv': 'a\n' });
    const repo = await tempTree({
      'metric/score.sh':
        '#!/bin/sh\ncat "$DATA_DIR/val.csv" ${DATA_DIR}/val.csv $UNSET/val.csv $REL/val.csv\n',
    });
    const config = loop(['sh', 'metric/score.sh']);
    expect(await namedOutsidePaths(config, repo, [repo], { DATA_DIR: data, REL: 'data' })).toEqual([
      join(data, 'val.csv'),
    ]);
  });
});
