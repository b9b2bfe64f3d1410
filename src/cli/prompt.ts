// Yes/no questions on a terminal, behind an interface so tests and CI never need one.
import { createInterface } from 'node:readline/promises';
import { AppError, ExitCode } from '../infra/errors.js';

export interface Prompter {
  /** Asks a yes/no question; an empty answer takes the default. */
  confirm(question: string, defaultYes: boolean): Promise<boolean>;
}

/** What commands that may ask questions add to CliDeps. */
export interface PromptDeps {
  /**
   * Who answers questions. Undefined: the terminal, when stdin is one. Null: nobody; every question
   * takes its default (tests, scripts).
   */
  prompter?: Prompter | null;
}

/** The prompter a command should use: none with `--yes`, else the injected one, else the terminal's. */
export function choosePrompter(deps: PromptDeps, assumeYes: boolean): Prompter | undefined {
  if (assumeYes || deps.prompter === null) return undefined;
  return deps.prompter ?? terminalPrompter();
}

/** y/yes → true, n/no → false, empty → the default, anything else → undefined (ask again). */
export function parseYesNo(answer: string, defaultYes: boolean): boolean | undefined {
  const text = answer.trim().toLowerCase();
  if (text === '') return defaultYes;
  if (text === 'y' || text === 'yes') return true;
  if (text === 'n' || text === 'no') return false;
  return undefined;
}

/** Questions on stderr, answers from stdin; undefined when stdin is not a terminal. */
export function terminalPrompter(
  input: NodeJS.ReadableStream & { isTTY?: boolean } = process.stdin,
  output: NodeJS.WritableStream = process.stderr,
): Prompter | undefined {
  if (input.isTTY !== true) return undefined;
  return {
    async confirm(question, defaultYes) {
      // One interface per question, closed at once, so stdin never keeps the process alive.
      const rl = createInterface({ input, output, terminal: true });
      // Ctrl-C or Ctrl-D at a question ends the command: every question comes before any write.
      const gone = new AbortController();
      rl.on('SIGINT', () => gone.abort());
      rl.on('close', () => gone.abort());
      try {
        for (;;) {
          const answer = await rl.question(`${question} ${defaultYes ? '[Y/n]' : '[y/N]'} `, {
            signal: gone.signal,
          });
          const parsed = parseYesNo(answer, defaultYes);
          if (parsed !== undefined) return parsed;
        }
      } catch (error) {
        if (!gone.signal.aborted) throw error;
        throw new AppError('Interrupted at a question; nothing was written.', {
          exitCode: ExitCode.interrupted,
        });
      } finally {
        rl.close();
      }
    },
  };
}
