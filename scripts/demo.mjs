#!/usr/bin/env node
// `npm run demo`: a whole autoresearch loop in a temp git repo, on the embedded bead store, with the
// built-in scripted agent standing in for a model (no br, no API key). Pass --keep to keep the repo,
// --pipeline for a three-stage pipeline of loops instead (scripts/demo-pipeline.mjs).
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const keep = process.argv.includes('--keep');
const node = process.execPath;
const forgePack = join(root, 'bin', 'forge-pack.js');
const ralphLoop = join(root, 'bin', 'ralph-loop.js');
const started = Date.now();

// Headings in bold on a terminal only: a log or a pipe gets the plain text (NO_COLOR is honoured too).
const bold = process.stderr.isTTY === true && (process.env.NO_COLOR ?? '') === '';

function say(text) {
  process.stderr.write(bold ? `\n\x1b[1m== ${text}\x1b[0m\n` : `\n== ${text}\n`);
}

// Build once when dist/ is missing or older than src/ (a fresh clone after npm ci has no dist/).
execFileSync(node, [join(root, 'scripts', 'build.mjs'), '--if-stale'], { stdio: 'inherit' });

if (process.argv.includes('--pipeline')) {
  const { runPipelineDemo } = await import('./demo-pipeline.mjs');
  runPipelineDemo({ root, keep, say });
  process.exit(0);
}

const base = mkdtempSync(join(tmpdir(), 'forge-demo-'));
const repo = join(base, 'repo');
mkdirSync(join(repo, 'src'), { recursive: true });
mkdirSync(join(repo, 'metric'), { recursive: true });

// The artifact: a slug function that starts out doing nothing.
const slugify = (body) => `// Turns a title into a URL slug.\nexport function slugify(title) {\n${body}\n}\n`;
writeFileSync(join(repo, 'src', 'slugify.mjs'), slugify('  return title;'));
// The hard metric: how many of eight cases pass, as JSON. The slug function runs in a process of its
// own and hands back only its answers, so nothing it prints or does (exit early, print a score) can
// reach the line Forge reads a score from: only this script prints that.
writeFileSync(
  join(repo, 'metric', 'score.mjs'),
  `import { execFileSync } from 'node:child_process';
const cases = [
  ['Hello World', 'hello-world'], ['hello', 'hello'], ['Forge Loops', 'forge-loops'],
  ['  padded  ', 'padded'], ['Rock & Roll!', 'rock-roll'], ['C++ in 2026', 'c-in-2026'],
  ['multiple   spaces', 'multiple-spaces'], ['Ünïcödé Tïtle', 'unicode-title'],
];
const run = \`import { slugify } from './src/slugify.mjs';
const answers = JSON.parse(process.argv[1]).map((title) => { try { return slugify(title); } catch { return null; } });
process.stdout.write(JSON.stringify(answers));\`;
let answers = [];
try {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', run, JSON.stringify(cases.map(([input]) => input))],
    { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
  answers = JSON.parse(out);
} catch { /* it crashed, hung or answered something else: every case fails */ }
const passed = cases.filter(([, expected], i) => Array.isArray(answers) && answers[i] === expected).length;
console.log(JSON.stringify({ passed, total: cases.length }));
`,
);
writeFileSync(join(repo, '.gitignore'), '.forge/\n.beads/\n.autoresearch/\n');
const gitEnv = {
  ...process.env,
  GIT_AUTHOR_NAME: 'Forge Demo',
  GIT_AUTHOR_EMAIL: 'demo@forge.invalid',
  GIT_COMMITTER_NAME: 'Forge Demo',
  GIT_COMMITTER_EMAIL: 'demo@forge.invalid',
};
const git = (...args) =>
  execFileSync('git', ['-c', 'commit.gpgSign=false', ...args], { cwd: repo, env: gitEnv, stdio: 'pipe' });
git('init', '-q', '-b', 'main');
git('add', '-A');
git('commit', '-q', '-m', 'demo: a slug function that does nothing yet');

// What the scripted agent does, bead by bead: four doer attempts (one of them a regression),
// strategists that stamp the next iteration (or the retrospective once the loop has ended).
const forge = [node, forgePack, '-C', repo, '--store', 'embedded'];
const doer = (iter, body, hypothesis) => ({
  when: { role: 'doer', iter },
  steps: [
    { write: 'src/slugify.mjs', content: slugify(body) },
    { say: `Rewrote slugify.\nHYPOTHESIS: ${hypothesis}` },
  ],
});
const script = {
  rules: [
    doer(
      1,
      '  return title.trim().toLowerCase().split(" ").join("-");',
      'lower-casing and dashing spaces fixes the simple titles',
    ),
    doer(
      2,
      '  return title.replace(/[a-z]/g, "");',
      'dropping letters removes the odd characters (a bad idea, on purpose)',
    ),
    doer(
      3,
      '  return title.trim().toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");',
      'collapsing every run of non-alphanumerics into one dash handles punctuation',
    ),
    doer(
      4,
      '  return title.normalize("NFKD").replace(/[\\u0300-\\u036f]/g, "").trim().toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");',
      'stripping diacritics first handles accented titles',
    ),
    {
      when: { role: 'strategist', exists: '.autoresearch/terminal-signal.json' },
      steps: [
        { run: [...forge, 'stamp', '--epic', '{{epic}}', '--retrospective'] },
        { say: 'The loop has ended; stamped the retrospective.' },
      ],
    },
    {
      when: { role: 'strategist' },
      steps: [
        {
          write: '.autoresearch/directives/directive-{{next_iter}}.md',
          content: 'Handle the cases the last judge still fails; keep the function small.\n',
        },
        {
          run: [
            ...forge,
            'stamp',
            '--epic',
            '{{epic}}',
            '--iter',
            '{{next_iter}}',
            '--directive-file',
            `${repo}/.autoresearch/directives/directive-{{next_iter}}.md`,
          ],
        },
        { say: 'Stamped the next iteration.' },
      ],
    },
    {
      when: { role: 'retrospective' },
      steps: [
        {
          write: '.autoresearch/retrospective.md',
          content:
            '# Retrospective\n\nPunctuation and diacritics were the hard cases; the letter-dropping idea was reverted.\n',
        },
        {
          write: '.autoresearch/rubric-suggestions.md',
          content: '# Rubric suggestions\n\nAdd cases for leading digits and emoji.\n',
        },
        { say: 'Wrote the retrospective.' },
      ],
    },
  ],
};
const scriptPath = join(base, 'scripted-agent.json');
writeFileSync(scriptPath, `${JSON.stringify(script, null, 2)}\n`);
const env = { ...gitEnv, FORGE_SCRIPTED_AGENT: scriptPath, NO_COLOR: process.env.NO_COLOR ?? '' };
if (env.NO_COLOR === '') delete env.NO_COLOR;

function run(file, args, { capture = false } = {}) {
  const result = spawnSync(node, [file, ...args], {
    cwd: repo,
    env,
    stdio: ['ignore', capture ? 'pipe' : 'inherit', 'inherit'],
    encoding: 'utf8',
  });
  if (result.status !== 0) {
    process.stderr.write(
      `\nThe demo failed: ${file} ${args.join(' ')} exited ${result.status}. Files kept in ${base}\n`,
    );
    process.exit(result.status ?? 1);
  }
  return result.stdout;
}

say(`Stamping a loop in ${repo}`);
const epic = run(
  forgePack,
  [
    '--store',
    'embedded',
    'loop',
    'slugify',
    '--program',
    'Make src/slugify.mjs turn any title into a clean URL slug: lower case, words joined by single dashes, no punctuation or accents.',
    '--metric-command',
    'node metric/score.mjs',
    '--score',
    'json:passed',
    '--direction',
    'maximize',
    '--target',
    '8',
    '--max-iterations',
    '6',
    '--plateau',
    '3',
    '--scope',
    'src/',
    '--agents',
    'doer=scripted,judge=scripted,strategist=scripted',
  ],
  { capture: true },
).trim();

say(`Running ralph-loop ${epic} with the scripted agent`);
run(ralphLoop, ['--store', 'embedded', epic, '--agent', 'scripted', '--backoff', '1']);

say(`ralph-loop status ${epic}`);
run(ralphLoop, ['--store', 'embedded', 'status', epic]);

say('Git history of the loop');
process.stderr.write(git('log', '--oneline').toString());

const seconds = ((Date.now() - started) / 1000).toFixed(1);
if (keep) {
  say(`Done in ${seconds}s. Files kept in ${repo}`);
  process.stderr.write(
    `  .autoresearch/research-log.jsonl   the ledger (one line per iteration)\n` +
      `  .autoresearch/retrospective.md     what the loop learned\n` +
      `  .autoresearch/logs/, runs/         transcripts and NDJSON events\n` +
      `  .beads/issues.jsonl                the beads (br's format)\n` +
      `Try: cd ${repo} && node ${ralphLoop} status ${epic} --json\n`,
  );
} else {
  rmSync(base, { recursive: true, force: true });
  say(`Done in ${seconds}s. The temp repo was removed (npm run demo -- --keep to look around).`);
}
