// A shell's command lines read as words, and what a word says about the program it names: a shell, an
// interpreter that runs a script, or a wrapper that runs the command after it. metric-files.ts reads the
// metric's chain of scripts with these; nothing here runs or expands anything.

/** The word standing for a redirection of output: the file after it is written, not read. */
export const WRITE_TO = '\u0002>';
/** The word standing for the folder of the script holding a command (`$(dirname "$0")`). */
export const SCRIPT_DIR = '\u0001';

/**
 * A shell's text as words: separators (`;`, `&&`, `|`, newlines) become `;` words of their own, where a
 * command and its flags end; comments go, a redirection of output becomes WRITE_TO, and the script's
 * own folder (`$(dirname "$0")`, `${0%/*}`) SCRIPT_DIR. Quotes go (`"$DIR"/x` is one word); nothing is
 * expanded here.
 */
export function shellWords(text: string): string[] {
  return text
    .replace(/\\\r?\n/g, ' ')
    .replace(/\$\(\s*dirname\s+(?:--\s+)?["']?\$\{?(?:0|BASH_SOURCE(?:\[0\])?)\}?["']?\s*\)/g, SCRIPT_DIR)
    .replace(/\$\{(?:0|BASH_SOURCE(?:\[0\])?)%\/\*\}/g, SCRIPT_DIR)
    .replace(/\$[({]MAKE[)}]/g, 'make')
    .replace(/(^|[\s;&|(])#[^\n]*/g, '$1')
    .replace(/\d*[<>]&\d+/g, ' ')
    .replace(/(?:\d+|&)?>>?\|?/g, ` ${WRITE_TO} `)
    .replace(/<+/g, ' ')
    .replace(/[;&|()`\n]+/g, ' ; ')
    .replace(/["']/g, '')
    .split(/\s+/)
    .filter((word) => word !== '');
}

/** Whether a script is shell: by its name, or by its `#!` line. */
export function isShellScript(path: string, text: string): boolean {
  if (/\.(?:sh|bash|zsh|ksh|dash)$/.test(path)) return true;
  const shebang = /^#!([^\n]*)/.exec(text)?.[1] ?? '';
  return /(?:^|[\s/])(?:ba|z|k|da)?sh(?:\s|$)/.test(shebang);
}

/** Programs that run the command after them (and their flags). */
export const WRAPPERS = [
  'time',
  'exec',
  'env',
  'nice',
  'nohup',
  'command',
  'builtin',
  'sudo',
  'stdbuf',
  'ionice',
  'taskset',
  'timeout',
  'xvfb-run',
  'npx',
  'bunx',
  'pnpx',
  'dotenv',
  'cross-env',
];
/** A shell's words after which a command starts, as it does after a wrapper. */
export const SHELL_KEYWORDS = ['if', 'then', 'else', 'elif', 'do', 'while', 'until', '!', '{'];
export const SHELLS = ['sh', 'bash', 'zsh', 'dash', 'ksh', 'fish', 'source', '.'];
/** Flags of an interpreter whose value is a script it runs too. */
export const SCRIPT_FLAGS = ['-r', '--require', '--import', '--loader', '--experimental-loader', '--preload'];
/** Flags of an interpreter after which it runs code or a module, not a script file. */
export const CODE_FLAGS = ['-e', '--eval', '-p', '--print', '-c', '-m'];
/** An interpreter's subcommands that come before its script. */
export const SUBCOMMANDS = ['run', 'exec'];

/** A program that runs the script it is given: node, python3.12, ruby, … (shells apart). */
export function isInterpreter(program: string): boolean {
  return /^(?:node(?:js)?|tsx|ts-node|bun|deno|python[\d.]*|pypy[\d.]*|ruby|perl|php|Rscript|julia|luajit|lua[\d.]*|elixir|groovy|kotlin|swift|pwsh|osascript|java)$/.test(
    program,
  );
}
