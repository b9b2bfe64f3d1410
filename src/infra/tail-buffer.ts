// The last `max` characters of a child's output stream, marked when anything before them was dropped.

/** How much of each stream of a child's output is kept unless a caller says otherwise (the last 50 Mi characters). */
export const DEFAULT_KEPT_CHARS = 50 * 1024 * 1024;

/** What a kept tail starts with when the start of the stream was dropped. */
export const TRUNCATED_MARK = '[…truncated…]\n';

/** Whether `text` (a ProcessResult's stdout or stderr) lost its start to the buffer's bound. */
export function wasTruncated(text: string): boolean {
  return text.startsWith(TRUNCATED_MARK);
}

export class TailBuffer {
  private chunks: string[] = [];
  private length = 0;
  private dropped = false;

  constructor(private readonly max: number) {}

  push(chunk: string): void {
    this.chunks.push(chunk);
    this.length += chunk.length;
    while (this.length > this.max && this.chunks.length > 1) {
      const first = this.chunks.shift() ?? '';
      this.length -= first.length;
      this.dropped = true;
    }
  }

  value(): string {
    return keptTail(this.chunks.join(''), this.max, this.dropped);
  }
}

/** The last `max` characters of `text`, marked when anything before them was dropped (here or before). */
export function keptTail(text: string, max: number, dropped = false): string {
  const tail = text.length > max ? text.slice(text.length - max) : text;
  return dropped || text.length > max ? `${TRUNCATED_MARK}${tail}` : tail;
}
