/**
 * Progress lines on stderr: one per iteration, and a final one with the
 * outcome.
 *
 * @module
 */

import { countTools, seconds, usd } from "../common/format.ts";
import type { RunEvent, RunResult } from "./runner.ts";

/**
 * The line printed after an iteration.
 *
 * @param event The iteration_finished event.
 * @returns One line.
 * @example
 * ```ts
 * import { iterationLine } from "./progress.ts";
 * import { emptySummary } from "../common/summary.ts";
 * const line = iterationLine({ type: "iteration_finished", iteration: 1, maxIterations: 3,
 *   summary: { ...emptySummary(1), toolsUsed: ["Bash", "Bash"], durationMs: 2100, costUsd: 0.0012 },
 *   verdict: "continue" });
 * console.assert(line === "[finishline] iteration 1/3 · 2.1s · $0.0012 · tools: Bash×2 · continue");
 * ```
 */
export function iterationLine(
  event: Extract<RunEvent, { type: "iteration_finished" }>,
): string {
  const { summary } = event;
  const tools = countTools(summary.toolsUsed) || "none";
  return `[finishline] iteration ${event.iteration}/${event.maxIterations} · ${
    seconds(summary.durationMs)
  } · ${usd(summary.costUsd)} · tools: ${tools} · ${event.verdict}`;
}

/**
 * The final line of a run.
 *
 * @param result The run's result.
 * @returns One line.
 * @example
 * ```ts
 * import { finalLine } from "./progress.ts";
 * const line = finalLine({ status: "completed", completionReason: "Completed 3/3 iterations",
 *   iterations: 3, costUsd: 0.5, durationMs: 9000 } as never);
 * console.assert(line.startsWith("[finishline] completed: Completed 3/3 iterations"));
 * ```
 */
export function finalLine(result: RunResult): string {
  return `[finishline] ${result.status}: ${result.completionReason} (${result.iterations} iteration${
    result.iterations === 1 ? "" : "s"
  }, ${seconds(result.durationMs)}, ${usd(result.costUsd)})`;
}

/** How progress is shown. */
export type ProgressMode = "live" | "plain" | "quiet" | "verbose";

/**
 * The progress mode: `--quiet` and `--verbose` win; otherwise a live status
 * line on a terminal, plain lines on a pipe or with `CI=true`.
 *
 * @param flags `quiet` and `verbose`.
 * @param terminal Whether stderr is a terminal.
 * @param ci Whether `CI` is set to a true value.
 * @returns The mode.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressMode } from "./progress.ts";
 * assert.equal(progressMode({ quiet: false, verbose: false }, { terminal: true, ci: false }), "live");
 * assert.equal(progressMode({ quiet: false, verbose: false }, { terminal: true, ci: true }), "plain");
 * assert.equal(progressMode({ quiet: true, verbose: false }, { terminal: true, ci: false }), "quiet");
 * ```
 */
export function progressMode(
  flags: { quiet: boolean; verbose: boolean },
  environment: { terminal: boolean; ci: boolean },
): ProgressMode {
  if (flags.quiet) return "quiet";
  if (flags.verbose) return "verbose";
  return environment.terminal && !environment.ci ? "live" : "plain";
}

/** The live status line's state. */
export interface StatusLine {
  /** Current iteration. */
  iteration: number;
  /** Iteration cap. */
  maxIterations: number;
  /** Milliseconds since the run started. */
  elapsedMs: number;
  /** Cost so far. */
  costUsd: number;
  /** The tool the agent used last. */
  tool?: string;
  /** The last verdict. */
  verdict?: string;
}

/**
 * The text of the live status line.
 *
 * @param state The run's state.
 * @returns One line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statusLine } from "./progress.ts";
 * assert.equal(
 *   statusLine({ iteration: 2, maxIterations: 5, elapsedMs: 61_000, costUsd: 0.5, tool: "Bash", verdict: "continue" }),
 *   "iteration 2/5 · 61.0s · $0.5000 · tool: Bash · last: continue",
 * );
 * ```
 */
export function statusLine(state: StatusLine): string {
  return [
    `iteration ${state.iteration}/${state.maxIterations}`,
    seconds(state.elapsedMs),
    usd(state.costUsd),
    `tool: ${state.tool ?? "-"}`,
    `last: ${state.verdict ?? "-"}`,
  ].join(" · ");
}

/** Shows a run's progress on stderr. */
export interface ProgressReporter {
  /** Handle a runner event. */
  onEvent(event: RunEvent): void;
  /** Stop the live line (before the final lines). */
  stop(): void;
}

/** What a live status line needs from dax. */
export interface LiveLine {
  /** Set the line's text. */
  message(text: string): unknown;
  /** Remove the line. */
  finish(): void;
}

/**
 * Build the reporter for a mode: plain lines (one per iteration, plus
 * probes, rescues, the runner's retries and Claude Code's API retries), the same with the agent's text and tool calls
 * (verbose), nothing but errors and the final line (quiet), or a live status
 * line above the plain lines (live).
 *
 * @param mode The mode.
 * @param options Where lines go, the live line, the clock.
 * @returns The reporter.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createReporter } from "./progress.ts";
 * const lines: string[] = [];
 * const reporter = createReporter("plain", { write: (line) => lines.push(line) });
 * reporter.onEvent({ type: "retry", iteration: 1, attempt: 1, reason: "API error: overloaded", waitMs: 2000 });
 * assert.equal(lines[0], "[finishline] iteration 1: retrying in 2.0s (attempt 1 failed: API error: overloaded)");
 * reporter.onEvent({ type: "api_retry", iteration: 1, attempt: 3, maxRetries: 10, status: 529,
 *   error: "overloaded", waitMs: 4800 });
 * assert.equal(lines[1], "[finishline] iteration 1: API retry 3/10 (529 overloaded), next in 4.8s");
 * ```
 */
export function createReporter(
  mode: ProgressMode,
  options: { write: (line: string) => void; live?: () => LiveLine; now?: () => number },
): ProgressReporter {
  const now = options.now ?? (() => performance.now());
  const started = now();
  const state: StatusLine = { iteration: 0, maxIterations: 0, elapsedMs: 0, costUsd: 0 };
  let line: LiveLine | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  const render = () => {
    state.elapsedMs = now() - started;
    line?.message(statusLine(state));
  };
  const write = (text: string) => {
    if (mode !== "quiet") options.write(text);
  };
  return {
    onEvent(event: RunEvent): void {
      switch (event.type) {
        case "iteration_started":
          state.iteration = event.iteration;
          state.maxIterations = event.maxIterations;
          state.tool = undefined;
          if (mode === "live" && options.live && !line) {
            line = options.live();
            timer = setInterval(render, 1000);
          }
          break;
        case "tool":
          state.tool = event.name;
          if (mode === "verbose") write(`  [tool] ${event.name}`);
          break;
        case "text":
          if (mode === "verbose") {
            write(`  [agent] ${event.text.trim().replace(/\n/g, "\n          ")}`);
          }
          break;
        case "iteration_finished":
          state.costUsd += event.summary.costUsd;
          state.verdict = event.verdict;
          write(iterationLine(event));
          break;
        case "probe":
          write(
            `[finishline] status probe: ${event.status.status}${
              event.status.message ? ` (${event.status.message})` : ""
            }`,
          );
          break;
        case "rescue":
          write(
            `[finishline] commit rescue by the ${event.by}: ${
              event.clean ? "work committed" : "changes still uncommitted"
            }`,
          );
          break;
        case "retry":
          write(
            `[finishline] iteration ${event.iteration}: retrying in ${
              seconds(event.waitMs)
            } (attempt ${event.attempt} failed: ${event.reason})`,
          );
          break;
        case "api_retry":
          write(
            `[finishline] iteration ${event.iteration}: API retry ${event.attempt}/${event.maxRetries} (${
              event.status ?? "no response"
            } ${event.error}), next in ${seconds(event.waitMs)}`,
          );
          break;
        case "run_finished":
          break;
      }
      render();
    },
    stop(): void {
      if (timer !== undefined) clearInterval(timer);
      line?.finish();
      line = undefined;
    },
  };
}
