// Gathers what a loop's report shows: its status, the whole ledger, the run logs' time and cost by
// role, the judges' findings and the retrospective, through the readers status and the ledger own.
import { join } from 'node:path';
import type { LogQuery, LoopFiles } from '../infra/loop-files.js';
import { readJudgeOutput } from './judge-output.js';
import { readLedger } from './ledger.js';
import {
  buildLoopReport,
  findingTexts,
  foldRoleShares,
  type LoopReport,
  type RoleShare,
} from './report-model.js';
import { RUN_LOG_QUERY } from './run-times.js';
import { loopStatus, type StatusPorts } from './status.js';
import { requireLoopWorkspace } from './workspace.js';

export async function readLoopReport(repo: string, epicId: string, given: StatusPorts): Promise<LoopReport> {
  const ports = { ...given, files: scanningOnce(given.files) };
  const paths = await requireLoopWorkspace(repo, epicId);
  const status = await loopStatus(repo, epicId, ports, { workspace: paths.root });
  const [ledger, roles, retrospective] = await Promise.all([
    readLedger(ports.files, paths.ledger),
    readRoleShares(ports.files, join(paths.root, 'runs')),
    ports.files.readIfExists(paths.retrospective),
  ]);
  const findings = new Map<number, string[]>();
  await Promise.all(
    ledger.lines
      .filter((line) => line.findings_count > 0)
      .map(async (line) => {
        const verdict = await readJudgeOutput(ports.files, paths.judgeOutput(line.iter)).catch(
          () => undefined,
        );
        if (verdict?.ok === true) findings.set(line.iter, findingTexts(verdict.output.findings));
      }),
  );
  return buildLoopReport({
    status,
    lines: ledger.lines,
    notices: ledger.events.map((event) => ({ ts: event.ts, kind: event.kind, message: event.message })),
    roles,
    findings,
    retrospective: retrospective ?? null,
    generatedAt: new Date(ports.now()).toISOString(),
  });
}

/**
 * The same files, each log scanned once for each query however often the report asks: status reads the
 * run logs' times, the report their costs by role, with the same query (41 MB of logs read twice made
 * ~60 ms of a 10,000-iteration loop's report). One report's reads see the logs as they were at the first.
 */
function scanningOnce(files: LoopFiles): LoopFiles {
  const scans = new Map<string, ReturnType<LoopFiles['scanLog']>>();
  const queries = new Map<LogQuery, number>();
  return {
    ...files,
    scanLog(path, query) {
      const id = queries.get(query) ?? queries.size;
      queries.set(query, id);
      const key = `${id}\0${path}`;
      const scan = scans.get(key) ?? files.scanLog(path, query);
      scans.set(key, scan);
      return scan;
    },
  };
}

async function readRoleShares(
  files: LoopFiles,
  runsDir: string,
): Promise<Map<number, Record<string, RoleShare>>> {
  const shares = new Map<number, Record<string, RoleShare>>();
  const names = ((await files.list(runsDir)) ?? []).filter((name) => name.endsWith('.jsonl'));
  for (const name of names) {
    // Only the attempts' ends are read: a long loop's run logs are mostly its agents' activity (a
    // line per tool call), hundreds of MB that JSON.parse would otherwise read whole.
    const scan = await files.scanLog(join(runsDir, name), RUN_LOG_QUERY);
    if (scan !== undefined) foldRoleShares(shares, scan.matches);
  }
  return shares;
}
