// Renders loop events for people: one line per bead on stderr, plus a live status line on a TTY.
import pc from 'picocolors';
import { DECISION_WORDS } from '../autoresearch/decision-words.js';
import { formatNumber } from './loop-status-text.js';
import type { Decision } from '../autoresearch/ledger.js';
import type { LoopEvent } from '../loop/types.js';
import type { TextSink } from '../infra/text-sink.js';
import { terminalValue } from '../infra/terminal-text.js';

export interface ProgressOptions {
  sink: TextSink;
  tty: boolean;
  color: boolean;
  now: () => number;
}

export interface ProgressRenderer {
  render(event: LoopEvent): void;
  stop(): void;
}

export function createProgressRenderer(options: ProgressOptions): ProgressRenderer {
  const c = pc.createColors(options.color);
  interface Live {
    bead: string;
    role: string;
    agent: string;
    since: number;
    note?: string;
    progress?: { done: number; total: number } | undefined;
  }
  let live: Live | undefined;
  /** Beads whose agent is at work, in the order they started (several in a `--parallel` run). */
  const running = new Map<string, Live>();
  const runStarted = options.now();
  let liveShown = false;
  let ticker: ReturnType<typeof setInterval> | undefined;

  const clearLive = () => {
    if (liveShown) options.sink.write('\r\x1b[2K');
    liveShown = false;
  };
  const drawLive = () => {
    if (!options.tty || live === undefined) return;
    const elapsed = formatElapsed(options.now() - live.since);
    const note = live.note === undefined ? '' : c.dim(` · ${live.note}`);
    const progress =
      live.progress === undefined
        ? ''
        : c.dim(
            `[${live.progress.done}/${live.progress.total} done · ${formatElapsed(options.now() - runStarted)}] `,
          );
    const what =
      running.size > 1
        ? `${running.size} running: ${[...running.keys()].join(', ')}`
        : `${live.bead} ${c.dim(`${live.role} via ${live.agent}`)} ${elapsed}${note}`;
    options.sink.write(`\r\x1b[2K${progress}${c.cyan('…')} ${what}`);
    liveShown = true;
  };
  const line = (text: string) => {
    clearLive();
    options.sink.write(`${text}\n`);
    drawLive();
  };

  return {
    render(raw) {
      // Titles, messages and reasons come from beads and agents: shown, never obeyed (terminal-text.ts).
      const event = terminalValue(raw);
      switch (event.type) {
        case 'run_started':
          line(
            c.bold(
              `ralph-loop ${event.dry_run ? 'dry run of' : 'running'} epic ${event.epic} (run ${event.run_id})`,
            ),
          );
          break;
        case 'warning':
          line(`${c.yellow('warning:')} ${event.message}`);
          break;
        case 'recovered':
          line(`${c.yellow('recovered')} ${event.bead}: ${event.message}`);
          break;
        case 'tamper':
          line(`${c.red('tamper')} ${event.bead}: ${event.message}`);
          break;
        case 'judged':
          line(
            c.dim(
              `  iter ${event.iter} judged: ${
                event.score === null ? `no score (${event.failure ?? 'unknown'})` : formatNumber(event.score)
              }${event.evidence === undefined ? '' : ` · ${event.evidence}`}`,
            ),
          );
          break;
        case 'decided': {
          const word = DECISION_WORDS[event.decision as Decision] ?? event.decision;
          const scores =
            event.decision === 'baseline'
              ? formatNumber(event.score)
              : `${formatNumber(event.best_before)} → ${formatNumber(event.score)}`;
          const end = event.terminal === null ? '' : `; the loop ends: ${event.terminal}`;
          const noise =
            event.noise_band === undefined
              ? ''
              : ` (${event.within_noise === true ? 'within the noise' : 'noise'} ±${formatNumber(event.noise_band)})`;
          line(c.bold(`iter ${event.iter}: ${scores} ${word}${noise}${end}`));
          break;
        }
        case 'plan':
          event.order.forEach((step, index) =>
            line(
              `  ${String(index + 1).padStart(3)}. ${step.id}  ${c.dim(`role:${step.role} ${step.agent === 'built-in' ? 'built-in' : `via ${step.agent} (from ${step.agent_source})`}`)}  ${step.title}`,
            ),
          );
          break;
        case 'bead_started': {
          live = {
            bead: event.bead,
            role: event.role,
            agent: event.agent,
            since: options.now(),
            progress: event.progress,
          };
          running.set(event.bead, live);
          const via = event.agent === 'built-in' ? event.executor : `${event.executor} ${event.agent}`;
          line(
            `${c.cyan('▶')} ${event.bead} ${event.title} ${c.dim(`(role:${event.role}, ${via}, attempt ${event.attempt})`)}`,
          );
          if (options.tty && ticker === undefined) {
            ticker = setInterval(drawLive, 1000);
            ticker.unref();
          }
          break;
        }
        case 'activity':
          if (live !== undefined) live.note = event.message;
          if (options.tty) drawLive();
          else line(c.dim(`  ${event.bead}: ${event.message}`));
          break;
        case 'attempt_finished': {
          running.delete(event.bead);
          live = [...running.values()].at(-1);
          const usage = [
            formatElapsed(event.duration_ms),
            (event.input_tokens ?? 0) + (event.output_tokens ?? 0) === 0
              ? undefined
              : `${formatTokens((event.input_tokens ?? 0) + (event.output_tokens ?? 0))} tokens`,
            event.cost_usd === undefined ? undefined : `$${event.cost_usd.toFixed(4)}`,
            event.scripted ? 'scripted agent' : undefined,
          ].filter((part) => part !== undefined);
          const mark = event.outcome === 'ok' ? c.green('✓') : c.red('✗');
          line(
            `${mark} ${event.bead} ${event.outcome} ${c.dim(`(${usage.join(' · ')})`)}${event.outcome === 'ok' ? '' : `: ${event.message}`}`,
          );
          break;
        }
        case 'gate_finished': {
          const how = event.ok
            ? c.green('passed')
            : c.red(event.timed_out === true ? 'timed out' : `failed (exit ${event.exit ?? 'none'})`);
          line(
            `  gate ${event.gate} ${how} ${c.dim(`(${formatElapsed(event.duration_ms)}, ${event.argv.join(' ')})`)}`,
          );
          break;
        }
        case 'waiting':
          line(`${c.yellow('…')} ${event.bead} ${event.why}: waiting until ${event.until}`);
          break;
        case 'bead_closed':
          line(
            c.dim(
              `  closed ${event.bead}${event.commit === undefined ? '' : `, committed ${event.commit.slice(0, 10)}`}`,
            ),
          );
          break;
        case 'merged':
          line(c.dim(`  merged ${event.bead} (attempt ${event.attempt}) as ${event.commit.slice(0, 10)}`));
          break;
        case 'merge_conflict':
          line(
            `${c.yellow('conflict')} ${event.bead} (attempt ${event.attempt}): ${event.message.split('\n')[0] ?? ''}`,
          );
          break;
        case 'bead_failed':
          line(`${c.red('failed')} ${event.bead} after ${event.attempts} attempt(s): ${event.message}`);
          break;
        case 'run_finished': {
          live = undefined;
          running.clear();
          const s = event.summary;
          const cost = s.costUsd > 0 ? `, $${s.costUsd.toFixed(4)}` : '';
          const gates = s.gateMs === undefined ? '' : `, gates ${formatElapsed(s.gateMs)}`;
          if (s.reason === 'dry_run') break;
          line(
            `${c.bold(`stopped: ${s.reason}`)} (${s.beadsClosed} of ${s.beadsRun} bead(s) run closed${cost}${gates})`,
          );
          break;
        }
      }
    },
    stop() {
      if (ticker !== undefined) clearInterval(ticker);
      clearLive();
    },
  };
}

export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.round(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  return h > 0
    ? `${h}h${String(m).padStart(2, '0')}m`
    : m > 0
      ? `${m}m${String(s).padStart(2, '0')}s`
      : `${s}s`;
}

function formatTokens(n: number): string {
  return n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}
