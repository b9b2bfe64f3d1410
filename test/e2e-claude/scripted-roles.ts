// Scripted models for the loop roles: they read their bead the way an agent would (paths and commands
// from its text) and act through Claude Code's own tools.
import {
  bash,
  text,
  toolUse,
  write,
  type Rule,
  type Turn,
  type TurnContext,
} from '../support/model-server/index.js';

/** The first match of `pattern` in what the agent was told, or a clear failure naming what is missing. */
export function fromPrompt(context: TurnContext, pattern: RegExp, what: string): string {
  const found = pattern.exec(context.request.userText)?.[1];
  if (found === undefined) {
    throw new Error(`the scripted model could not find ${what} in its prompt (${pattern})`);
  }
  return found.trim();
}

const read = (filePath: string): Turn => toolUse('Read', { file_path: filePath });

/**
 * A doer of iteration `iter`: reads the file (Claude Code refuses to overwrite an unread file), writes
 * the new content, and ends with the HYPOTHESIS line the doer template asks for.
 */
export function doerRule(options: {
  iter: number;
  path: string;
  content: string;
  hypothesis: string;
  /** Use Edit (old → new) instead of Write. */
  editFrom?: string;
}): Rule {
  const change =
    options.editFrom === undefined
      ? write(options.path, options.content)
      : toolUse('Edit', {
          file_path: options.path,
          old_string: options.editFrom,
          new_string: options.content,
        });
  return {
    name: `doer-${options.iter}`,
    match: `# Doer, iteration ${options.iter}:`,
    turns: [read(options.path), change, text(`Done.\nHYPOTHESIS: ${options.hypothesis}`)],
  };
}

/**
 * The strategist of every iteration: reads the arbiter's signal, then stamps the next iteration (after
 * writing a directive) or, once the signal is terminal, the retrospective, by running the command its
 * bead gives through Bash, as a real model would.
 */
export function strategistRule(directiveFor: (iter: number) => string): Rule {
  return {
    name: 'strategist',
    match: /# Strategist, iteration \d+:/,
    turns: (context) => {
      const iter = Number(fromPrompt(context, /# Strategist, iteration (\d+):/, 'its iteration'));
      const signalPath = fromPrompt(context, /1\. `([^`]+)`: the decision on iteration/, 'the signal path');
      if (context.turnIndex === 0) return read(signalPath);
      const signal = context.toolResults[0]?.text ?? '';
      const terminal = /"type":\s*"terminal"/.test(signal);
      if (terminal) {
        if (context.turnIndex === 1) {
          const command = fromPrompt(
            context,
            /^\s*(forge-pack .*--retrospective.*)$/m,
            'the retrospective stamp',
          );
          return bash(command, 'stamp the retrospective');
        }
        return text('The loop has ended; I stamped the retrospective.');
      }
      if (context.turnIndex === 1) {
        const path = fromPrompt(context, /iteration\s+\d+ to `([^`]+)`/, 'the directive path');
        return write(path, directiveFor(iter + 1));
      }
      if (context.turnIndex === 2) {
        const command = fromPrompt(context, /^\s*(forge-pack .*--iter \d+.*)$/m, 'the stamp command');
        return bash(command, `stamp iteration ${iter + 1}`);
      }
      return text(`Stamped iteration ${iter + 1}.`);
    },
  };
}

/** The retrospective: writes both files its bead names, then finishes. */
export function retrospectiveRule(retrospective: string, suggestions: string): Rule {
  return {
    name: 'retrospective',
    match: '# Retrospective:',
    turns: (context) => {
      const paths = [...context.request.userText.matchAll(/^\d\. `([^`]+)`: /gm)].map((m) => m[1]!);
      const [retro, rubric] = [
        paths.find((p) => p.endsWith('retrospective.md')),
        paths.find((p) => p.endsWith('rubric-suggestions.md')),
      ];
      if (retro === undefined || rubric === undefined) {
        throw new Error(`the retrospective bead names no output files: ${paths.join(', ')}`);
      }
      if (context.turnIndex === 0) return write(retro, retrospective);
      if (context.turnIndex === 1) return write(rubric, suggestions);
      return text('Retrospective written.');
    },
  };
}
