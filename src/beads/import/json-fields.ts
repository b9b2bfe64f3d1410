// Typed reads of fields of located JSON objects, each failure a problem naming file, line, item and field.
import { jsonKindName, showJson, type JsonNode } from './json-locate.js';
import { lineAt, type ImportProblem } from './types.js';

type ObjectNode = Extract<JsonNode, { kind: 'object' }>;

export interface FieldReader {
  problems: ImportProblem[];
  string(node: ObjectNode, key: string, item: string, required: boolean): string | undefined;
  number(node: ObjectNode, key: string, item: string): number | undefined;
  boolean(node: ObjectNode, key: string, item: string, required: boolean): boolean | undefined;
  strings(node: ObjectNode, key: string, item: string): string[] | undefined;
  fail(node: JsonNode, message: string, item?: string, field?: string): void;
}

export function fieldReader(file: string, text: string): FieldReader {
  const problems: ImportProblem[] = [];
  const fail = (node: JsonNode, message: string, item?: string, field?: string): void => {
    problems.push({
      file,
      line: lineAt(text, node.start),
      item,
      field,
      message,
    });
  };
  const wrongType = (node: JsonNode, expected: string, item: string, key: string): undefined => {
    fail(node, `expected ${expected}, got ${jsonKindName(node)} (${showJson(text, node)})`, item, key);
    return undefined;
  };
  return {
    problems,
    fail,
    string(node, key, item, required) {
      const value = node.entries.get(key);
      if (value === undefined || value.kind === 'null') {
        if (required) fail(node, 'is missing (a non-empty string is required)', item, key);
        return undefined;
      }
      if (value.kind !== 'string') return wrongType(value, 'a string', item, key);
      if (required && value.value.trim() === '') {
        fail(value, 'is empty (a non-empty string is required)', item, key);
        return undefined;
      }
      return value.value;
    },
    number(node, key, item) {
      const value = node.entries.get(key);
      if (value === undefined || value.kind === 'null') return undefined;
      if (value.kind !== 'number') return wrongType(value, 'a number', item, key);
      return value.value;
    },
    boolean(node, key, item, required) {
      const value = node.entries.get(key);
      if (value === undefined) {
        if (required) fail(node, 'is missing (true or false is required)', item, key);
        return undefined;
      }
      if (value.kind !== 'boolean') return wrongType(value, 'true or false', item, key);
      return value.value;
    },
    strings(node, key, item) {
      const value = node.entries.get(key);
      if (value === undefined || value.kind === 'null') return undefined;
      if (value.kind !== 'array') return wrongType(value, 'an array of strings', item, key);
      const out: string[] = [];
      for (const [index, element] of value.items.entries()) {
        if (element.kind !== 'string') wrongType(element, 'a string', item, `${key}[${index}]`);
        else out.push(element.value);
      }
      return out;
    },
  };
}

/** The rank of each distinct value, lowest first, capped at `max`: bead priorities 0–4 from any numbers. */
export function priorityRanks(
  values: readonly (number | undefined)[],
  max = 4,
): Map<number | undefined, number> {
  const distinct = [...new Set(values.filter((v): v is number => v !== undefined))].sort((a, b) => a - b);
  const ranks = new Map<number | undefined, number>(distinct.map((v, i) => [v, Math.min(i, max)]));
  ranks.set(undefined, Math.min(distinct.length, max));
  return ranks;
}

/** Items sorted by priority (undefined last), ties kept in their position. */
export function byPriorityThenPosition<T extends { priority?: number | undefined }>(
  items: readonly T[],
): T[] {
  return items
    .map((item, index) => ({ item, index }))
    .sort((a, b) => {
      const pa = a.item.priority ?? Number.POSITIVE_INFINITY;
      const pb = b.item.priority ?? Number.POSITIVE_INFINITY;
      return pa !== pb ? pa - pb : a.index - b.index;
    })
    .map(({ item }) => item);
}
