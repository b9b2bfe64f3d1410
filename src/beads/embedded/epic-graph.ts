// An epic's dependency graph from one read of the records: its beads with their edges, and what they point at outside.
import type { BeadDetail, BeadEdge, EpicGraph } from '../types.js';
import { descendantsOf } from './graph.js';
import { indexOf } from './record-index.js';
import { edgeTo, toBead, toComment } from './records.js';
import type { IssueMap, IssueRecord } from './records.js';

/** The epic and its descendants with both directions of their edges; targets outside them, found or missing. */
export function epicGraph(issues: IssueMap, epic: IssueRecord): EpicGraph {
  const members = [epic, ...descendantsOf(issues, epic.id, true)];
  const inGraph = new Set(members.map((record) => record.id));
  // Dependents through the index: the edges into the graph, not a pass over every bead of the store.
  const index = indexOf(issues);
  const dependents = new Map<string, BeadEdge[]>();
  for (const member of members) {
    const list: BeadEdge[] = [];
    for (const otherId of index.dependentIds(member.id)) {
      for (const d of issues.get(otherId)?.dependencies ?? []) {
        if (d.depends_on_id === member.id) list.push(edgeTo(otherId, d.type, issues));
      }
    }
    dependents.set(member.id, list);
  }
  const detail = (record: IssueRecord): BeadDetail => ({
    ...toBead(record),
    ...(record.defer_until === undefined ? {} : { defer_until: record.defer_until }),
    dependencies: record.dependencies.map((d) => edgeTo(d.depends_on_id, d.type, issues)),
    dependents: (dependents.get(record.id) ?? []).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)),
    comments: [...record.comments].sort((a, b) => a.id - b.id).map(toComment),
  });
  const outside = new Map<string, IssueRecord>();
  const missing = new Set<string>();
  for (const record of members) {
    for (const d of record.dependencies) {
      if (inGraph.has(d.depends_on_id)) continue;
      const target = issues.get(d.depends_on_id);
      if (target === undefined) missing.add(d.depends_on_id);
      else outside.set(target.id, target);
    }
  }
  return {
    epic: detail(epic),
    beads: members.slice(1).map(detail),
    outside: [...outside.values()].map(toBead),
    missing: [...missing].sort(),
  };
}
