// opencode and Gemini CLI as the scripted model drives them: each one's tool names and arguments, and the
// loop roles (strategist, retrospective) acting only through its shell tool.
import { text, toolUse, type Rule, type Turn } from '../support/model-server/index.js';
import { GEMINI_BIN, GEMINI_MODEL, OPENCODE_BIN, OPENCODE_MODEL } from './cli-setup.js';
import { fromPrompt } from './scripted-roles.js';

export interface CliCase {
  agent: 'opencode' | 'gemini';
  bin: string;
  pkg: string;
  model: string;
  /** Its shell tool, as its model calls it. */
  shell: (command: string) => Turn;
  /** Its tools that write a file and edit one. */
  writeFile: (path: string, content: string) => Turn;
  editFile: (path: string, from: string, to: string) => Turn;
  /** Its read-only tools: read a file, list files by pattern, search contents under a directory. */
  readFile: (path: string) => Turn;
  glob: (pattern: string, dir: string) => Turn;
  grep: (pattern: string, dir: string) => Turn;
  /** A read-only run's ways out, as its model would try them: leaving plan mode, starting a sub-agent. */
  escapes: Turn[];
  /** Failed attempts it makes by itself before the adapter stops it (see the adapter's quiet retries). */
  rateLimitFaults: number;
  costed: boolean;
}

export const CASES: CliCase[] = [
  {
    agent: 'opencode',
    bin: OPENCODE_BIN,
    pkg: 'opencode-ai',
    model: OPENCODE_MODEL,
    shell: (command) => toolUse('bash', { command, description: 'run a command' }),
    writeFile: (filePath, content) => toolUse('write', { filePath, content }),
    editFile: (filePath, oldString, newString) => toolUse('edit', { filePath, oldString, newString }),
    readFile: (filePath) => toolUse('read', { filePath }),
    glob: (pattern, path) => toolUse('glob', { pattern, path }),
    grep: (pattern, path) => toolUse('grep', { pattern, path }),
    escapes: [
      toolUse('task', { description: 'write it', prompt: 'Write pwned.txt.', subagent_type: 'general' }),
    ],
    rateLimitFaults: 3,
    costed: true,
  },
  {
    agent: 'gemini',
    bin: GEMINI_BIN,
    pkg: '@google/gemini-cli',
    model: GEMINI_MODEL,
    shell: (command) => toolUse('run_shell_command', { command, description: 'run a command' }),
    writeFile: (file_path, content) => toolUse('write_file', { file_path, content }),
    editFile: (file_path, old_string, new_string) =>
      toolUse('replace', { file_path, old_string, new_string, instruction: 'change it' }),
    readFile: (file_path) => toolUse('read_file', { file_path }),
    glob: (pattern, dir_path) => toolUse('glob', { pattern, dir_path }),
    grep: (pattern, dir_path) => toolUse('grep_search', { pattern, dir_path }),
    escapes: [
      // Headless 0.61 approves this by itself and switches to YOLO unless the tool is excluded.
      toolUse('exit_plan_mode', { plan_filename: 'plan.md' }),
      toolUse('invoke_agent', { agent_name: 'generalist', prompt: 'Write pwned.txt.' }),
    ],
    rateLimitFaults: 2,
    costed: false,
  },
];

/**
 * Gemini CLI's directory tree, as its first request shows it without Forge's settings (seen, 0.61):
 * `├───name` and `└───name` lines under the working directory.
 */
export const DIRECTORY_TREE = /[├└]───/;

/** The strategist: reads the arbiter's signal and, once it is terminal, stamps the retrospective. */
export function strategistByShell(cli: CliCase): Rule {
  return {
    name: 'strategist',
    match: /# Strategist, iteration \d+:/,
    turns: (context) => {
      const signal = fromPrompt(context, /1\. `([^`]+)`: the decision on iteration/, 'the signal path');
      if (context.turnIndex === 0) return cli.shell(`cat ${signal}`);
      if (context.turnIndex === 1) {
        if (!/"type":\s*"terminal"/.test(context.toolResults[0]?.text ?? '')) {
          throw new Error(
            `the last iteration ended, yet the signal is not terminal: ${context.toolResults[0]?.text}`,
          );
        }
        return cli.shell(
          fromPrompt(context, /^\s*(forge-pack .*--retrospective.*)$/m, 'the retrospective stamp'),
        );
      }
      return text('The loop has ended; I stamped the retrospective.');
    },
  };
}

/** The retrospective: writes both files its bead names, with its shell tool. */
export function retrospectiveByShell(cli: CliCase, retrospective: string): Rule {
  return {
    name: 'retrospective',
    match: '# Retrospective:',
    turns: (context) => {
      const paths = [...context.request.userText.matchAll(/^\d\. `([^`]+)`: /gm)].map((m) => m[1]!);
      const retro = paths.find((p) => p.endsWith('retrospective.md'));
      const rubric = paths.find((p) => p.endsWith('rubric-suggestions.md'));
      if (retro === undefined || rubric === undefined)
        throw new Error(`no output files named: ${paths.join(', ')}`);
      if (context.turnIndex === 0) {
        return cli.shell(`printf '${retrospective}' > ${retro} && printf -- '- none\\n' > ${rubric}`);
      }
      return text('Retrospective written.');
    },
  };
}
