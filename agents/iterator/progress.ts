/**
 * Progress lines on stderr: one per iteration, and a final one with the
 * outcome.
 *
 * @module
 */

import { countTools } from "../common/completion/_base.ts";
import type { RunEvent, RunResult } from "./runner.ts";

/**
 * Format seconds with one decimal.
 *
 * @param ms Milliseconds.
 * @returns Text like `4.1s`.
 * @example
 * ```ts
 * import { seconds } from "./progress.ts";
 * console.assert(seconds(4120) === "4.1s");
 * ```
 */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

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
  } · $${summary.costUsd.toFixed(4)} · tools: ${tools} · ${event.verdict}`;
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
  }, ${seconds(result.durationMs)}, $${result.costUsd.toFixed(4)})`;
}
