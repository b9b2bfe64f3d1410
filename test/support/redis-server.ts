// A real redis-server for the queue tests: 127.0.0.1, a free port, a temp dir, no persistence.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface RedisServer {
  url: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = new Socket();
    socket.once('error', () => resolve(false));
    socket.connect(port, '127.0.0.1', () => socket.write('PING\r\n'));
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString().startsWith('+PONG'));
    });
  });
}

export async function startRedis(): Promise<RedisServer> {
  const dir = await mkdtemp(join(tmpdir(), 'forge-redis-'));
  const port = await freePort();
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const failed = new Promise<never>((_resolve, reject) => {
    child.once('error', (error) =>
      reject(
        new Error(
          `redis-server could not start (${error.message}): the queue tests need it (apt-get install redis-server; .ci/run does)`,
        ),
      ),
    );
    child.once('exit', (code) => reject(new Error(`redis-server exited early (code ${String(code)})`)));
  });
  const ready = (async () => {
    for (let i = 0; i < 200; i++) {
      if (await ping(port)) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`redis-server did not answer on port ${port}`);
  })();
  await Promise.race([ready, failed]);
  failed.catch(() => undefined);
  return {
    url: `redis://127.0.0.1:${port}`,
    async stop() {
      child.removeAllListeners('exit');
      // Once only: a server killed already has a signal, not an exit code, and no second exit to wait for.
      if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}
