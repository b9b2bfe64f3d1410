// Bead label conventions (`key:value`, `iter:N`), shared by every layer that reads a bead's labels.

interface Labelled {
  labels: readonly string[];
}

/** The value of the first `key:value` label with this key, or undefined when there is none. */
export function labelValue(bead: Labelled, key: string): string | undefined {
  const label = bead.labels.find((l) => l.startsWith(`${key}:`));
  return label === undefined ? undefined : label.slice(key.length + 1);
}

/** The loop iteration of an `iter:N` label, or undefined when it has none or N is not a whole number. */
export function iterOf(bead: Labelled | undefined): number | undefined {
  const value = bead === undefined ? undefined : labelValue(bead, 'iter');
  return value !== undefined && /^\d+$/.test(value) ? Number(value) : undefined;
}
