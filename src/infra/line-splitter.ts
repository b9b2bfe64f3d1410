// Splits a child's output stream into lines in one pass, with a bound on how long one line may grow.

/**
 * The most of one line kept and passed on. Agent CLIs write one JSON event per line, and the largest
 * in practice (a tool result holding a file read, a final answer at the model's output limit) stay well
 * under a few hundred KB; 1 MiB leaves room for those while bounding what an agent that never writes a
 * newline can make the runner hold per stream (a 100 MB line used to cost 1.5 GB and minutes of CPU).
 */
export const MAX_LINE_CHARS = 1024 * 1024;

/** What ends a line that was cut to the bound, and how much of it was left out. */
export function cutLineMark(droppedChars: number): string {
  return ` […line cut: ${droppedChars} more characters…]`;
}

export interface LineSplitter {
  /** Takes the next chunk; calls `onLine` for each line it completes, without its '\n' (or '\r\n'). */
  push(chunk: string): void;
  /** The stream ended: passes on an unterminated last line, as it is. */
  end(): void;
}

/**
 * Only each new chunk is searched for '\n' (the part of a line already held is never scanned again),
 * and a line longer than `maxChars` keeps its start, is cut there with a mark saying how much was
 * dropped, and is passed on when its newline comes.
 */
export function createLineSplitter(onLine: (line: string) => void, maxChars = MAX_LINE_CHARS): LineSplitter {
  let parts: string[] = [];
  let held = 0;
  let dropped = 0;

  const hold = (piece: string): void => {
    const room = maxChars - held;
    if (piece.length <= room) {
      if (piece !== '') parts.push(piece);
      held += piece.length;
      return;
    }
    if (room > 0) parts.push(piece.slice(0, room));
    held = maxChars;
    dropped += piece.length - room;
  };

  const take = (): string => {
    const line = parts.length === 1 ? (parts[0] ?? '') : parts.join('');
    const cut = dropped;
    parts = [];
    held = 0;
    dropped = 0;
    return cut > 0 ? `${line}${cutLineMark(cut)}` : line;
  };

  return {
    push(chunk) {
      let start = 0;
      for (let index = chunk.indexOf('\n'); index !== -1; index = chunk.indexOf('\n', start)) {
        // Most lines lie inside one chunk: passed on as a slice of it, with nothing held.
        if (held === 0 && dropped === 0) onLine(withoutCr(chunk.slice(start, index)));
        else {
          hold(chunk.slice(start, index));
          onLine(dropped > 0 ? take() : withoutCr(take()));
        }
        start = index + 1;
      }
      if (start < chunk.length) hold(chunk.slice(start));
    },
    end() {
      if (held > 0 || dropped > 0) onLine(take());
    },
  };
}

function withoutCr(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}
