/**
 * The fleet's report (Markdown, written beside the runs' logs) and its
 * `--json` result: per issue the status, the pull request or the label,
 * iterations, cost and time, then the totals. Issue titles, run reasons,
 * labels and branch names are text from outside: they go through
 * `agents/support/markdown.ts`, shown as written, never as markup.
 *
 * @module
 */

import { roundUsd } from "../../support/format.ts";
import { clock } from "../terminal/progress.ts";
import { codeSpan, inline, tableCell } from "../../support/markdown.ts";
import { timelineChart } from "../run/_mermaid.ts";
import type { FleetEntry, FleetRecord } from "./record.ts";

/** The fleet's totals. */
export interface FleetTotals {
  /** Issues in the fleet. */
  issues: number;
  /** Runs that ended with a pull request. */
  pullRequests: number;
  /** Issues the fleet labelled blocked. */
  labelledBlocked: number;
  /** Issues skipped (closed, labelled blocked, or another process had them). */
  skipped: number;
  /** Issues not finished (interrupted or never started). */
  unfinished: number;
  /** Cost of every run, in USD. */
  costUsd: number;
  /** The runs' time added up, in ms. */
  runMs: number;
  /** The fleet's wall time, in ms (every attempt of it). */
  wallMs: number;
}

/**
 * Add up a fleet.
 *
 * @param record The fleet.
 * @param wallMs Its wall time.
 * @returns The totals.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fleetTotals } from "./report.ts";
 * const entry = (status: string, extra = {}) => ({ number: 1, title: "", labels: [], attempts: 1, status, ...extra });
 * const record = { entries: [
 *   entry("completed", { pullRequest: "https://x/pull/2", costUsd: 0.01, durationMs: 1000 }),
 *   entry("max_iterations", { labelled: "blocked", costUsd: 0.02, durationMs: 3000 }),
 *   entry("skipped"),
 *   entry("queued"),
 * ] } as never;
 * assert.deepEqual(fleetTotals(record, 3500), {
 *   issues: 4, pullRequests: 1, labelledBlocked: 1, skipped: 1, unfinished: 1,
 *   costUsd: 0.03, runMs: 4000, wallMs: 3500,
 * });
 * ```
 */
export function fleetTotals(record: FleetRecord, wallMs: number): FleetTotals {
  const { entries } = record;
  const count = (test: (entry: FleetEntry) => boolean) => entries.filter(test).length;
  return {
    issues: entries.length,
    pullRequests: count((entry) => entry.pullRequest !== undefined),
    labelledBlocked: count((entry) => entry.labelled !== undefined),
    skipped: count((entry) => entry.status === "skipped" || entry.status === "busy"),
    unfinished: count((entry) => ["queued", "running", "interrupted"].includes(entry.status)),
    costUsd: roundUsd(entries.reduce((sum, entry) => sum + (entry.costUsd ?? 0), 0)),
    runMs: entries.reduce((sum, entry) => sum + (entry.durationMs ?? 0), 0),
    wallMs,
  };
}

/**
 * A count and a noun, plural unless the count is 1.
 *
 * @param count The count.
 * @param noun The noun, singular.
 * @returns `1 issue`, `3 issues`.
 */
export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function outcome(entry: FleetEntry): string {
  if (entry.pullRequest) return inline(entry.pullRequest);
  if (entry.labelled) return `labelled ${codeSpan(entry.labelled)}`;
  return "";
}

function entryRow(entry: FleetEntry): string {
  const status = entry.reason ? `${entry.status}: ${inline(entry.reason)}` : entry.status;
  return `| ${
    [
      `#${entry.number}`,
      inline(entry.title),
      status,
      outcome(entry),
      entry.iterations === undefined ? "" : String(entry.iterations),
      entry.costUsd === undefined ? "" : `$${entry.costUsd.toFixed(4)}`,
      entry.durationMs === undefined ? "" : clock(entry.durationMs),
      entry.runId ? codeSpan(entry.runId.slice(0, 8)) : "",
    ].map(tableCell).join(" | ")
  } |`;
}

/** The runs on a timeline, when two or more started. */
function timeline(record: FleetRecord): string[] {
  const runs = record.entries.filter((entry) => entry.startedAt !== undefined);
  if (runs.length < 2) return [];
  const now = record.endedAt ? Date.parse(record.endedAt) : Date.now();
  return [
    "",
    ...timelineChart(
      "Runs over time",
      runs.map((entry) => ({
        name: `issue ${entry.number}`,
        status: entry.status,
        startedAt: entry.startedAt!,
        endedAt: entry.endedAt,
      })),
      now,
    ),
  ];
}

/**
 * The fleet's report.
 *
 * @param record The fleet.
 * @param totals Its totals.
 * @returns Markdown.
 */
export function renderFleetReport(record: FleetRecord, totals: FleetTotals): string {
  const { selection } = record;
  const chosen = selection.label !== undefined
    ? `the open issues labelled ${codeSpan(selection.label)}, by priority label then age`
    : `issues ${selection.issues?.map((number) => `#${number}`).join(", ")}, in that order`;
  const lines = [
    `# finishline fleet ${record.id.slice(0, 8)}`,
    "",
    `- Status: ${record.status}; started ${record.startedAt}${
      record.endedAt ? `, ended ${record.endedAt}` : ""
    }`,
    `- Issues: ${chosen}${selection.limit ? ` (at most ${selection.limit})` : ""}`,
    `- Agent ${codeSpan(record.agent)}, ${record.parallel} runs at once, worktrees from ${
      codeSpan(record.baseBranch)
    }`,
    // The notes quote the label and flags as given.
    ...selection.notes.map((note) => `- ${inline(note)}`),
    "",
    "| issue | title | status | pull request or label | iterations | cost | time | run |",
    "| ----- | ----- | ------ | --------------------- | ---------- | ---- | ---- | --- |",
    ...record.entries.map(entryRow),
    ...timeline(record),
    "",
    `**Totals:** ${plural(totals.issues, "issue")}: ${
      plural(totals.pullRequests, "pull request")
    }, ${totals.labelledBlocked} labelled blocked, ${totals.skipped} skipped, ${totals.unfinished} unfinished; cost $${
      totals.costUsd.toFixed(4)
    }; run time ${clock(totals.runMs)} in ${clock(totals.wallMs)} of wall time.`,
    "",
    "Each run's own report (iterations, verdicts, evidence): see `runs show RUN_ID`.",
    ...(record.status === "done" ? [] : ["", `Continue it with \`fleet --resume ${record.id}\`.`]),
    "",
  ];
  return lines.join("\n");
}

/**
 * The fleet's `--json` result.
 *
 * @param record The fleet.
 * @param totals Its totals.
 * @returns The object to print.
 */
export function fleetJson(record: FleetRecord, totals: FleetTotals): Record<string, unknown> {
  return {
    fleetId: record.id,
    status: record.status,
    parallel: record.parallel,
    report: record.report,
    issues: record.entries.map((entry) => ({
      number: entry.number,
      title: entry.title,
      status: entry.status,
      ...(entry.reason ? { reason: entry.reason } : {}),
      ...(entry.runId ? { runId: entry.runId } : {}),
      ...(entry.pullRequest ? { pullRequest: entry.pullRequest } : {}),
      ...(entry.labelled ? { labelled: entry.labelled } : {}),
      ...(entry.iterations !== undefined ? { iterations: entry.iterations } : {}),
      ...(entry.costUsd !== undefined ? { costUsd: entry.costUsd } : {}),
      ...(entry.durationMs !== undefined ? { durationMs: entry.durationMs } : {}),
      ...(entry.startedAt ? { startedAt: entry.startedAt } : {}),
      ...(entry.endedAt ? { endedAt: entry.endedAt } : {}),
      ...(entry.exitCode !== undefined ? { exitCode: entry.exitCode } : {}),
      attempts: entry.attempts,
      ...(entry.report ? { runReport: entry.report } : {}),
    })),
    totals,
  };
}
