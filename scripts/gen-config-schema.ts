// Generates the JSON Schemas of Forge's config files from their zod schemas (the single source of truth).
// Usage: tsx scripts/gen-config-schema.ts           writes schemas/*.schema.json
//        tsx scripts/gen-config-schema.ts --check   exits 1 when a committed schema is out of date
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';
import { z } from 'zod';
import { loopConfigSchema } from '../src/autoresearch/config-schema.js';
import { runStateSchema } from '../src/autoresearch/spec-state/schema.js';
import { pipelineSchema } from '../src/autoresearch/pipeline-schema.js';
import { forgeConfigSchema } from '../src/cli/forge-config.js';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

type JsonSchema = Record<string, unknown>;

interface SchemaSpec {
  schema: z.ZodType;
  title: string;
  description: string;
  /** Descriptions of fields, by dotted path through `properties` (editors show them on hover). */
  fields: Record<string, string>;
}

const SCHEMAS: Record<string, SchemaSpec> = {
  'schemas/forge-config.schema.json': {
    schema: forgeConfigSchema,
    title: 'Forge repository config (.forge/config.json)',
    description: 'Per-repo settings for forge-pack and ralph-loop. Written by `forge-pack init`.',
    fields: {
      store: 'Bead store: br, embedded (.beads/issues.jsonl without br), or auto (br when it is on PATH).',
      actor: 'Name recorded on bead changes (default: forge).',
      br_path: 'The br executable to use (default: br on PATH).',
      agent_commands:
        'Your own agents: a name → the argv to run (prompt on stdin), e.g. "my-agent": ["my-agent", "--flag"]. Use the name in "agents", in agent:<name> labels, --agent and --agents.',
      agents:
        'Agent per role (doer, judge, strategist, …) and "default" for every other role. ralph-loop --agent/--agents and a bead\'s agent:<name> label win over these.',
      runner: 'Defaults for ralph-loop runs; command-line flags win.',
      'runner.bead_timeout_seconds': "Per-bead limit; the agent's whole process group is killed.",
      'runner.max_attempts': 'Attempts per bead before it is labelled ralph:failed.',
      'runner.auto_commit': 'Commit what a code-writing bead changed, naming the bead.',
      'runner.run_gates':
        'Run the gates after each code-writing bead (default true); --gates/--no-gates win.',
      'runner.gate_timeout_seconds':
        'Time each gate may take unless it sets its own (default 600); then it is killed.',
      gates:
        'Checks run after each code-writing bead, before it closes or commits: a name → argv (run without a shell), or {"argv": [...], "timeout_seconds": N}. A bead\'s gates:<name> labels pick some; gates:none, none.',
    },
  },
  'schemas/loop-config.schema.json': {
    schema: loopConfigSchema,
    title: 'Forge autoresearch loop config (.autoresearch/config.json)',
    description: 'One autoresearch loop: written by `forge-pack loop`, read by the runner and the arbiter.',
    fields: {
      subject: 'What the loop improves, in a few words; bead titles carry it.',
      epic_id: 'The epic whose beads make up the loop.',
      metric: 'Hard (a command the runner runs) or soft (a rubric a read-only judge agent applies).',
      target: 'Stop when the score reaches this; null for no target.',
      min_delta:
        'An improvement must beat the best score by more than this (maximize: score > best + min_delta).',
      caps: 'When the loop stops on its own; 0 means no cap.',
      'caps.max_iterations': 'Stop after this many iterations.',
      'caps.wall_clock_seconds': 'Stop after this long.',
      'caps.plateau_threshold': 'Stop after this many non-improvements in a row.',
      'caps.max_cost_usd': 'Stop when agents have cost this much.',
      scope: 'Paths the doer may change and the judge may read, relative to the repository root.',
      agents:
        'Agent per role, stamped on the beads as agent:<name>: claude-opus, claude-haiku, codex, or a name from .forge/config.json "agent_commands".',
      confirmation_rounds: 'Iterations in a row that must meet the target.',
      population:
        'Candidates per iteration: K doers from the same base, each in its own worktree, each judged blind; the arbiter may keep the best.',
      spec: "The spec this loop serves (specs/<slug>/): when the loop ends, its retrospective records the outcome in the spec's run state and puts it back at the readiness gate.",
    },
  },
  'schemas/spec-run-state.schema.json': {
    schema: runStateSchema,
    title: 'Forge spec run state (specs/<slug>/run-state.json)',
    description:
      "The readiness state machine of one spec. Written only by `forge-pack spec record|advance` (and a serving loop's retrospective); read with `forge-pack spec status`.",
    fields: {
      prompt:
        'How intake judged the request; a sparse one needs at least one question round before PLANNING_READY.',
      phase: 'One of the twelve phases, in order; forward moves go one phase at a time.',
      planning: 'The planning state, fixed by the phase (DISCOVERY … PLANNING_READY).',
      handoff: 'ELIGIBLE only in PLANNING_READY; leaving it withdraws the handoff.',
      evidence: 'What the evidence fan-out found, E1, E2, …, each with its source.',
      claims: 'Canonical claims, C1, …, each citing the evidence it rests on (provenance).',
      reducer: 'The one reducer that merged the fan-out into claims.',
      gaps: 'What the gap analysis found; null until it ran, [] for none.',
      question_rounds: 'Rounds of questions asked of the user, and how many were answered.',
      draft: 'The draft spec the draft phase recorded: its repository-relative path and content hash.',
      scores: 'Completeness per dimension, 0-100; the readiness gate needs every one at least 80.',
      blockers: 'Blocker reasons; an open one shuts the gate whatever the scores.',
      reviews:
        "Adversarial reviewers' reports; PLANNING_READY needs each reviewer's latest at zero material findings.",
      beads_epic: 'The build epic beads generation created.',
      loop: 'The last loop that served this spec (strategy, final score, terminal reason), recorded by its retrospective.',
      history: 'Every transition (who, why, from, to) and every record, oldest first.',
    },
  },
  'schemas/pipeline.schema.json': {
    schema: pipelineSchema,
    title: 'Forge pipeline of loops (forge-pack pipeline <file>)',
    description:
      'Named stages run one after another from one parent epic: autoresearch loops (the fields of forge-pack loop, named as in config.json) or existing epics run to completion with their gates.',
    fields: {
      name: 'The pipeline name: one pipeline per name; running forge-pack pipeline again creates nothing twice.',
      stages: 'In order: each stage starts when the one before it has passed.',
    },
  },
};

/** The schema files as they should be on disk, formatted as prettier would. */
export async function renderSchemas(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const [file, spec] of Object.entries(SCHEMAS)) {
    const generated = z.toJSONSchema(spec.schema, { io: 'input', unrepresentable: 'any' }) as JsonSchema;
    const { $schema, ...rest } = generated;
    const document: JsonSchema = { $schema, title: spec.title, description: spec.description, ...rest };
    for (const [path, text] of Object.entries(spec.fields)) describeField(document, path, text);
    const path = join(ROOT, file);
    const options = (await prettier.resolveConfig(path)) ?? {};
    out.set(file, await prettier.format(JSON.stringify(document), { ...options, filepath: path }));
  }
  return out;
}

function describeField(document: JsonSchema, dotted: string, text: string): void {
  let node: JsonSchema | undefined = document;
  for (const key of dotted.split('.')) {
    const properties = node?.properties as Record<string, JsonSchema> | undefined;
    node = properties?.[key];
  }
  if (node === undefined) throw new Error(`gen-config-schema: no field ${dotted} in the schema`);
  node.description = text;
}

async function main(argv: string[]): Promise<number> {
  const check = argv.includes('--check');
  const stale: string[] = [];
  for (const [file, text] of await renderSchemas()) {
    const path = join(ROOT, file);
    const current = await readFile(path, 'utf8').catch(() => undefined);
    if (current === text) continue;
    if (check) {
      stale.push(file);
      continue;
    }
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text);
    process.stderr.write(`wrote ${file}\n`);
  }
  if (stale.length > 0) {
    process.stderr.write(`Out of date: ${stale.join(', ')}. Run: npm run schemas\n`);
    return 1;
  }
  return 0;
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.exitCode = await main(process.argv.slice(2));
}
