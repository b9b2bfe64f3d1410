// The shape check of one issues.jsonl line, by hand: every read of the embedded store (and each
// `ralph-loop status`) goes through it, and a schema library would cost more to load than the check.
// Problems read `field: expected …`, all of them joined with "; ", as the other file readers say them.

import { isJsonObject } from '../../infra/json-object.js';

/** RFC 3339 as br writes it (chrono, UTC, up to nanoseconds); offsets are accepted on read. */
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

export type JsonObject = Record<string, unknown>;

/** One line's checker: collects problems as `path: message`. */
export class LineCheck {
  readonly problems: string[] = [];

  private fail(path: string, message: string): undefined {
    this.problems.push(path === '' ? message : `${path}: ${message}`);
    return undefined;
  }

  object(value: unknown, path: string): JsonObject | undefined {
    if (isJsonObject(value)) return value;
    return this.fail(path, `expected object, received ${kindOf(value)}`);
  }

  /** A required string; `nonEmpty` also refuses "". */
  string(value: unknown, path: string, nonEmpty = false): string | undefined {
    if (typeof value !== 'string') return this.fail(path, `expected string, received ${kindOf(value)}`);
    if (nonEmpty && value === '') return this.fail(path, 'expected a non-empty string');
    return value;
  }

  integer(value: unknown, path: string): number | undefined {
    if (typeof value === 'number' && Number.isInteger(value)) return value;
    return this.fail(path, `expected int, received ${kindOf(value)}`);
  }

  boolean(value: unknown, path: string): boolean | undefined {
    if (typeof value === 'boolean') return value;
    return this.fail(path, `expected boolean, received ${kindOf(value)}`);
  }

  timestamp(value: unknown, path: string): string | undefined {
    const text = this.string(value, path);
    if (text === undefined) return undefined;
    if (!TIMESTAMP.test(text)) return this.fail(path, 'expected an RFC 3339 timestamp');
    if (!Number.isFinite(Date.parse(text))) return this.fail(path, 'expected a valid date');
    return text;
  }

  /** Optional in br (`Option<T>`, skipped when None): absent and null both mean unset. */
  optional<T>(
    value: unknown,
    path: string,
    check: (value: unknown, path: string) => T | undefined,
  ): T | undefined {
    return value === undefined || value === null ? undefined : check(value, path);
  }

  /** A required value with br's serde default when the line omits it (null is still wrong). */
  defaulted<T>(
    value: unknown,
    path: string,
    fallback: T,
    check: (value: unknown, path: string) => T | undefined,
  ): T | undefined {
    return value === undefined ? fallback : check(value, path);
  }

  /** An optional list whose items `item` checks: [] when absent or null, undefined when an item is wrong. */
  list<T>(
    value: unknown,
    path: string,
    item: (value: unknown, path: string) => T | undefined,
  ): T[] | undefined {
    if (value === undefined || value === null) return [];
    if (!Array.isArray(value)) return this.fail(path, `expected array, received ${kindOf(value)}`);
    const items: T[] = [];
    let ok = true;
    value.forEach((entry: unknown, index) => {
      const checked = item(entry, `${path}[${index}]`);
      if (checked === undefined) ok = false;
      else items.push(checked);
    });
    return ok ? items : undefined;
  }
}

/** How a value's kind reads in a problem: `number`, `null`, `array`, … */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
