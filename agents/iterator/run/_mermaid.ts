/**
 * Charts for the reports, as Mermaid code blocks that GitHub (and most
 * Markdown viewers) draw: time and cost per iteration for a run, and a
 * timeline of a fleet's runs. Only numbers and finishline's own words go into
 * them; nothing from outside can add Mermaid syntax. Private to the iterator.
 *
 * @module
 */

/** One bar of a chart: its label on the x axis and its value. */
interface Bar {
  label: string;
  value: number;
}

/** Keeps a label to what Mermaid reads as plain text in every position. */
function plain(text: string): string {
  return text.replace(/[^\p{L}\p{N} ._/+-]/gu, " ").replace(/\s+/g, " ").trim();
}

function barChart(title: string, axis: string, bars: Bar[], digits: number): string[] {
  const max = Math.max(...bars.map((bar) => bar.value), 0);
  const top = max > 0 ? Number((max * 1.1).toFixed(digits)) || max : 1;
  return [
    "```mermaid",
    "xychart-beta",
    // The title and axis are finishline's own words.
    `  title "${title}"`,
    `  x-axis "iteration" [${bars.map((bar) => `"${plain(bar.label)}"`).join(", ")}]`,
    `  y-axis "${axis}" 0 --> ${top}`,
    `  bar [${bars.map((bar) => bar.value.toFixed(digits)).join(", ")}]`,
    "```",
  ];
}

/**
 * Time and cost per iteration, as two bar charts.
 *
 * @param iterations Each iteration's number, time (ms) and cost (USD).
 * @returns Markdown lines, none for no iteration.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { iterationCharts } from "./_mermaid.ts";
 *
 * const lines = iterationCharts([
 *   { iteration: 1, durationMs: 12_300, costUsd: 0.0123 },
 *   { iteration: 2, durationMs: 4_000, costUsd: 0.002 },
 * ]);
 * assert.equal(lines[1], "xychart-beta");
 * assert.ok(lines.includes("  bar [12.3, 4.0]"));
 * assert.ok(lines.includes("  bar [0.0123, 0.0020]"));
 * assert.deepEqual(iterationCharts([]), []);
 * ```
 */
export function iterationCharts(
  iterations: ReadonlyArray<{ iteration: number; durationMs: number; costUsd: number }>,
): string[] {
  if (iterations.length === 0) return [];
  const label = (n: number) => String(n);
  return [
    ...barChart(
      "Time per iteration (seconds)",
      "seconds",
      iterations.map((it) => ({ label: label(it.iteration), value: it.durationMs / 1000 })),
      1,
    ),
    "",
    ...barChart(
      "Cost per iteration (USD)",
      "USD",
      iterations.map((it) => ({ label: label(it.iteration), value: it.costUsd })),
      4,
    ),
  ];
}

/** One bar of a timeline. */
export interface TimelineRun {
  /** Its name on the chart ("issue 42"). */
  name: string;
  /** How it ended, or `running`. */
  status: string;
  /** When it started (ISO). */
  startedAt: string;
  /** When it ended (ISO); a run without an end is drawn to `now`. */
  endedAt?: string;
}

/** Gantt tags by status: green for done, red for what failed, blue for what still runs. */
function tag(status: string): string {
  if (status === "completed") return "done, ";
  if (status === "running" || status === "queued") return "active, ";
  if (status === "skipped" || status === "busy") return "";
  return "crit, ";
}

/**
 * A timeline of runs, as a Mermaid Gantt chart: one bar per run, from its
 * start to its end, colored by how it ended.
 *
 * @param title The chart's title.
 * @param runs The runs; those that never started are left out.
 * @param now The end of a bar whose run has not ended (ms since the epoch).
 * @returns Markdown lines, none when no run started.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { timelineChart } from "./_mermaid.ts";
 *
 * const lines = timelineChart("Fleet", [
 *   { name: "issue 42", status: "completed", startedAt: "2026-01-01T10:00:00Z", endedAt: "2026-01-01T10:01:00Z" },
 *   { name: "issue 43", status: "max_iterations", startedAt: "2026-01-01T10:00:05Z", endedAt: "2026-01-01T10:03:00Z" },
 * ], Date.now());
 * assert.ok(lines.includes("  issue 42 completed :done, 1767261600000, 1767261660000"));
 * assert.ok(lines.includes("  issue 43 max_iterations :crit, 1767261605000, 1767261780000"));
 * ```
 */
export function timelineChart(title: string, runs: readonly TimelineRun[], now: number): string[] {
  const bars = runs.flatMap((run) => {
    const start = Date.parse(run.startedAt);
    if (Number.isNaN(start)) return [];
    const parsedEnd = run.endedAt ? Date.parse(run.endedAt) : now;
    // Gantt needs a bar of some length: at least a second.
    const end = Math.max(Number.isNaN(parsedEnd) ? now : parsedEnd, start + 1000);
    return [`  ${plain(run.name)} ${plain(run.status)} :${tag(run.status)}${start}, ${end}`];
  });
  if (bars.length === 0) return [];
  return [
    "```mermaid",
    "gantt",
    `  title ${plain(title)}`,
    "  dateFormat x",
    "  axisFormat %H:%M:%S",
    "  section Runs",
    ...bars,
    "```",
  ];
}
