#!/usr/bin/env node
// A fake agent for runner process tests: plays a scenario chosen by bead id and attempt number.
//
// FAKE_RUNNER_SCRIPT: JSON file {"<bead id>" | "*": [[attempt 1 actions], [attempt 2 actions], …]};
//   the last list repeats for later attempts. Actions:
//   {"exit": n} {"sleepMs": n} {"hang": true} {"stdout": text} {"write": {"path", "content"}}
//   {"waitFor": path}  waits until the file exists (a test's go-ahead; gives up after 60 s)
//   {"grandchild": "pid-file"}  a process in the same group that ignores SIGTERM and never ends
//   {"exec": [file, ...args]}  runs a command and waits for it ("{bead}" in an argument: the bead id)
//   {"ignoreTerm": true}  from here on SIGTERM is ignored (only SIGKILL ends the agent)
// FAKE_RUNNER_LOG: JSONL, one line per call {bead, attempt, argv, stdin, pid, cwd}
// The bead comes from FORGE_BEAD, which the runner sets for every agent.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

let stdin = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) stdin += chunk;

const bead = process.env.FORGE_BEAD ?? '?';
const logPath = process.env.FAKE_RUNNER_LOG;
let previous = 0;
if (logPath) {
  try {
    previous = readFileSync(logPath, 'utf8')
      .split('\n')
      .filter((line) => line !== '' && JSON.parse(line).bead === bead).length;
  } catch {
    previous = 0;
  }
  const call = {
    bead,
    attempt: previous + 1,
    argv: process.argv.slice(2),
    stdin,
    pid: process.pid,
    cwd: process.cwd(),
  };
  appendFileSync(logPath, `${JSON.stringify(call)}\n`);
}

const script = process.env.FAKE_RUNNER_SCRIPT
  ? JSON.parse(readFileSync(process.env.FAKE_RUNNER_SCRIPT, 'utf8'))
  : {};
const plans = script[bead] ?? script['*'] ?? [[]];
const actions = plans[Math.min(previous, plans.length - 1)] ?? [];
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

for (const action of actions) {
  if ('exit' in action) process.exit(action.exit);
  if ('sleepMs' in action) await sleep(action.sleepMs);
  if ('waitFor' in action) {
    const until = Date.now() + 60_000;
    while (!existsSync(action.waitFor) && Date.now() < until) await sleep(20);
  }
  if ('stdout' in action) process.stdout.write(`${action.stdout}\n`);
  if ('write' in action) {
    mkdirSync(dirname(action.write.path), { recursive: true });
    writeFileSync(action.write.path, action.write.content);
  }
  if ('grandchild' in action) {
    const child = spawn(
      process.execPath,
      ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000);"],
      {
        stdio: 'ignore',
      },
    );
    writeFileSync(action.grandchild, String(child.pid));
  }
  if ('exec' in action) {
    const [file, ...args] = action.exec.map((arg) => arg.replaceAll('{bead}', bead));
    spawnSync(file, args, { stdio: 'ignore' });
  }
  if ('ignoreTerm' in action) process.on('SIGTERM', () => {});
  if ('hang' in action) {
    setInterval(() => {}, 1 << 30);
    await new Promise(() => {});
  }
}
process.stdout.write('fake agent done\n');
