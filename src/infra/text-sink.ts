// Where text goes: process streams in the CLI, string buffers in tests.

export interface TextSink {
  write(text: string): void;
}
