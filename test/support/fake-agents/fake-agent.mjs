#!/usr/bin/env node
// A stand-in for an agent CLI (linked as `claude`, `codex`, …). It logs its call, then plays a scenario.
//
// FAKE_AGENT_LOG: JSONL file; one line per call: {name, argv, stdin, cwd, pid, env}.
// FAKE_AGENT_SCENARIO: JSON {"actions": [...]}, played in order:
//   {"line": <object or string>}   a stdout line (objects as JSON)
//   {"stderr": "text"}             a stderr line
//   {"sleepMs": n}
//   {"flood": {"mib": n}}          n MiB of stdout lines of 1 KiB, numbered, then a last line "flood done"
//   {"hang": true}                 wait forever
//   {"ignoreSigterm": true}        from now on SIGTERM does nothing
//   {"grandchild": "pid-file"}     start a process in the same group that ignores SIGTERM, holds
//                                  stdout open and never ends; write its pid to the file
//   {"escape": "pid-file"}          start a process in a session of its own (setsid), out of the group's
//                                  reach, that ignores SIGTERM, holds stdout open and never ends; write
//                                  its pid to the file
//   {"writeFile": {"path", "content"}}
//   {"writeTempFile": {"name", "content"}}  a file in the temp directory it was given (TMPDIR)
//   {"linkTemp": "path"}           replace that temp directory with a symlink to a path
//   {"exit": n}
import { spawn } from 'node:child_process';
import { appendFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const scenario = JSON.parse(process.env.FAKE_AGENT_SCENARIO ?? '{"actions":[]}');

let stdin = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) stdin += chunk;

if (process.env.FAKE_AGENT_LOG) {
  const call = {
    name: basename(process.argv[1] ?? ''),
    argv: process.argv.slice(2),
    stdin,
    cwd: process.cwd(),
    pid: process.pid,
    env: process.env,
  };
  appendFileSync(process.env.FAKE_AGENT_LOG, `${JSON.stringify(call)}\n`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const write = (stream, text) => new Promise((resolve) => stream.write(`${text}\n`, resolve));

for (const action of scenario.actions ?? []) {
  if ('line' in action)
    await write(process.stdout, typeof action.line === 'string' ? action.line : JSON.stringify(action.line));
  else if ('stderr' in action) await write(process.stderr, action.stderr);
  else if ('sleepMs' in action) await sleep(action.sleepMs);
  else if ('flood' in action) {
    const filler = 'z'.repeat(1024 - 9);
    for (let block = 0; block < action.flood.mib; block += 1) {
      const lines = Array.from(
        { length: 1024 },
        (_, i) => `${String(block * 1024 + i).padStart(8, '0')}${filler}`,
      );
      await write(process.stdout, lines.join('\n'));
    }
    await write(process.stdout, 'flood done');
  } else if ('ignoreSigterm' in action) process.on('SIGTERM', () => {});
  else if ('writeFile' in action) writeFileSync(action.writeFile.path, action.writeFile.content);
  else if ('writeTempFile' in action)
    writeFileSync(join(tmpdir(), action.writeTempFile.name), action.writeTempFile.content);
  else if ('linkTemp' in action) {
    rmSync(tmpdir(), { recursive: true, force: true });
    symlinkSync(action.linkTemp, tmpdir());
  } else if ('grandchild' in action || 'escape' in action) {
    const child = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);"],
      {
        stdio: ['ignore', 'inherit', 'inherit'],
        // Node's detached is setsid(): a new session and process group, like `setsid cmd &`.
        detached: 'escape' in action,
      },
    );
    if ('escape' in action) child.unref();
    writeFileSync(action.grandchild ?? action.escape, String(child.pid));
  } else if ('hang' in action) {
    setInterval(() => {}, 1 << 30);
    await new Promise(() => {});
  } else if ('exit' in action) process.exit(action.exit);
}
process.exit(0);
