// The gates' process port for a real run: each gate's argv through src/infra/process.ts, its output
// kept as a bounded tail of lines (stdout and stderr in the order they came). The process module (execa)
// is imported when a gate runs, not when a run starts: a run's first br calls need not wait for it.
import type { GateProcess } from '../loop/gates.js';

/** The most of a gate's output kept for the bead's comment, the event log and the next prompt. */
export const GATE_TAIL_LINES = 40;
export const GATE_TAIL_CHARS = 4000;
const LINE_CHARS = 400;

export function createGateProcess(env: NodeJS.ProcessEnv): GateProcess {
  return {
    async run(argv, options) {
      const [file, ...args] = argv;
      const lines: string[] = [];
      const keep = (line: string): void => {
        lines.push(line.length > LINE_CHARS ? `${line.slice(0, LINE_CHARS)}…` : line);
        if (lines.length > GATE_TAIL_LINES) lines.shift();
      };
      const { runWithOwnTemp } = await import('./own-temp-process.js');
      const ran = await runWithOwnTemp(
        { file: file ?? '', args },
        {
          cwd: options.cwd,
          env,
          timeoutMs: options.timeoutMs,
          signal: options.signal,
          onStdoutLine: keep,
          onStderrLine: keep,
          // What a gate starts in the background (a test server, or the code under test) must not
          // outlive it, even hidden from the sweep (see containment.ts).
          sweep: true,
          contain: true,
          maxBufferChars: 64 * 1024,
        },
      );
      return {
        exitCode: ran.timedOut || ran.aborted ? undefined : ran.exitCode,
        timedOut: ran.timedOut,
        aborted: ran.aborted,
        spawnError: ran.spawnError,
        tail: boundedTail(lines),
        durationMs: ran.durationMs,
      };
    },
  };
}

/** The last lines, cut from the front to at most GATE_TAIL_CHARS. */
export function boundedTail(lines: readonly string[]): string {
  const text = lines.join('\n');
  if (text.length <= GATE_TAIL_CHARS) return text;
  return `[…]${text.slice(text.length - GATE_TAIL_CHARS)}`;
}
