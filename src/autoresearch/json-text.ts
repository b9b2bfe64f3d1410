// JSON inside text: where a malformed document goes wrong, and documents embedded in noise or prose.

export interface JsonCandidate {
  value: unknown;
  start: number;
  end: number;
}

/**
 * Finds the JSON objects and arrays embedded in text (log noise before a reporter's JSON, prose around
 * an answer). With `anywhere: false` a document must start a line, which keeps the scan linear on the
 * multi-megabyte output of a test reporter.
 */
export function findJsonValues(text: string, options: { anywhere: boolean }): JsonCandidate[] {
  const out: JsonCandidate[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text.charAt(i);
    const atLineStart = options.anywhere || /^[ \t]*$/.test(text.slice(text.lastIndexOf('\n', i - 1) + 1, i));
    if ((c === '{' || c === '[') && atLineStart) {
      const end = matchingBracket(text, i);
      if (end !== -1) {
        try {
          out.push({ value: JSON.parse(text.slice(i, end + 1)), start: i, end: end + 1 });
          i = end + 1;
          continue;
        } catch {
          // Balanced but not JSON: keep looking from the next character.
        }
      }
    }
    if (!options.anywhere) {
      const next = text.indexOf('\n', i);
      if (next === -1) break;
      i = next + 1;
      while (i < text.length && (text.charAt(i) === ' ' || text.charAt(i) === '\t')) i++;
      continue;
    }
    i++;
  }
  return out;
}

/** Index of the bracket closing the one at `start`, skipping strings; -1 when it never closes. */
function matchingBracket(text: string, start: number): number {
  const stack: string[] = [];
  for (let i = start; i < text.length; i++) {
    const c = text.charAt(i);
    if (c === '"') {
      for (i++; i < text.length && text.charAt(i) !== '"'; i++) if (text.charAt(i) === '\\') i++;
      continue;
    }
    if (c === '{') stack.push('}');
    else if (c === '[') stack.push(']');
    else if (c === '}' || c === ']') {
      if (stack.pop() !== c) return -1;
      if (stack.length === 0) return i;
    }
  }
  return -1;
}

export interface JsonErrorLocation {
  offset: number;
  line: number;
  column: number;
  message: string;
}

/**
 * Finds where JSON text first goes wrong. V8's messages carry a position only sometimes, so this is a
 * small validating scanner; it is only run after JSON.parse has already failed.
 */
export function locateJsonError(source: string): JsonErrorLocation {
  let i = 0;
  const fail = (message: string): never => {
    throw new JsonScanError(i, message);
  };
  const ws = () => {
    while (i < source.length && ' \t\n\r'.includes(source.charAt(i))) i++;
  };
  const show = () => (i >= source.length ? 'end of input' : `"${source.charAt(i)}"`);
  const value = (): void => {
    ws();
    const c = source.charAt(i);
    if (c === '{') {
      i++;
      ws();
      if (source.charAt(i) === '}') return void i++;
      for (;;) {
        ws();
        if (source.charAt(i) !== '"') fail(`expected a double-quoted property name, found ${show()}`);
        string();
        ws();
        if (source.charAt(i) !== ':') fail(`expected ":" after a property name, found ${show()}`);
        i++;
        value();
        ws();
        if (source.charAt(i) === ',') {
          i++;
          continue;
        }
        if (source.charAt(i) === '}') return void i++;
        fail(`expected "," or "}" after a property value, found ${show()}`);
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (source.charAt(i) === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (source.charAt(i) === ',') {
          i++;
          continue;
        }
        if (source.charAt(i) === ']') return void i++;
        fail(`expected "," or "]" after an array element, found ${show()}`);
      }
    }
    if (c === '"') return string();
    const literal = /^(?:true|false|null|-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/.exec(
      source.slice(i, i + 400),
    );
    if (literal === null || literal[0] === '') fail(`unexpected ${show()}`);
    else i += literal[0].length;
  };
  const string = (): void => {
    i++;
    while (i < source.length) {
      const c = source.charAt(i);
      if (c === '"') return void i++;
      if (c === '\\') {
        const escape = /^\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/.exec(source.slice(i, i + 6));
        if (escape === null) fail('invalid escape in a string');
        else i += escape[0].length;
        continue;
      }
      if (c < ' ') fail('unescaped control character (e.g. a newline) in a string');
      i++;
    }
    fail('unterminated string');
  };

  let message = 'not valid JSON';
  try {
    value();
    ws();
    if (i < source.length) fail(`unexpected ${show()} after the JSON value`);
  } catch (error) {
    if (!(error instanceof JsonScanError)) throw error;
    message = error.message;
    i = error.offset;
  }
  const before = source.slice(0, i);
  const line = before.split('\n').length;
  const column = i - before.lastIndexOf('\n');
  return { offset: i, line, column, message };
}

class JsonScanError extends Error {
  constructor(
    readonly offset: number,
    message: string,
  ) {
    super(message);
  }
}
