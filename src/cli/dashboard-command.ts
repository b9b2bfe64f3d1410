// `ralph-loop dashboard`: a read-only local page of the repo's epics and loops, live while they run.
import type { AddressInfo } from 'node:net';
import type { Command } from 'commander';
import { AppError, ExitCode } from '../infra/errors.js';
import { rememberingScans } from '../infra/loop-files.js';
import { isProcessAlive } from '../infra/pid.js';
import { globals, openStoreFor, parseInteger, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { createDashboardServer } from './dashboard-server.js';
import { runDirFor } from './epic-dirs.js';
import { printJson, say } from './output.js';
import { readReportPage } from './report-command.js';
import { createLiveFollower } from './report-live.js';

interface DashboardFlags {
  port: number;
  host: string;
  allowRemote?: boolean;
  interval: number;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1']);

export function defineDashboardCommand(command: Command, deps: CliDeps): void {
  command
    .option('--port <n>', 'the port to listen on (0: any free port)', parseInteger(0, 65535), 4747)
    .option('--host <address>', 'the address to listen on', '127.0.0.1')
    .option(
      '--allow-remote',
      'allow --host to be other than loopback: anyone who reaches that address can read every report',
    )
    .option('--interval <ms>', 'how often an open page asks for news', parseInteger(200), 1500)
    .action(async (flags: DashboardFlags, cmd: Command) => {
      const options = globals(cmd);
      const repo = workingDir(deps, options);
      if (!LOOPBACK.has(flags.host)) {
        if (flags.allowRemote !== true) {
          throw new AppError(`Refusing to serve the dashboard on ${flags.host}: it is not loopback.`, {
            exitCode: ExitCode.usage,
            hint: 'Add --allow-remote if you mean it: the reports (hypotheses, findings, costs) are readable by anyone who reaches that address.',
          });
        }
        say(
          deps,
          `warning: serving on ${flags.host}, beyond this machine: anyone who reaches it can read every report (read-only, no authentication).`,
        );
      }
      const ports = {
        now: () => deps.clock.now(),
        host: deps.host,
        isProcessAlive: deps.isProcessAlive ?? isProcessAlive,
      };
      // Every poll reads the loops' run logs again: each goes on from where the last read stopped.
      const pageDeps = { ...deps, loopFiles: rememberingScans(deps.loopFiles) };
      const server = createDashboardServer({
        repo,
        intervalMs: flags.interval,
        page: async (epicId, follower) => {
          const runDir = await runDirFor(repo, epicId);
          const live = follower ?? createLiveFollower(runDir, ports);
          const page = await readReportPage(pageDeps, {
            repo,
            epicId,
            runDir,
            live,
            store: async () => (await openStoreFor(deps, options, epicId)).opened.store,
          });
          return { page, live };
        },
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', (error: NodeJS.ErrnoException) =>
          reject(
            new AppError(`Could not listen on ${flags.host}:${flags.port}: ${error.code ?? error.message}`, {
              exitCode: ExitCode.environment,
              hint: 'Pick another port with --port (0 takes any free one).',
            }),
          ),
        );
        server.listen(flags.port, flags.host, () => resolve());
      });
      const address = server.address() as AddressInfo;
      const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      const url = `http://${host}:${address.port}/`;
      // Listening for Ctrl-C before the address is printed: whoever stops it on seeing the address (a
      // script, a test) finds it listening. A second signal leaves at once, without waiting for the close.
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const unsubscribe = deps.onInterrupt((count) => {
        if (count > 1) deps.exitNow(130);
        server.closeAllConnections();
        server.close(() => stop());
      });
      try {
        if (options.json) printJson(deps, { url, host: address.address, port: address.port });
        say(deps, `Dashboard of ${repo} at ${url} (read-only); Ctrl-C stops it.`);
        await stopped;
      } finally {
        unsubscribe();
      }
      say(deps, 'Dashboard stopped.');
    });
  command.addHelpText(
    'after',
    `
Examples:
  ralph-loop dashboard                    # http://127.0.0.1:4747/
  ralph-loop dashboard --port 0           # any free port; the address is printed
  ralph-loop dashboard --host 0.0.0.0 --allow-remote   # other machines too (a warning is printed)

The first page lists the loops of .forge/loops.json and the epics that have run here. An epic's page
is its report (see ralph-loop report) and follows the live run: it asks for news every --interval
ms and redraws when a bead starts or an iteration is decided, with the live bead, its agent and how
long it has run. The dashboard only reads: it changes no file and takes no lock. Ctrl-C (or SIGTERM)
stops it, closing the pages' connections; a second one leaves at once, with exit 130.`,
  );
}
