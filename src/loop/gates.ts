// Gates: the repo's checks (test, lint, build…) run after a code-writing bead; which ones, per bead.

/** A bead's `gates:` labels choose its gates: `gates:test` (one per label, or comma-joined), `gates:none`. */
export const GATES_LABEL_PREFIX = 'gates:';
/** The label value that turns every gate off for a bead. */
export const NO_GATES = 'none';

/** The gates a bead runs, in config order, or why its labels name none that can run. */
export type GateSelection = { gates: string[] } | { error: string };

/**
 * Which of the configured gates run for a bead with these labels. No `gates:` label: all of them.
 * `gates:none`: none. `gates:test` and `gates:lint` (or `gates:test,lint` where a store allows commas):
 * only those. A name that is not configured, or `none` beside a name, is an error for that bead.
 * Pure: labels are agent-written text, read only as names to look up, never as commands.
 */
export function gatesForBead(labels: readonly string[], configuredNames: readonly string[]): GateSelection {
  const named = labels
    .filter((label) => label.startsWith(GATES_LABEL_PREFIX))
    .flatMap((label) => label.slice(GATES_LABEL_PREFIX.length).split(','))
    .map((name) => name.trim());
  if (named.length === 0) return { gates: [...configuredNames] };
  if (named.includes(NO_GATES)) {
    const others = named.filter((name) => name !== NO_GATES);
    if (others.length === 0) return { gates: [] };
    return {
      error: `the bead's labels say both gates:none and gates:${others.join(',')}; remove one of them`,
    };
  }
  const empty = named.some((name) => name === '');
  const unknown = [...new Set(named.filter((name) => name !== '' && !configuredNames.includes(name)))];
  if (empty || unknown.length > 0) {
    const what =
      unknown.length > 0
        ? `unknown gate${unknown.length > 1 ? 's' : ''} ${unknown.join(', ')}`
        : 'an empty gate name';
    const known =
      configuredNames.length > 0
        ? `the configured gates are ${configuredNames.join(', ')}`
        : 'no gates are configured in .forge/config.json';
    return {
      error: `the bead's gates: label names ${what}; ${known} (fix the label, use gates:none, or add the gate under "gates" in .forge/config.json)`,
    };
  }
  const wanted = new Set(named);
  return { gates: configuredNames.filter((name) => wanted.has(name)) };
}
