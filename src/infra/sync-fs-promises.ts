// What `ralph-loop status` gets for node:fs/promises (scripts/build.mjs bundles it in place of Node's
// module into dist/bundle/status-fast.cjs, and nowhere else): the same functions and file handle
// methods, each returning a promise, done with the synchronous calls.
//
// Why: a status is one short process that reads a few small local files one after another. Node's
// fs/promises costs it ~3 ms to load, and its first call starts libuv's thread pool, another ~3 ms: a
// whole status measured 7.8 ms sooner with this module (bench figure 2b). Nothing waits on anything
// else while a status reads, so blocking the event loop for a read costs it nothing. The runner, which
// does wait on agents and timers while it reads, keeps Node's module.
//
// The same results and errors as Node's: an error is a rejected promise (each function is async),
// with the same `code`, `syscall` and `path`. Only what the status path imports is here; the build
// fails on an import of anything else (esbuild: "No matching export").
import {
  accessSync,
  closeSync,
  fstatSync,
  fsyncSync,
  ftruncateSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  type Dirent,
  type MakeDirectoryOptions,
  type Mode,
  type OpenMode,
  type PathLike,
  type RmOptions,
  type StatOptions,
  type WriteFileOptions,
} from 'node:fs';

type Data = string | NodeJS.ArrayBufferView;
type Encoding = BufferEncoding | { encoding?: BufferEncoding | null; flag?: string } | null | undefined;

/** A file handle, as fs/promises' FileHandle, over a file descriptor used synchronously. */
export class SyncFileHandle {
  constructor(readonly fd: number) {}

  async read<T extends NodeJS.ArrayBufferView>(
    buffer: T,
    offset?: number,
    length?: number,
    position?: number | bigint | null,
  ): Promise<{ bytesRead: number; buffer: T }> {
    const bytesRead = readSync(this.fd, buffer, offset ?? 0, length ?? buffer.byteLength, position ?? null);
    return { bytesRead, buffer };
  }

  async write<T extends NodeJS.ArrayBufferView>(
    buffer: T,
    offset?: number,
    length?: number,
    position?: number | null,
  ): Promise<{ bytesWritten: number; buffer: T }> {
    const bytesWritten = writeSync(this.fd, buffer, offset, length, position);
    return { bytesWritten, buffer };
  }

  /** From the current position to the end, as FileHandle.readFile. */
  async readFile(options: { encoding: BufferEncoding } | BufferEncoding): Promise<string>;
  async readFile(options?: null): Promise<Buffer>;
  async readFile(options?: Encoding): Promise<string | Buffer> {
    return readFileSync(this.fd, options);
  }

  /** At the current position, as FileHandle.writeFile. */
  async writeFile(data: Data, options?: WriteFileOptions): Promise<void> {
    writeFileSync(this.fd, data, options);
  }

  /** FileHandle.appendFile is writeFile: a handle opened to append writes at the end either way. */
  async appendFile(data: Data, options?: WriteFileOptions): Promise<void> {
    writeFileSync(this.fd, data, options);
  }

  async stat(options?: StatOptions): Promise<ReturnType<typeof fstatSync>> {
    return fstatSync(this.fd, options);
  }

  async truncate(length?: number): Promise<void> {
    ftruncateSync(this.fd, length);
  }

  async sync(): Promise<void> {
    fsyncSync(this.fd);
  }

  async close(): Promise<void> {
    closeSync(this.fd);
  }
}

export async function open(path: PathLike, flags?: OpenMode, mode?: Mode): Promise<SyncFileHandle> {
  return new SyncFileHandle(openSync(path, flags ?? 'r', mode));
}

export async function access(path: PathLike, mode?: number): Promise<void> {
  accessSync(path, mode);
}

export async function mkdir(
  path: PathLike,
  options?: Mode | MakeDirectoryOptions | null,
): Promise<string | undefined> {
  return mkdirSync(path, options);
}

export async function mkdtemp(prefix: string, options?: Encoding): Promise<string> {
  return mkdtempSync(prefix, options);
}

export async function rename(from: PathLike, to: PathLike): Promise<void> {
  renameSync(from, to);
}

export async function rm(path: PathLike, options?: RmOptions): Promise<void> {
  rmSync(path, options);
}

export async function unlink(path: PathLike): Promise<void> {
  unlinkSync(path);
}

export async function stat(path: PathLike, options?: StatOptions): Promise<ReturnType<typeof statSync>> {
  return statSync(path, options);
}

export async function lstat(path: PathLike, options?: StatOptions): Promise<ReturnType<typeof lstatSync>> {
  return lstatSync(path, options);
}

/** realpath(3), as fs/promises' (the JavaScript realpathSync resolves some paths differently). */
export async function realpath(path: PathLike, options?: Encoding): Promise<string> {
  return realpathSync.native(path, options);
}

export async function writeFile(path: PathLike, data: Data, options?: WriteFileOptions): Promise<void> {
  writeFileSync(path, data, options);
}

export async function readdir(
  path: PathLike,
  options: { withFileTypes: true; recursive?: boolean },
): Promise<Dirent[]>;
export async function readdir(
  path: PathLike,
  options?: { encoding?: BufferEncoding; withFileTypes?: false; recursive?: boolean } | BufferEncoding,
): Promise<string[]>;
export async function readdir(
  path: PathLike,
  options?: { encoding?: BufferEncoding; withFileTypes?: boolean; recursive?: boolean } | BufferEncoding,
): Promise<string[] | Dirent[]> {
  if (typeof options === 'object' && options.withFileTypes === true) {
    return readdirSync(path, { ...options, withFileTypes: true });
  }
  return readdirSync(
    path,
    options as BufferEncoding | { encoding?: BufferEncoding; withFileTypes?: false } | undefined,
  ) as string[];
}
