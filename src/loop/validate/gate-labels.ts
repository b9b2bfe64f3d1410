// Reads the gate names a bead's `gates:` labels give (`gates:test`, one per label or comma-joined where
// a store allows commas; `gates:none` turns gates off). Names only: a label never becomes a command.

export const GATES_PREFIX = 'gates:';

/** Every name the bead's `gates:` labels give, in order; empty names kept so they can be reported. */
export function gateNamesOf(labels: readonly string[]): string[] {
  return labels
    .filter((label) => label.startsWith(GATES_PREFIX))
    .flatMap((label) => label.slice(GATES_PREFIX.length).split(','))
    .map((name) => name.trim());
}

/** The configured gates a bead runs: all of them with no `gates:` label, none with `gates:none`. */
export function gatesRunBy(labels: readonly string[], configured: readonly string[]): string[] {
  const named = gateNamesOf(labels);
  if (named.length === 0) return [...configured];
  if (named.includes('none')) return [];
  return configured.filter((name) => named.includes(name));
}
