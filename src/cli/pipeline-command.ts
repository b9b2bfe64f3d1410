// `forge-pack pipeline <file>`: a pipeline of loops as one bead graph (a parent epic, a stage bead each).
import type { Command } from 'commander';
import { globals, openStoreFor, readUserFile, workingDir } from './common.js';
import type { CliDeps } from './deps.js';
import { printJson, say } from './output.js';

export function definePipelineCommand(command: Command, deps: CliDeps): void {
  command
    .argument('<file>', 'the pipeline definition (JSON; see schemas/pipeline.schema.json)')
    .action(async (file: string, _flags: unknown, cmd: Command) => {
      const options = globals(cmd);
      const repo = workingDir(deps, options);
      const [{ parsePipelineText }, { setupPipeline }, { UsageError }] = await Promise.all([
        import('../autoresearch/pipeline-schema.js'),
        import('../autoresearch/pipeline-setup.js'),
        import('../infra/errors.js'),
      ]);
      const text = await readUserFile(deps, options, file, 'the pipeline file');
      const { raw, definition } = parsePipelineText(text, file);
      const programs: Record<string, string> = {};
      for (const stage of definition.stages) {
        if (stage.type !== 'loop') continue;
        const program =
          stage.program ??
          (await readUserFile(
            deps,
            options,
            stage.program_file ?? '',
            `the program file of stage ${stage.name}`,
          ));
        if (program.trim() === '') {
          throw new UsageError(`Stage "${stage.name}": the program is empty.`, {
            hint: 'The program is the stable directive every doer of the stage reads.',
          });
        }
        programs[stage.name] = program;
      }
      const { store } = (await openStoreFor(deps, options)).opened;
      await store.init();
      const result = await setupPipeline(repo, { raw, definition, programs }, store);
      if (options.json) printJson(deps, { ...result, run: `ralph-loop ${result.parent}` });
      else deps.stdout.write(`${result.parent}\n`);
      say(
        deps,
        `${result.created ? 'Created' : 'Found'} the pipeline "${result.name}": epic ${result.parent}, stages ${result.stages
          .map((s) => `${s.name} ${s.bead}`)
          .join(' → ')}.`,
      );
      say(deps, `Run it: ralph-loop ${result.parent}; see every stage: ralph-loop status ${result.parent}`);
    });
  command.addHelpText(
    'after',
    `
Example pipeline.json:
  { "name": "rate-limiter",
    "stages": [
      { "name": "spec", "type": "loop", "program_file": "programs/spec.md",
        "metric": { "type": "soft", "rubric_path": "rubrics/spec.md", "artifact_path": "docs/spec.md" },
        "target": 80, "caps": { "max_iterations": 5 } },
      { "name": "build", "type": "epic", "epic": "bd-12" },
      { "name": "qa", "type": "loop", "program": "Make the end-to-end checks pass.",
        "metric": { "type": "hard", "command": "npm run e2e -- --reporter=tap", "score": { "from": "tap" } },
        "target": 100, "scope": ["src/"] } ] }

A loop stage has the fields of forge-pack loop, named as in config.json; its workspace defaults to
.autoresearch-<stage>. An epic stage runs an existing epic (one imported from a spec plan) to the end,
with its gates. "passes_when" says what lets the next stage start: for a loop, goal_reached (the
default), ended, or spec_ready (the loop ended and the spec it names in "spec": "<slug>" passes its
readiness gate); for an epic, all_closed. Running this again with the same file creates nothing twice.`,
  );
}
