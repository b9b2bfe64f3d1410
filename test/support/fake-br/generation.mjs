// What differs between br versions, as reference/br.md records it, keyed on FAKE_BR_VERSION.

function atLeast(version, minimum) {
  const a = version.split('.').map(Number);
  const b = minimum.split('.').map(Number);
  for (let i = 0; i < 3; i += 1) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
}

export function generationOf(version) {
  return {
    version,
    /** `ready --parent`/`-r` exist from 0.1.13 and `--epic` from 0.2.12 (see cli.mjs). */
    readyLabels: atLeast(version, '0.2.12'),
    readyIncludesInProgress: !atLeast(version, '0.1.25'),
    epicsBlockedByChildren: atLeast(version, '0.1.27'),
    readyDefaultLimit: atLeast(version, '0.2.16') ? 0 : 20,
    listEnvelope: atLeast(version, '0.1.30'),
    closeEnvelopeOnSkip: atLeast(version, '0.1.25'),
    nothingToDo: atLeast(version, '0.1.14'),
    errorsOnStdout: atLeast(version, '0.2.16'),
    depTypeField: atLeast(version, '0.1.8') ? 'dependency_type' : 'dep_type',
    /** The fake's choice: `parent` is optional in show, so the oldest generation leaves it out. */
    showParent: atLeast(version, '0.1.20'),
    infoLogs: !atLeast(version, '0.1.14'),
    redundantWarning: atLeast(version, '0.2.0'),
  };
}
