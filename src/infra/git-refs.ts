// The refs of a repository as one map, set in one transaction, and what its refs, HEADs and indexes
// reach since known tips: the calls the watch of git's own store makes around a doer (git-state.ts).
import type { GitCommand } from './git-command.js';
import type { Git } from './git-port.js';

type Run = GitCommand['git'];

/** Git's methods over refs, for `createGit`. */
export function refMethods(git: Run): Required<Pick<Git, 'refTips' | 'setRefs' | 'reachableSince'>> {
  return {
    async refTips() {
      const { stdout } = await git(['for-each-ref', '--format=%(objectname) %(refname)']);
      const tips = new Map<string, string>();
      for (const line of stdout.split('\n')) {
        const at = line.indexOf(' ');
        if (at > 0) tips.set(line.slice(at + 1), line.slice(0, at));
      }
      return tips;
    },

    async setRefs(refs) {
      if (refs.size === 0) return;
      const input = [...refs]
        .map(([ref, object]) => (object === undefined ? `delete ${ref}\n` : `update ${ref} ${object}\n`))
        .join('');
      await git(['update-ref', '--stdin'], { input });
    },

    async reachableSince(known) {
      const { stdout } = await git(
        ['rev-list', '--objects', '--no-object-names', '--all', '--indexed-objects', '--stdin'],
        { input: known.map((object) => `^${object}\n`).join('') },
      );
      return new Set(stdout.split('\n').filter((line) => line !== ''));
    },
  };
}
