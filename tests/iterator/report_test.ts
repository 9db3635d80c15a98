/**
 * Snapshot tests of the plain progress lines and the run report, against
 * committed expected files (`UPDATE_SNAPSHOTS=1 deno test -A tests/iterator/report_test.ts`
 * rewrites them).
 */

import assert from "node:assert/strict";
import type { IterationSummary } from "../../agents/common/completion/types.ts";
import { emptySummary } from "../../agents/common/summary.ts";
import { createReporter, finalLine } from "../../agents/iterator/progress.ts";
import { renderReport } from "../../agents/iterator/report.ts";
import type { RunEvent, RunResult } from "../../agents/iterator/runner.ts";

const SNAPSHOTS = new URL("../fixtures/snapshots/", import.meta.url);

async function matchSnapshot(name: string, actual: string): Promise<void> {
  const file = new URL(name, SNAPSHOTS);
  if (Deno.env.get("UPDATE_SNAPSHOTS") === "1") {
    await Deno.writeTextFile(file, actual);
    return;
  }
  const expected = await Deno.readTextFile(file);
  assert.equal(actual, expected, `snapshot ${name} differs (UPDATE_SNAPSHOTS=1 rewrites it)`);
}

function summaries(): IterationSummary[] {
  const first: IterationSummary = {
    ...emptySummary(1),
    sessionId: "s1",
    assistantResponses: ["Read the failing test."],
    toolsUsed: ["Read", "Bash", "Bash"],
    costUsd: 0.0123,
    tokens: { input: 1200, output: 300, cacheRead: 0, cacheCreation: 0 },
    turns: 4,
    durationMs: 12_400,
    stopReason: "end_turn",
    git: { baseline: "a", head: "a", newCommits: 0, staged: [], unstaged: ["src/page.ts"] },
    verification: {
      passed: false,
      checker: "command",
      feedback: "`deno task test` exited with code 1.",
      trigger: "handler",
    },
    verdict: "continue (verification failed: command)",
  };
  const second: IterationSummary = {
    ...emptySummary(2),
    sessionId: "s2",
    assistantResponses: ["Fixed the off-by-one and committed."],
    toolsUsed: ["Edit", "Bash", "mcp__finishline__complete_task"],
    costUsd: 0.0201,
    tokens: { input: 2100, output: 450, cacheRead: 0, cacheCreation: 0 },
    turns: 6,
    durationMs: 20_050,
    stopReason: "end_turn",
    git: { baseline: "a", head: "b", newCommits: 1, staged: [], unstaged: [] },
    completeTask: {
      status: "success",
      original_request_summary: "Fix the pagination off-by-one in issue #42",
      summary: "Changed `i <= n` to `i < n` and added a regression test",
      files_modified: ["src/page.ts", "tests/page_test.ts"],
      next_steps: "Release a patch version",
    },
    verification: { passed: true, checker: "composite", feedback: "", trigger: "handler" },
    verdict: "complete",
  };
  return [first, second];
}

const RESULT: RunResult = {
  status: "completed",
  completionReason: "Issue #42 closed after iteration 2",
  iterations: 2,
  costUsd: 0.0324,
  durationMs: 33_900,
  runId: "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
  sessionIds: ["s1", "s2"],
  summaries: summaries(),
};

Deno.test("the plain progress lines match their snapshot", async () => {
  const lines: string[] = [];
  const reporter = createReporter("plain", { write: (line) => lines.push(line) });
  const events: RunEvent[] = [
    { type: "iteration_started", iteration: 1, maxIterations: 5 },
    { type: "tool", iteration: 1, name: "Read" },
    { type: "text", iteration: 1, text: "Read the failing test." },
    {
      type: "probe",
      iteration: 1,
      status: {
        status: "working",
        message: "tests still red",
        tasksCompleted: [],
        tasksPending: [],
        nextAction: "",
      },
    },
    {
      type: "iteration_finished",
      iteration: 1,
      maxIterations: 5,
      summary: RESULT.summaries[0],
      verdict: "continue (verification failed: command)",
    },
    { type: "retry", iteration: 2, attempt: 1, reason: "API error: overloaded", waitMs: 2100 },
    { type: "rescue", iteration: 2, by: "agent", clean: true },
    {
      type: "iteration_finished",
      iteration: 2,
      maxIterations: 5,
      summary: RESULT.summaries[1],
      verdict: "complete",
    },
  ];
  for (const event of events) reporter.onEvent(event);
  reporter.stop();
  lines.push(finalLine(RESULT));
  await matchSnapshot("progress.txt", `${lines.join("\n")}\n`);
});

Deno.test("verbose adds the agent's text and tools; quiet shows none of the lines", () => {
  const verbose: string[] = [];
  const quiet: string[] = [];
  for (const [mode, sink] of [["verbose", verbose], ["quiet", quiet]] as const) {
    const reporter = createReporter(mode, { write: (line) => sink.push(line) });
    reporter.onEvent({ type: "tool", iteration: 1, name: "Bash" });
    reporter.onEvent({ type: "text", iteration: 1, text: "Running the tests" });
    reporter.onEvent({
      type: "iteration_finished",
      iteration: 1,
      maxIterations: 2,
      summary: RESULT.summaries[0],
      verdict: "continue",
    });
  }
  assert.deepEqual(verbose.slice(0, 2), ["  [tool] Bash", "  [agent] Running the tests"]);
  assert.equal(verbose.length, 3);
  assert.deepEqual(quiet, []);
});

Deno.test("the run report matches its snapshot", async () => {
  const report = renderReport({
    result: RESULT,
    agent: "fixer",
    handler: "issue (close issue #42)",
    learnings: ["Run the pagination tests with --filter page to iterate fast"],
    branch: "finishline/fixer/issue-42",
    pullRequest: "https://github.com/octo/demo/pull/7",
  });
  await matchSnapshot("report.md", report);
});
