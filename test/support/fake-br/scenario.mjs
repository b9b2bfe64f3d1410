// Fault injection for the fake br: FAKE_BR_SCENARIO names a JSON file `{ "faults": [ … ] }`.
//
// A fault matches on `command` (e.g. "create", "dep add"; any when absent) and `argvIncludes` (every
// string must be in argv), fires `times` times (always when absent; counted across calls in
// `<scenario>.hits`), and does `action`: locked | busy | error | garbage | usage | raw | hang | flood |
// delay | logs.
import { appendFileSync, existsSync, readFileSync } from 'node:fs';

export function pickFault(scenarioPath, command, argv) {
  if (scenarioPath === undefined || scenarioPath === '' || !existsSync(scenarioPath)) return undefined;
  const { faults = [] } = JSON.parse(readFileSync(scenarioPath, 'utf8'));
  const hitsPath = `${scenarioPath}.hits`;
  const hits = existsSync(hitsPath)
    ? readFileSync(hitsPath, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
    : [];
  for (const [index, fault] of faults.entries()) {
    if (fault.command !== undefined && fault.command !== command) continue;
    if (!(fault.argvIncludes ?? []).every((part) => argv.includes(part))) continue;
    if (fault.times !== undefined && hits.filter((h) => h === String(index)).length >= fault.times) continue;
    appendFileSync(hitsPath, `${index}\n`);
    return fault;
  }
  return undefined;
}
