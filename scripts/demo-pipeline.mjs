// `npm run demo -- --pipeline`: a three-stage pipeline of loops from one `ralph-loop <parent>`, in a temp
// git repo on the embedded bead store, with the scripted agent standing in for models. A SPEC stage
// (a soft rubric), a BUILD stage (an epic whose bead must pass a test gate) and a QA stage (a hard
// metric). Pass --keep to keep the repo. Run through scripts/demo.mjs, which builds Forge first.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function runPipelineDemo({ root, keep, say }) {
  const node = process.execPath;
  const forgePack = join(root, 'bin', 'forge-pack.js');
  const ralphLoop = join(root, 'bin', 'ralph-loop.js');
  const started = Date.now();
  const base = mkdtempSync(join(tmpdir(), 'forge-pipeline-demo-'));
  const repo = join(base, 'repo');
  const files = {
    '.gitignore': '.forge/*\n!.forge/config.json\n.beads/\n.autoresearch-*/\nlib/\n',
    '.forge/config.json': `${JSON.stringify({ store: 'embedded', gates: { test: ['node', 'check.mjs'] } }, null, 2)}\n`,
    'docs/limiter.md': '# Rate limiter\n\nTODO\n',
    'rubric.md': 'Score the spec from 0 to 10: behaviour, limits, errors, examples.\n',
    'src/limit.txt': '10\n',
    'metric/qa.mjs': `import { readFileSync } from 'node:fs';\nconsole.log(JSON.stringify({ passed: Number(readFileSync('src/limit.txt', 'utf8').trim()) }));\n`,
    'check.mjs': `import { existsSync, readFileSync } from 'node:fs';\nconst ok = existsSync('lib/limiter.txt') && readFileSync('lib/limiter.txt', 'utf8').includes('token bucket');\nconsole.log(ok ? 'ok 1 - limiter' : 'not ok 1 - lib/limiter.txt must implement a token bucket');\nprocess.exit(ok ? 0 : 1);\n`,
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
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
  git('commit', '-q', '-m', 'demo: a limiter to specify, build and check');

  const forge = [node, forgePack, '-C', repo, '--store', 'embedded'];
  // Each loop's strategist stamps the next iteration, or the retrospective once its loop has ended.
  const loopRules = (subject, ws) => [
    {
      when: { role: 'strategist', titleIncludes: subject, exists: `${ws}/terminal-signal.json` },
      steps: [{ run: [...forge, 'stamp', '--epic', '{{epic}}', '--retrospective'] }, { say: 'ended' }],
    },
    {
      when: { role: 'retrospective', titleIncludes: subject },
      steps: [
        { write: `${ws}/retrospective.md`, content: `# ${subject}\n\nReached the target.\n` },
        { say: 'ok' },
      ],
    },
    {
      when: { role: 'strategist', titleIncludes: subject },
      steps: [
        {
          write: `${ws}/directives/directive-{{next_iter}}.md`,
          content: 'Close the gaps the judge named.\n',
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
            `${repo}/${ws}/directives/directive-{{next_iter}}.md`,
          ],
        },
        { say: 'stamped' },
      ],
    },
  ];
  const script = {
    rules: [
      {
        when: { role: 'judge', iter: 0, titleIncludes: 'limiter spec' },
        steps: [{ say: '{"score": 3, "findings": ["no limits", "no errors"]}' }],
      },
      {
        when: { role: 'judge', iter: 1, titleIncludes: 'limiter spec' },
        steps: [{ say: '{"score": 6, "findings": ["no errors"]}' }],
      },
      {
        when: { role: 'judge', titleIncludes: 'limiter spec' },
        steps: [{ say: '{"score": 9, "findings": []}' }],
      },
      {
        when: { role: 'doer', iter: 1, titleIncludes: 'limiter spec' },
        steps: [
          { append: 'docs/limiter.md', content: '\n## Limits\n100 requests per minute per key.\n' },
          { say: 'HYPOTHESIS: state the limits' },
        ],
      },
      {
        when: { role: 'doer', titleIncludes: 'limiter spec' },
        steps: [
          { append: 'docs/limiter.md', content: '\n## Errors\n429 with Retry-After.\n' },
          { say: 'HYPOTHESIS: name the errors' },
        ],
      },
      ...loopRules('limiter spec', '.autoresearch-spec'),
      {
        when: { titleIncludes: 'implement', attempt: 1 },
        steps: [{ write: 'lib/limiter.txt', content: 'a fixed window\n' }, { say: 'implemented' }],
      },
      {
        when: { titleIncludes: 'implement' },
        steps: [
          { write: 'lib/limiter.txt', content: 'a token bucket, as the spec says\n' },
          { say: 'fixed after the gate' },
        ],
      },
      {
        when: { role: 'doer', titleIncludes: 'limiter qa' },
        steps: [{ write: 'src/limit.txt', content: '12\n' }, { say: 'HYPOTHESIS: all twelve checks pass' }],
      },
      ...loopRules('limiter qa', '.autoresearch-qa'),
    ],
  };
  const scriptPath = join(base, 'scripted-agent.json');
  writeFileSync(scriptPath, `${JSON.stringify(script, null, 2)}\n`);
  const env = { ...gitEnv, FORGE_SCRIPTED_AGENT: scriptPath };

  const run = (file, args, capture = false) => {
    const result = spawnSync(node, [file, '--store', 'embedded', ...args], {
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
  };

  say('A build plan as an epic (what a spec plan imports as): one bead, checked by the test gate');
  run(forgePack, ['beads', 'init'], true);
  const plan = run(forgePack, ['beads', 'create', 'limiter build plan', '-t', 'epic'], true).trim();
  run(forgePack, ['beads', 'create', 'implement the limiter', '--parent', plan, '-l', 'agent:scripted']);

  const agents = { doer: 'scripted', judge: 'scripted', strategist: 'scripted' };
  const pipeline = {
    name: 'limiter',
    stages: [
      {
        name: 'spec',
        type: 'loop',
        subject: 'limiter spec',
        program: 'Make docs/limiter.md a complete spec of the rate limiter.',
        metric: { type: 'soft', rubric_path: 'rubric.md', artifact_path: 'docs/limiter.md' },
        target: 8,
        caps: { max_iterations: 4 },
        agents,
      },
      { name: 'build', type: 'epic', epic: plan },
      {
        name: 'qa',
        type: 'loop',
        subject: 'limiter qa',
        program: 'Make every end-to-end check of the limiter pass.',
        metric: { type: 'hard', command: 'node metric/qa.mjs', score: { from: 'json', path: 'passed' } },
        target: 12,
        scope: ['src/'],
        agents,
      },
    ],
  };
  writeFileSync(join(repo, 'pipeline.json'), `${JSON.stringify(pipeline, null, 2)}\n`);
  say('forge-pack pipeline pipeline.json');
  const parent = run(forgePack, ['pipeline', 'pipeline.json'], true).trim();

  say(`ralph-loop ${parent}: every stage in turn`);
  run(ralphLoop, [parent, '--backoff', '0']);

  say(`ralph-loop status ${parent}`);
  run(ralphLoop, ['status', parent]);

  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  if (keep) {
    say(`Done in ${seconds}s. Files kept in ${repo}`);
    process.stderr.write(
      `  .forge/pipelines/${parent}.json   the pipeline: stages, their loops and cycles\n` +
        `  .autoresearch-spec/, .autoresearch-qa/   each stage's own loop workspace and ledger\n` +
        `Try: cd ${repo} && node ${ralphLoop} status ${parent} --json\n`,
    );
  } else {
    rmSync(base, { recursive: true, force: true });
    say(`Done in ${seconds}s. The temp repo was removed (npm run demo -- --pipeline --keep to look around).`);
  }
}
