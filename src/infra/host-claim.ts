// A claim on a lock that no file operation can undo: an abstract Unix socket (Linux) named for the lock
// file's real path. The lock file is a file any process of the user's can delete or rewrite, an agent's
// too; with it gone, a second runner took the epic while the first still ran, and each ran beads of the
// other's (found by fault injection). The kernel holds the socket's name exactly as long as the process
// that bound it lives, so a second runner on the host is refused whatever became of the file, and is
// told who holds the claim by asking the holder itself.
import { createHash } from 'node:crypto';
import { createConnection, createServer, type Server } from 'node:net';

export interface HostClaim {
  /** The socket's name, without the leading NUL (for messages). */
  readonly name: string;
  release(): Promise<void>;
}

export type HostClaimResult =
  | { kind: 'held'; claim: HostClaim }
  /** Another live process holds it; `answer` is what it said when asked (its lock record's text). */
  | { kind: 'taken'; name: string; answer: string | undefined }
  /** No abstract sockets here (not Linux): the lock file alone decides. */
  | { kind: 'unsupported' };

/** How long a refused runner waits for the holder to say who it is. */
const ASK_TIMEOUT_MS = 2000;

/** The socket name of the lock file at `realPath`: fixed length, whatever the path. */
export function hostClaimName(realPath: string): string {
  return `forge-lock-${createHash('sha256').update(realPath).digest('hex').slice(0, 40)}`;
}

/**
 * Claims the lock at `realPath` for this process. `answer` is what the holder tells a process that is
 * refused (read at each asking, so it is the newest record).
 */
export async function claimHost(realPath: string, answer: () => string): Promise<HostClaimResult> {
  if (process.platform !== 'linux') return { kind: 'unsupported' };
  const name = hostClaimName(realPath);
  const server = createServer((socket) => {
    socket.on('error', () => undefined);
    socket.end(answer());
  });
  const bound = await new Promise<'ok' | 'taken' | 'unsupported'>((resolve) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      resolve(error.code === 'EADDRINUSE' ? 'taken' : 'unsupported'),
    );
    server.listen(`\0${name}`, () => resolve('ok'));
  });
  if (bound === 'unsupported') return { kind: 'unsupported' };
  if (bound === 'taken') return { kind: 'taken', name, answer: await askHolder(name) };
  // The claim must not keep a runner that is otherwise done from exiting.
  server.unref();
  return { kind: 'held', claim: { name, release: () => closeServer(server) } };
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * What the holder of the claim on the lock at `realPath` says (its lock record's text), or undefined when
 * no process holds it or it says nothing in time: how `stop` finds a runner whose lock file is gone.
 */
export function askHostClaim(realPath: string): Promise<string | undefined> {
  if (process.platform !== 'linux') return Promise.resolve(undefined);
  return askHolder(hostClaimName(realPath));
}

/** What the holder of `name` answers, or undefined when it says nothing in time. */
function askHolder(name: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const socket = createConnection(`\0${name}`);
    const done = (text: string | undefined): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(text);
    };
    const timer = setTimeout(() => done(undefined), ASK_TIMEOUT_MS);
    socket.on('data', (chunk: Buffer) => {
      size += chunk.length;
      // A lock record is a few hundred bytes: whatever sends more is not a runner.
      if (size > 64 * 1024) done(undefined);
      else chunks.push(chunk);
    });
    socket.on('end', () => done(Buffer.concat(chunks).toString('utf8')));
    socket.on('error', () => done(undefined));
  });
}
