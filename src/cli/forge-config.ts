// `.forge/config.json`: per-repo settings (store, agents per role, runner defaults), validated with zod.
import { join } from 'node:path';
import { z } from 'zod';
import { isBuiltInAgentName, parseAgentSpec } from '../agents/spec.js';
import { parseJsonText, readJsonFile } from '../infra/json-file.js';

export const FORGE_CONFIG_PATH = join('.forge', 'config.json');

const argvSchema = z.array(z.string().min(1)).min(1);

/** What a name of the user's own agent may look like: it travels in labels such as `agent:my-agent`. */
const AGENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A gate's name travels in `gates:NAME` labels, so it is kept to what a label may hold. */
const GATE_NAME = /^[A-Za-z0-9_-]{1,40}$/;

export const forgeConfigSchema = z
  .strictObject({
    $schema: z.string().optional(),
    store: z.enum(['auto', 'br', 'embedded']).default('auto'),
    actor: z.string().min(1).optional(),
    br_path: z.string().min(1).optional(),
    /**
     * The user's own agents: a name (used in `agents`, `agent:` labels, `--agent`, `--agents`) → the
     * argv to run, prompt on stdin. Labels can name these; they can never carry a command themselves.
     */
    agent_commands: z
      .record(z.string().regex(AGENT_NAME, 'a name of letters, digits, ".", "_" or "-"'), argvSchema)
      .superRefine((commands, ctx) => {
        for (const name of Object.keys(commands)) {
          if (isBuiltInAgentName(name))
            ctx.addIssue({
              code: 'custom',
              path: [name],
              message: `"${name}" is one of Forge's own agents (claude…, codex…, opencode…, gemini…, scripted); give yours another name`,
            });
        }
      })
      .default({}),
    /** Agent spec per role (`doer`, `judge`, …) and `default` for everything else. */
    agents: z.record(z.string().regex(/^[a-z][a-z0-9-]*$/, 'a role name'), z.string().min(1)).default({}),
    runner: z
      .strictObject({
        bead_timeout_seconds: z.number().int().positive().optional(),
        max_attempts: z.number().int().positive().optional(),
        auto_commit: z.boolean().optional(),
        /** With auto_commit: the largest file a commit takes, in bytes (default 100 MiB; 0: no limit). */
        max_file_bytes: z.number().int().min(0).optional(),
        /** With auto_commit: what one bead's commit takes in all, in bytes (default 1 GiB; 0: no limit). */
        max_change_bytes: z.number().int().min(0).optional(),
        /** With auto_commit: how many files one bead's commit takes (default 10,000; 0: no limit). */
        max_change_files: z.number().int().min(0).optional(),
        /** Plain agent beads run at once, each in a worktree (default 1); --parallel wins. */
        parallel: z.number().int().min(1).max(64).optional(),
        /** Run the gates after each code-writing bead (default true); --gates/--no-gates win. */
        run_gates: z.boolean().optional(),
        /** Each gate's timeout unless it sets its own (default 600). */
        gate_timeout_seconds: z.number().int().positive().optional(),
      })
      .default({}),
    /**
     * Checks run after each code-writing bead (detected by `forge-pack init`): a name → its argv, or
     * `{argv, timeout_seconds}` for a gate with its own timeout. Names are what `gates:` labels pick.
     */
    gates: z
      .record(
        z
          .string()
          .regex(
            GATE_NAME,
            'a gate name is 1-40 letters, digits, "_" or "-" (a gates:<name> label must hold it)',
          ),
        z.union(
          [
            argvSchema,
            z.strictObject({ argv: argvSchema, timeout_seconds: z.number().int().positive().optional() }),
          ],
          {
            // zod says only "Invalid input" when no shape matches; a string is the usual slip.
            error:
              'expected an argv array (["npm", "test"]) or {"argv": [...], "timeout_seconds": N}; a command is never a shell string',
          },
        ),
      )
      .default({}),
    /**
     * Commands run when a run ends (`on_end`), waits for a human (`on_needs_human`) or fails
     * (`on_failure`), as argv arrays, with the epic, exit code and reason in FORGE_* variables.
     */
    hooks: z
      .strictObject({
        on_end: argvSchema.optional(),
        on_needs_human: argvSchema.optional(),
        on_failure: argvSchema.optional(),
        timeout_seconds: z.number().int().positive().optional(),
      })
      .optional(),
  })
  .superRefine((config, ctx) => {
    // An agent the run could not start is the config's fault, said when it is read: `gemini-` passed
    // doctor, validate and --dry-run, then failed its first bead (exit 5, the bead labelled).
    for (const [role, spec] of Object.entries(config.agents)) {
      const parsed = parseAgentSpec(spec, { allowCommand: true, commands: config.agent_commands });
      if (!parsed.ok) ctx.addIssue({ code: 'custom', path: ['agents', role], message: parsed.reason });
    }
  });

export type ForgeConfig = z.infer<typeof forgeConfigSchema>;

/** Loads `.forge/config.json` under `cwd`; a missing file gives the defaults. */
export async function loadForgeConfig(cwd: string): Promise<ForgeConfig> {
  const config = await readJsonFile(join(cwd, FORGE_CONFIG_PATH), forgeConfigSchema, {
    file: FORGE_CONFIG_PATH,
  });
  return config ?? forgeConfigSchema.parse({});
}

/** Parses JSON text against a schema; every problem is reported as `file: field.path: message`. */
export function parseConfigText<T extends z.ZodType>(file: string, text: string, schema: T): z.infer<T> {
  return parseJsonText(text, schema, { file });
}
