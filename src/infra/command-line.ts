// Splits a user's command line (a metric, an agent) into argv like a POSIX shell would, and refuses
// what only a shell could run, so nothing the user typed is silently passed on with another meaning.
// The other way, shellWords joins argv into a command line a user or an agent can paste into a shell.

export type SplitResult = { ok: true; argv: string[] } | { ok: false; reason: string };

const SHELL_OPERATORS = new Set(['|', '&', ';', '<', '>', '(', ')', '$', '`']);
const GLOB_CHARS = new Set(['*', '?']);

/** The rest of the unquoted word after position `i`. */
function restOfWord(command: string, i: number): string {
  const rest = command.slice(i + 1);
  const end = rest.search(/[\s'"\\]/);
  return end === -1 ? rest : rest.slice(0, end);
}

/** `[` starts a glob bracket expression when a `]` closes it in the same word (`sc[o]re.txt`). */
function closesBracket(command: string, i: number): boolean {
  return restOfWord(command, i).includes(']');
}

/** `{a,b}` and `{1..3}` are expanded by bash and zsh before the command sees them. */
function bracesExpand(command: string, i: number): boolean {
  return /^[^{}]*(,|\.\.)[^{}]*\}/.test(restOfWord(command, i));
}

/**
 * Splits a command line into argv the way a POSIX shell splits words (quotes, backslashes), but runs
 * nothing: syntax that would need a shell (pipes, redirections, `$` or backtick expansion, globs,
 * `VAR=value` prefixes, `~`) is rejected with a reason instead of being passed on silently.
 */
export function splitCommandLine(command: string, subject = 'the command'): SplitResult {
  const argv: string[] = [];
  let word = '';
  let inWord = false;
  let quote: "'" | '"' | undefined;
  let quotedSomething = false;
  const shellNeeded = (what: string): SplitResult => ({
    ok: false,
    reason: `${what} needs a shell, and ${subject} runs without one: put it in a script and run that`,
  });

  for (let i = 0; i < command.length; i++) {
    const c = command.charAt(i);
    if (quote === "'") {
      if (c === "'") quote = undefined;
      else word += c;
      continue;
    }
    if (quote === '"') {
      if (c === '"') quote = undefined;
      else if (c === '\\' && i + 1 < command.length && '"\\$`\n'.includes(command.charAt(i + 1))) {
        const next = command.charAt(++i);
        if (next !== '\n') word += next;
      } else if (c === '$' || c === '`') return shellNeeded(`"${c}" expansion`);
      else word += c;
      continue;
    }
    if (c === ' ' || c === '\t' || c === '\n') {
      if (inWord) argv.push(word);
      word = '';
      inWord = false;
      quotedSomething = false;
      continue;
    }
    if (c === '\\') {
      if (i + 1 >= command.length) return { ok: false, reason: 'the command ends with a lone backslash' };
      const next = command.charAt(++i);
      if (next !== '\n') {
        word += next;
        inWord = true;
      }
      continue;
    }
    if (c === "'" || c === '"') {
      quote = c;
      inWord = true;
      quotedSomething = true;
      continue;
    }
    if (SHELL_OPERATORS.has(c)) return shellNeeded(`"${c}"`);
    if (GLOB_CHARS.has(c) || (c === '[' && closesBracket(command, i))) {
      return { ok: false, reason: `"${c}" would be a glob in a shell: quote the word to pass it literally` };
    }
    if (c === '{' && bracesExpand(command, i)) {
      return {
        ok: false,
        reason: '"{…}" would be expanded by a shell (brace expansion): quote the word to pass it literally',
      };
    }
    if (!inWord && (c === '~' || c === '#')) {
      return shellNeeded(c === '~' ? '"~" (home directory expansion)' : '"#" (a comment)');
    }
    if (c === '=' && argv.length === 0 && !quotedSomething && /^[A-Za-z_][A-Za-z0-9_]*$/.test(word)) {
      return {
        ok: false,
        reason: `"${word}=…" sets an environment variable, which needs a shell: write "env ${word}=… <command>" instead`,
      };
    }
    word += c;
    inWord = true;
  }
  if (quote !== undefined) return { ok: false, reason: `the command has an unterminated ${quote} quote` };
  if (inWord) argv.push(word);
  if (argv.length === 0) return { ok: false, reason: 'the command is empty' };
  return { ok: true, argv };
}

/** Joins words into a POSIX shell command line, quoting only what needs it. */
export function shellWords(words: readonly string[]): string {
  return words
    .map((word) => (/^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`))
    .join(' ');
}
