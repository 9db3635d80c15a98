/**
 * The reports' charts: the run report's time and cost per iteration and the
 * fleet report's timeline are Mermaid diagrams that the real Mermaid parser
 * (the npm package, as GitHub draws them) accepts, with the run's numbers in
 * them, and no text from outside can add Mermaid syntax.
 */

import assert from "node:assert/strict";
import { emptySummary } from "../../../agents/record/iteration.ts";
import { renderReport } from "../../../agents/iterator/run/report.ts";
import { fleetTotals, renderFleetReport } from "../../../agents/iterator/fleet/report.ts";
import type { FleetRecord } from "../../../agents/iterator/fleet/record.ts";
import { timelineChart } from "../../../agents/iterator/run/_mermaid.ts";
import { mermaidBlocks, parseMermaid } from "../../pinned/mod.ts";

const iteration = (n: number, durationMs: number, costUsd: number) => ({
  ...emptySummary(n),
  durationMs,
  costUsd,
});

function report(count: number): string {
  const summaries = [
    iteration(1, 12_400, 0.0123),
    iteration(2, 21_500, 0.0201),
    iteration(3, 8_000, 0.0050),
    iteration(4, 10_100, 0.0099),
  ].slice(0, count);
  return renderReport({
    result: {
      status: "completed",
      completionReason: "done",
      iterations: summaries.length,
      costUsd: 0.0324,
      durationMs: 33_900,
      runId: "r1",
      summaries,
    },
    agent: "fixer",
    handler: "iterate",
  });
}

function fleet(): FleetRecord {
  const entry = (number: number, status: string, startedAt?: string, endedAt?: string) => ({
    number,
    title: `Issue ${number} :crit, 0, 1\n  section forged`,
    labels: [],
    attempts: 1,
    status,
    ...(startedAt ? { startedAt } : {}),
    ...(endedAt ? { endedAt } : {}),
  });
  return {
    version: 1,
    id: "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
    status: "done",
    startedAt: "2026-11-22T13:24:20.000Z",
    endedAt: "2026-11-22T13:30:00.000Z",
    cwd: "/repo",
    agent: "fixer",
    store: "/repo/.agent/.finishline/state.db",
    baseBranch: "main",
    selection: { label: "agent:go", notes: [] },
    parallel: 2,
    runArgs: [],
    blockedLabel: "blocked",
    report: "/repo/fleet.md",
    outputDir: "/repo/out",
    entries: [
      entry(1, "completed", "2026-11-22T13:24:21.000Z", "2026-11-22T13:26:00.000Z"),
      entry(2, "max_iterations", "2026-11-22T13:24:22.000Z", "2026-11-22T13:29:00.000Z"),
      entry(3, "completed", "2026-11-22T13:26:01.000Z", "2026-11-22T13:28:00.000Z"),
      entry(4, "skipped"),
    ],
  } as FleetRecord;
}

Deno.test("the run report charts time and cost per iteration, and Mermaid parses both charts", async () => {
  const blocks = mermaidBlocks(report(4));
  assert.equal(blocks.length, 2);
  assert.match(blocks[0], /^ {2}bar \[12\.4, 21\.5, 8\.0, 10\.1\]$/m);
  assert.match(blocks[1], /^ {2}bar \[0\.0123, 0\.0201, 0\.0050, 0\.0099\]$/m);
  assert.deepEqual(await parseMermaid(blocks), [{ type: "xychart" }, { type: "xychart" }]);
  // Three bars or fewer say nothing the iterations' table does not: no chart.
  for (const count of [1, 2, 3]) assert.deepEqual(mermaidBlocks(report(count)), [], `${count}`);
});

Deno.test("the fleet report draws its runs on a timeline that Mermaid parses; titles stay out of it", async () => {
  const record = fleet();
  const blocks = mermaidBlocks(renderFleetReport(record, fleetTotals(record, 340_000)));
  assert.equal(blocks.length, 1);
  const bars = blocks[0].split("\n").filter((line) => / :/.test(line));
  assert.deepEqual(bars, [
    `  issue 1 completed :done, ${Date.parse("2026-11-22T13:24:21Z")}, ${
      Date.parse("2026-11-22T13:26:00Z")
    }`,
    `  issue 2 max_iterations :crit, ${Date.parse("2026-11-22T13:24:22Z")}, ${
      Date.parse("2026-11-22T13:29:00Z")
    }`,
    `  issue 3 completed :done, ${Date.parse("2026-11-22T13:26:01Z")}, ${
      Date.parse("2026-11-22T13:28:00Z")
    }`,
  ]);
  assert.doesNotMatch(blocks[0], /forged|Issue/);
  assert.deepEqual(await parseMermaid(blocks), [{ type: "gantt" }]);
});

Deno.test("a name made of Mermaid syntax stays one bar of plain words", () => {
  const lines = timelineChart("t", [{
    name: 'x :crit, 0, 1\n  section evil\n```\n<script>"',
    status: "completed\n  click x call alert()",
    startedAt: "2026-01-01T00:00:00Z",
    endedAt: "2026-01-01T00:00:10Z",
  }], 0);
  const bars = lines.filter((line) => / :/.test(line));
  assert.equal(bars.length, 1);
  // Mermaid reads a keyword at the start of a line: only the chart's own start one.
  const starts = lines.map((line) => line.trim().split(" ")[0]);
  assert.deepEqual(starts.filter((word) => ["section", "click"].includes(word)), ["section"]);
  assert.ok(!lines.slice(1, -1).some((line) => line.includes("```") || line.includes("<")));
});

Deno.test("the Mermaid parser the tests use is live: it refuses a broken chart", async () => {
  const [broken] = mermaidBlocks(report(4));
  const [result] = await parseMermaid([broken.replace(/\]$/m, "")]);
  assert.match(result.error ?? "", /Parse error/);
});
