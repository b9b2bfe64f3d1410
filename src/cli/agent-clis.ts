// The agent CLIs Forge knows: four with adapters of their own, the rest run by name through
// `agent_commands` (name → argv). Doctor lists those it finds; init offers the installed ones.

export interface KnownAgentCli {
  /** The executable's name. */
  name: string;
  /** How init names it when it asks. */
  label: string;
  install: string;
  /** How it is asked its version. */
  versionArgs: readonly string[];
  /** Agents per role that init writes when the user picks this CLI. */
  agents: Readonly<Record<string, string>>;
  /**
   * For CLIs without an adapter: the named agents init writes into `agent_commands` (full tools and
   * read-only). The prompt reaches a CLI that only takes it as an argument through `"$(cat)"`: the
   * shell substitutes stdin as one word and never evaluates what it contains.
   */
  commands?: Readonly<Record<string, readonly string[]>>;
}

/** `sh -c 'exec <cli> … "$(cat)" …'`: the prompt from stdin as one argument, never as shell code. */
function promptAsArgument(script: string, name: string): readonly string[] {
  return ['sh', '-c', script, name];
}

export const AGENT_CLIS = [
  {
    name: 'claude',
    label: 'Claude Code (claude: opus does, haiku judges, sonnet plans)',
    install: 'npm install -g @anthropic-ai/claude-code',
    versionArgs: ['--version'],
    agents: {
      default: 'claude-sonnet',
      doer: 'claude-opus',
      judge: 'claude-haiku',
      strategist: 'claude-sonnet',
    },
  },
  {
    name: 'codex',
    label: 'Codex (codex)',
    install: 'npm install -g @openai/codex',
    versionArgs: ['--version'],
    agents: { default: 'codex' },
  },
  {
    name: 'opencode',
    label: 'opencode (opencode, its configured model)',
    install: 'npm install -g opencode-ai',
    versionArgs: ['--version'],
    agents: { default: 'opencode' },
  },
  {
    name: 'gemini',
    label: 'Gemini CLI (gemini: pro does, flash judges)',
    install: 'npm install -g @google/gemini-cli',
    versionArgs: ['--version'],
    agents: { default: 'gemini-pro', judge: 'gemini-flash' },
  },
  {
    name: 'copilot',
    label: 'GitHub Copilot CLI (copilot, by name)',
    install: 'npm install -g @github/copilot',
    versionArgs: ['--version'],
    agents: { default: 'copilot', judge: 'copilot-read-only' },
    commands: {
      // -p needs --allow-all-tools (1.0.102 --help); --deny-tool takes precedence over it.
      copilot: promptAsArgument('exec copilot -p "$(cat)" --allow-all-tools', 'copilot'),
      'copilot-read-only': promptAsArgument(
        'exec copilot -p "$(cat)" --allow-all-tools --deny-tool shell --deny-tool write',
        'copilot',
      ),
    },
  },
  {
    name: 'qwen',
    label: 'Qwen Code (qwen, by name)',
    install: 'npm install -g @qwen-code/qwen-code',
    versionArgs: ['--version'],
    agents: { default: 'qwen', judge: 'qwen-read-only' },
    commands: {
      qwen: ['qwen', '--output-format', 'json', '--approval-mode', 'yolo'],
      'qwen-read-only': ['qwen', '--output-format', 'json', '--approval-mode', 'plan'],
    },
  },
  {
    name: 'amp',
    label: 'Amp (amp, by name)',
    install: 'npm install -g @ampcode/cli',
    versionArgs: ['--version'],
    agents: { default: 'amp' },
    commands: { amp: ['amp', '-x', '--stream-json', '--dangerously-allow-all'] },
  },
  {
    name: 'cursor-agent',
    label: 'Cursor agent (cursor-agent, by name)',
    install: 'curl https://cursor.com/install -fsS | bash',
    versionArgs: ['--version'],
    agents: { default: 'cursor', judge: 'cursor-read-only' },
    commands: {
      cursor: promptAsArgument('exec cursor-agent -p --output-format json --force "$(cat)"', 'cursor-agent'),
      'cursor-read-only': promptAsArgument(
        'exec cursor-agent -p --output-format json --mode ask "$(cat)"',
        'cursor-agent',
      ),
    },
  },
] as const satisfies readonly KnownAgentCli[];

export type AgentCliName = (typeof AGENT_CLIS)[number]['name'];

export function knownAgentCli(name: AgentCliName): KnownAgentCli {
  return AGENT_CLIS.find((cli) => cli.name === name) ?? AGENT_CLIS[0];
}
