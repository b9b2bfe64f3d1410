// One bead as `br show` reports it, its dependents found through the index rather than a scan of every bead.
import type { BeadDetail, BeadEdge } from '../types.js';
import { indexOf } from './record-index.js';
import { edgeTo, toBead, toComment } from './records.js';
import type { IssueMap, IssueRecord } from './records.js';

/** A bead with its edges both ways and its comments, as `br show` reports it. */
export function toDetail(record: IssueRecord, issues: IssueMap): BeadDetail {
  const dependencies = record.dependencies.map((d) => edgeTo(d.depends_on_id, d.type, issues));
  const dependents: BeadEdge[] = [];
  for (const otherId of indexOf(issues).dependentIds(record.id)) {
    for (const d of issues.get(otherId)?.dependencies ?? []) {
      if (d.depends_on_id === record.id) dependents.push(edgeTo(otherId, d.type, issues));
    }
  }
  dependents.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const comments = [...record.comments].sort((a, b) => a.id - b.id).map(toComment);
  return { ...toBead(record), dependencies, dependents, comments };
}
