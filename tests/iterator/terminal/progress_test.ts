/**
 * Progress lines fitted to the terminal's width, the live status line, its
 * live cost, and how the live line draws on a terminal.
 */

import assert from "node:assert/strict";
import type { IterationSummary } from "../../../agents/record/iteration.ts";
import { emptySummary } from "../../../agents/record/iteration.ts";
import { displayWidth, fitRow, fitRows } from "../../../agents/iterator/terminal/fit.ts";
import { LiveCost } from "../../../agents/iterator/terminal/live_cost.ts";
import { TerminalLine } from "../../../agents/iterator/terminal/live_line.ts";
import {
  createReporter,
  finalLine,
  iterationLine,
  type LiveLine,
  statusLine,
} from "../../../agents/iterator/terminal/progress.ts";
import type { RunEvent, RunResult } from "../../../agents/loop/runner.ts";

const WIDTHS = [30, 40, 60, 80, 120];

function finished(verdict: string, tools: string[], iteration = 2, max = 10): Extract<
  RunEvent,
  { type: "iteration_finished" }
> {
  const summary: IterationSummary = {
    ...emptySummary(iteration),
    toolsUsed: tools,
    durationMs: 20_050,
    costUsd: 0.0201,
  };
  return { type: "iteration_finished", iteration, maxIterations: max, summary, verdict };
}

/** Rows never wider than the width, and the words of `whole` in order, none cut. */
function assertFits(text: string, width: number, whole: string): void {
  for (const row of text.split("\n")) {
    assert.ok(displayWidth(row) <= width, `wider than ${width}: "${row}"`);
  }
  const flowed = text.split("\n").map((row) => row.trim()).join(" ");
  assert.ok(flowed.includes(whole), `"${whole}" is not whole in:\n${text}`);
}

Deno.test("iteration lines fit every width and never cut the verdict", async (t) => {
  const tools = ["Read", "Bash", "Bash", "Edit", "mcp__finishline__complete_task"];
  const verdicts = [
    "complete",
    "continue (verification failed: command)",
    "continue (the agent reported success but 3 of 14 checks failed: deno task test, deno lint, deno check)",
  ];
  for (const verdict of verdicts) {
    await t.step(verdict.slice(0, 30), () => {
      for (const width of WIDTHS) {
        assertFits(iterationLine(finished(verdict, tools), width), width, verdict);
      }
    });
  }
  await t.step(
    "fields shrink in order: tools (complete_task last), the label, the tools, duration, cost, the word iteration",
    () => {
      const event = finished("continue (verification failed: command)", tools);
      assert.equal(
        iterationLine(event, 140),
        "[finishline] iteration 2/10 · 20.1s · $0.0201 · tools: Read, Bash×2, Edit, complete_task · continue (verification failed: command)",
      );
      assert.equal(
        iterationLine(event, 120),
        "[finishline] iteration 2/10 · 20.1s · $0.0201 · tools: complete_task, Read +2 · continue (verification failed: command)",
      );
      assert.equal(
        iterationLine(event, 114),
        "[finishline] iteration 2/10 · 20.1s · $0.0201 · tools: complete_task +3 · continue (verification failed: command)",
      );
      // Then the label goes, so that at 80 columns the short tools and the time stay.
      assert.equal(
        iterationLine(event, 100),
        "iteration 2/10 · 20.1s · $0.0201 · tools: complete_task +3 · continue (verification failed: command)",
      );
      assert.equal(
        iterationLine(finished("continue", tools), 80),
        "iteration 2/10 · 20.1s · $0.0201 · tools: complete_task, Read +2 · continue",
      );
      assert.equal(
        iterationLine(event, 80),
        "iteration 2/10 · 20.1s · $0.0201 · continue (verification failed: command)",
      );
      assert.equal(
        iterationLine(event, 72),
        "iteration 2/10 · $0.0201 · continue (verification failed: command)",
      );
      assert.equal(
        iterationLine(event, 60),
        "iteration 2/10 · continue (verification failed: command)",
      );
      assert.equal(
        iterationLine(event, 40),
        "2/10\n  continue (verification failed:\n  command)",
      );
    },
  );
  await t.step("without a width (a pipe) nothing is fitted", () => {
    const line = iterationLine(finished("complete", tools));
    assert.equal(
      line,
      "[finishline] iteration 2/10 · 20.1s · $0.0201 · tools: Read, Bash×2, Edit, complete_task · complete",
    );
  });
});

Deno.test("tool names are short and repeats counted", () => {
  const line = iterationLine(
    finished("complete", [
      "mcp__finishline__complete_task",
      "Bash",
      "Bash",
      "Bash",
      "mcp__gh__view",
    ]),
  );
  assert.match(line, / · tools: complete_task, Bash×3, view · complete$/);
  assert.match(iterationLine(finished("complete", [])), / · tools: none · complete$/);
});

Deno.test("event lines fit: API retries keep their text whole", () => {
  const lines: string[] = [];
  const reporter = createReporter("plain", {
    write: (line) => lines.push(line),
    columns: () => 60,
  });
  reporter.onEvent({
    type: "api_retry",
    iteration: 2,
    attempt: 3,
    maxRetries: 10,
    status: 529,
    error: "overloaded",
    waitMs: 4800,
  });
  reporter.onEvent({
    type: "retry",
    iteration: 2,
    attempt: 1,
    reason: "x".repeat(90),
    waitMs: 2100,
  });
  reporter.onEvent({
    type: "probe",
    iteration: 2,
    status: {
      status: "working",
      message: "the pagination tests are still red after the second fix",
      tasksCompleted: [],
      tasksPending: [],
      nextAction: "",
    },
  });
  assert.deepEqual(lines, [
    "[finishline] API retry 3/10 (529 overloaded), next in 4.8s",
    "[finishline] it 2: retrying in 2.1s (attempt 1 failed:…",
    "[finishline] status probe: working (the pagination tests ar…",
  ]);
  const wide: string[] = [];
  const pipe = createReporter("plain", { write: (line) => wide.push(line) });
  pipe.onEvent({
    type: "api_retry",
    iteration: 2,
    attempt: 3,
    maxRetries: 10,
    status: null,
    error: "connection_error",
    waitMs: 4800,
  });
  pipe.onEvent({ type: "probe_skipped", iteration: 2, reason: "commits", newCommits: 1 });
  assert.deepEqual(wide, [
    "[finishline] iteration 2: API retry 3/10 (connection error), next in 4.8s",
    "[finishline] status probe: stopped, 1 new commit",
  ]);
});

Deno.test("the final rescue prints one line: who committed, the commit, or the files left", () => {
  const lines: string[] = [];
  const reporter = createReporter("plain", { write: (line) => lines.push(line) });
  reporter.onEvent({
    type: "final_rescue",
    status: "max_iterations",
    by: "agent",
    files: ["wip.txt"],
    left: [],
    commit: "1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d",
  });
  reporter.onEvent({
    type: "final_rescue",
    status: "interrupted",
    by: "none",
    files: ["a.ts", "b.ts"],
    left: ["a.ts", "b.ts"],
    commit: null,
  });
  assert.deepEqual(lines, [
    "[finishline] final rescue (max_iterations) by the agent: work committed (1a2b3c4)",
    "[finishline] final rescue (interrupted): left uncommitted: a.ts, b.ts",
  ]);
});

Deno.test("the final line: one sentence for people, the report's path never cut", async (t) => {
  const rejected: IterationSummary = {
    ...emptySummary(3),
    verification: {
      passed: false,
      checker: "checks",
      trigger: "handler",
      feedback:
        '[checks] "npm test" fails (it failed before your changes too: fix it, or, if it is outside this task, declare it in complete_task out_of_scope with a reason); it exited with code 1. Last lines of its output:\nnot ok 1 - adds',
    },
    checks: {
      passed: false,
      outOfScope: [],
      testsChanged: [],
      checks: [{
        name: "npm test",
        baseline: "red",
        now: "red",
        failing: ["adds", "divides"],
        durationMs: 900,
      }],
    },
  };
  const still = "`npm test` still fails (2 failing tests: adds, divides)";
  const result = (status: RunResult["status"], completionReason: string, last?: IterationSummary) =>
    ({
      status,
      completionReason,
      iterations: 3,
      costUsd: 0.1234,
      durationMs: 754_000,
      runId: "0f1e2d3c",
      sessionIds: [],
      summaries: last ? [last] : [],
    }) as RunResult;
  const cases: Array<[string, RunResult, string]> = [
    [
      "completed",
      result("completed", "Completed 3/3 iterations"),
      "Done: Completed 3/3 iterations",
    ],
    [
      "the cap, the last claim rejected",
      result("max_iterations", `Reached the cap of 3 iterations; ${still}`, rejected),
      `Stopped at the iteration cap (3): ${still}`,
    ],
    [
      "the cap, nothing claimed",
      result("max_iterations", 'Reached the cap of 3 iterations before the agent says "DONE"'),
      'Stopped at the iteration cap (3) before the agent says "DONE"',
    ],
    [
      "the cost budget",
      result("budget_exhausted", "Cost budget of $0.1 spent ($0.1234)", rejected),
      `Stopped: Cost budget of $0.1 spent ($0.1234); ${still}`,
    ],
    [
      "the time budget (a timeout)",
      result("budget_exhausted", "Time budget of 600 s spent"),
      "Stopped: Time budget of 600 s spent",
    ],
    [
      "stalled",
      result(
        "stalled",
        "No progress (no commits, no file changes) in 3 iterations in a row",
        rejected,
      ),
      `Stalled: No progress (no commits, no file changes) in 3 iterations in a row; ${still}`,
    ],
    [
      "blocked",
      result("blocked", "The agent reported the task blocked in iteration 3: needs\nthe API key"),
      "Blocked: The agent reported the task blocked in iteration 3: needs the API key",
    ],
    [
      "interrupted",
      result("interrupted", "Interrupted during iteration 3"),
      "Interrupted during iteration 3. Resume with: finishline --resume 0f1e2d3c",
    ],
    [
      "an error",
      result("failed", "Gave up on iteration 3 after 4 attempts: the session timed out"),
      "Failed: Gave up on iteration 3 after 4 attempts: the session timed out",
    ],
  ];
  const facts = {
    report: "/repo/.agent/iterator/logs/run.md",
    resume: "finishline --resume 0f1e2d3c",
  };
  for (const [name, run, sentence] of cases) {
    await t.step(name, () => {
      assert.equal(
        finalLine(run, undefined, facts),
        `[finishline] ${sentence}; 3 iterations in 754.0s for $0.1234; details in the report: ${facts.report}`,
      );
      for (const width of [60, 80, 120]) {
        const rows = finalLine(run, width, facts).split("\n");
        for (const row of rows.slice(0, -1)) assert.ok(displayWidth(row) <= width, row);
        assert.ok(rows.at(-1)!.endsWith(`details in the report: ${facts.report}`));
        assert.equal(
          rows.map((row) => row.trim()).join(" "),
          finalLine(run, undefined, facts),
          "the rows read as the line",
        );
      }
    });
  }
  await t.step("a path wider than the terminal gets a row of its own, whole", () => {
    const report = `/home/someone/projects/${"deep/".repeat(12)}run.md`;
    const rows = finalLine(cases[0][1], 60, { report }).split("\n");
    assert.equal(rows.at(-1), `  details in the report: ${report}`);
    assert.ok(rows.at(-2)!.endsWith(";"));
  });
  await t.step("without a report, the log", () => {
    assert.match(
      finalLine(cases[0][1], undefined, { log: "/repo/run.jsonl" }),
      /; no report was written; the log: \/repo\/run\.jsonl$/,
    );
  });
});

Deno.test("the live line at 60, 80 and 120 columns: a short tools field at 80, the check running", async (t) => {
  // The terminal line gets one column less than the terminal has.
  const state = {
    iteration: 2,
    maxIterations: 10,
    iterationMs: 42_000,
    runMs: 100_000,
    cost: "~$0.0150",
    tools: ["Read", "Bash", "Bash", "mcp__finishline__complete_task"],
  };
  await t.step("the agent working", () => {
    assert.equal(
      statusLine(state, 119),
      "finishline iteration 2/10 · it 0:42 · run 1:40 · ~$0.0150 · tools: Read, Bash×2, complete_task",
    );
    assert.equal(
      statusLine(state, 79),
      "iteration 2/10 · it 0:42 · run 1:40 · ~$0.0150 · tools: complete_task, Read +1",
    );
    assert.equal(
      statusLine(state, 59),
      "finishline iteration 2/10 · it 0:42 · run 1:40 · ~$0.0150",
    );
  });
  await t.step("a check running", () => {
    const checking = { ...state, check: { name: "npm test", ms: 4_000 } };
    assert.equal(
      statusLine(checking, 119),
      "finishline iteration 2/10 · it 0:42 · checking npm test 0:04 · run 1:40 · ~$0.0150 · tools: Read, Bash×2, complete_task",
    );
    assert.equal(
      statusLine(checking, 79),
      "iteration 2/10 · it 0:42 · checking npm test 0:04 · run 1:40 · ~$0.0150",
    );
    assert.equal(statusLine(checking, 59), "iteration 2/10 · it 0:42 · checking npm test 0:04");
  });
  await t.step("a long check command is cut before the run's time goes", () => {
    const long = {
      ...state,
      check: { name: "cd packages/web && npm run test:unit -- --runInBand", ms: 64_000 },
    };
    assert.equal(
      statusLine(long, 79),
      "iteration 2/10 · it 0:42 · checking cd packages/web… 1:04 · run 1:40 · ~$0.0150",
    );
    assert.equal(statusLine(long, 59), "iteration 2/10 · it 0:42 · checking cd package… 1:04");
    for (let width = 8; width <= 130; width++) {
      assert.ok(displayWidth(statusLine(long, width)) <= width, `${width}`);
    }
  });
});

Deno.test("fitting: a field shortens early and is dropped late; regrow gives back what fits", () => {
  const fields = [
    { text: "label", shorter: [""], rank: 4 },
    { text: "it 0:12" },
    { text: "tools: Bash×2, Read", shorter: ["tools: Bash×2 +1", ""], ranks: [5, 3] },
  ];
  // The tools shorten first (rank 5), the label goes (4), then the tools (3).
  assert.equal(fitRow(fields, 40), "label · it 0:12 · tools: Bash×2, Read");
  assert.equal(fitRow(fields, 34), "label · it 0:12 · tools: Bash×2 +1");
  assert.equal(fitRow(fields, 26), "it 0:12 · tools: Bash×2 +1");
  assert.equal(fitRow(fields, 20), "it 0:12");
  // Once the tools are dropped there is room for the label again.
  assert.equal(fitRow(fields, 20, { regrow: true }), "label · it 0:12");
  assert.equal(fitRow(fields, 26, { regrow: true }), "it 0:12 · tools: Bash×2 +1");
});

Deno.test("the live status line: both clocks labelled, one row at every width", async (t) => {
  const state = {
    iteration: 12,
    maxIterations: 20,
    iterationMs: 72_000,
    runMs: 3_725_000,
    cost: "$1.2345 + 12.3k tokens",
    tools: ["Read", "Bash", "Bash", "mcp__finishline__complete_task"],
  };
  await t.step("everything when there is room", () => {
    assert.equal(
      statusLine(state, 119),
      "finishline iteration 12/20 · it 1:12 · run 1:02:05 · $1.2345 + 12.3k tokens · tools: Read, Bash×2, complete_task",
    );
  });
  await t.step("shrinking: tools, label, run clock, cost, iteration", () => {
    assert.equal(
      statusLine(state, 79),
      "finishline iteration 12/20 · it 1:12 · run 1:02:05 · $1.2345 + 12.3k tokens",
    );
    assert.equal(
      statusLine(state, 64),
      "iteration 12/20 · it 1:12 · run 1:02:05 · $1.2345 + 12.3k tokens",
    );
    assert.equal(statusLine(state, 59), "iteration 12/20 · it 1:12 · $1.2345 + 12.3k tokens");
    assert.equal(statusLine(state, 29), "iteration 12/20 · it 1:12");
    assert.equal(statusLine(state, 15), "12/20 · it 1:12");
  });
  await t.step("never wider than the width", () => {
    for (let width = 8; width <= 130; width++) {
      const line = statusLine(state, width);
      assert.ok(displayWidth(line) <= width, `${width}: "${line}"`);
      assert.ok(!line.includes("\n"));
    }
  });
});

Deno.test("fitting keeps fields without shorter forms whole across widths", () => {
  const fields = [
    { text: "[finishline]" },
    { text: "a long field that may be cut", elide: 6, rank: 2 },
    { text: "optional", shorter: [""], rank: 1 },
    { text: "the verdict stays whole" },
  ];
  for (let width = 24; width <= 90; width++) {
    const rows = fitRows(fields, width);
    assertFits(rows.join("\n"), width, "the verdict stays whole");
    assert.ok(displayWidth(fitRow(fields, width)) <= width);
  }
  assert.deepEqual(fitRows(fields, 50), ["[finishline] · a lon… · the verdict stays whole"]);
});

function assistant(session: string, id: string, usage: Record<string, number>, model = "opus") {
  return { type: "assistant", session_id: session, message: { id, model, usage } };
}

function result(session: string, cost: number, costBasis = "list") {
  return {
    type: "result",
    session_id: session,
    total_cost_usd: cost,
    modelUsage: {
      opus: {
        inputTokens: 1000,
        outputTokens: 200,
        cacheReadInputTokens: 10_000,
        cacheCreationInputTokens: 800,
        costUSD: cost,
        costBasis,
      },
    },
  };
}

Deno.test("live cost: tokens until an SDK cost basis prices them, never $0.0000", async (t) => {
  await t.step("nothing known yet: no cost at all", () => {
    assert.equal(new LiveCost().text(), "");
  });
  await t.step("first iteration: tokens, counted once per message", () => {
    const cost = new LiveCost();
    cost.add(assistant("s1", "m1", { input_tokens: 5, cache_read_input_tokens: 12_000 }));
    cost.add(assistant("s1", "m1", { input_tokens: 5, cache_read_input_tokens: 12_000 }));
    cost.add(assistant("s1", "m2", { input_tokens: 300, output_tokens: 1 }));
    assert.equal(cost.text(), "12.3k tokens");
    cost.add(result("s1", 0.05));
    assert.equal(cost.text(), "$0.0500");
  });
  await t.step("later iterations: estimated from the basis, marked ~", () => {
    const cost = new LiveCost();
    cost.add(result("s1", 0.05));
    cost.finishIteration(0.05);
    // The basis: $0.05 for 1000 + 5×200 + 0.1×10000 + 1.25×800 = 4000 input-equivalent tokens.
    cost.add(assistant("s2", "m3", { input_tokens: 4000 }));
    assert.equal(cost.text(), "~$0.1000");
    assert.deepEqual(cost.view(), { usd: 0.1, estimated: true, unpricedTokens: 0 });
    cost.add(result("s2", 0.06));
    cost.finishIteration(0.06);
    assert.equal(cost.text(), "$0.1100");
  });
  await t.step("a model without a basis, or an unknown price table, shows tokens", () => {
    const cost = new LiveCost();
    cost.add(result("s1", 0.05, "unknown"));
    cost.finishIteration(0.05);
    cost.add(assistant("s2", "m3", { input_tokens: 4000 }));
    assert.equal(cost.text(), "$0.0500 + 4.0k tokens");
    const other = new LiveCost();
    other.add(result("s1", 0.05));
    other.finishIteration(0.05);
    other.add(assistant("s2", "m3", { input_tokens: 4000 }, "haiku"));
    assert.equal(other.text(), "$0.0500 + 4.0k tokens");
  });
});

Deno.test("the terminal line erases every row it took, even after the terminal narrowed", () => {
  let out = "";
  let columns = 80;
  const line = new TerminalLine({ write: (text) => out += text, columns: () => columns });
  line.print("before\n");
  assert.equal(out, "\r\x1b[2Kbefore\n", "nothing drawn yet: only the current row is erased");
  out = "";
  line.show((width) => "s".repeat(width));
  assert.equal(out, `\r\x1b[2K${"s".repeat(79)}`, "one column short: no terminal wraps it");
  out = "";
  columns = 30; // 79 columns wrap onto three rows of 30
  line.print("[finishline] iteration 1/3\n");
  assert.equal(
    out,
    `\r\x1b[2K\x1b[1A\x1b[2K\x1b[1A\x1b[2K[finishline] iteration 1/3\n${"s".repeat(29)}`,
  );
  out = "";
  line.finish();
  assert.equal(out, "\r\x1b[2K");
  out = "";
  line.finish();
  line.print("after\n");
  assert.equal(out, "\r\x1b[2Kafter\n", "after finish nothing is drawn again");
});

class FakeLine implements LiveLine {
  rows: string[] = [];
  printed: string[] = [];
  finished = false;
  constructor(private width: number) {}
  show(render: (width: number) => string): void {
    this.rows.push(render(this.width));
  }
  print(text: string): void {
    this.printed.push(text);
  }
  finish(): void {
    this.finished = true;
  }
}

Deno.test("the live reporter: iteration and run clocks, lines above the live line", () => {
  let clock = 0;
  const fake = new FakeLine(119);
  const plain: string[] = [];
  const reporter = createReporter("live", {
    write: (line) => plain.push(line),
    live: () => fake,
    columns: () => 120,
    now: () => clock,
  });
  reporter.onEvent({ type: "iteration_started", iteration: 1, maxIterations: 3 });
  clock = 4_000;
  reporter.onEvent({
    type: "message",
    iteration: 1,
    message: assistant("s1", "m1", { input_tokens: 100 }),
  });
  reporter.onEvent({ type: "tool", iteration: 1, name: "mcp__finishline__complete_task" });
  assert.equal(
    fake.rows.at(-1),
    "finishline iteration 1/3 · it 0:04 · run 0:04 · 100 tokens · tools: complete_task",
  );
  reporter.onEvent({ type: "message", iteration: 1, message: result("s1", 0.0032) });
  reporter.onEvent(finished("continue", ["mcp__finishline__complete_task"], 1, 3));
  assert.equal(
    fake.printed.at(-1),
    "[finishline] iteration 1/3 · 20.1s · $0.0201 · tools: complete_task · continue\n",
  );
  clock = 9_000;
  reporter.onEvent({ type: "iteration_started", iteration: 2, maxIterations: 3 });
  clock = 11_000;
  reporter.stderr("[finishline] interrupted: stopping the agent\n");
  assert.equal(fake.printed.at(-1), "[finishline] interrupted: stopping the agent\n");
  assert.equal(fake.rows.at(-1), "finishline iteration 2/3 · it 0:00 · run 0:09 · $0.0201");
  reporter.onEvent({ type: "tool", iteration: 2, name: "Bash" });
  assert.equal(
    fake.rows.at(-1),
    "finishline iteration 2/3 · it 0:02 · run 0:11 · $0.0201 · tools: Bash",
  );
  reporter.stop();
  assert.ok(fake.finished);
  reporter.stderr("[finishline] after the loop\n");
  assert.deepEqual(plain, ["[finishline] after the loop"], "after stop, lines go straight out");
});

Deno.test("the live reporter shows the check running from its start to its end", () => {
  let clock = 0;
  const fake = new FakeLine(79);
  const reporter = createReporter("live", {
    write: () => {},
    live: () => fake,
    columns: () => 80,
    now: () => clock,
  });
  reporter.onEvent({ type: "iteration_started", iteration: 1, maxIterations: 3 });
  reporter.onEvent({ type: "tool", iteration: 1, name: "mcp__finishline__complete_task" });
  clock = 5_000;
  reporter.onEvent({ type: "check", iteration: 1, name: "npm test", running: true });
  clock = 9_000;
  reporter.onEvent({ type: "text", iteration: 1, text: "Waiting for the checks." });
  assert.equal(
    fake.rows.at(-1),
    "finishline iteration 1/3 · it 0:09 · checking npm test 0:04 · run 0:09",
  );
  reporter.onEvent({ type: "check", iteration: 1, name: "npm test", running: false });
  assert.equal(
    fake.rows.at(-1),
    "finishline iteration 1/3 · it 0:09 · run 0:09 · tools: complete_task",
  );
  reporter.stop();
  const verbose: string[] = [];
  const v = createReporter("verbose", { write: (line) => verbose.push(line) });
  v.onEvent({ type: "check", iteration: 1, name: "npm test", running: true });
  v.onEvent({ type: "check", iteration: 1, name: "npm test", running: false });
  assert.deepEqual(verbose, ["  [check] npm test"]);
});

Deno.test("quiet shows nothing; verbose shows tools and text unfitted", () => {
  const quiet: string[] = [];
  const q = createReporter("quiet", { write: (line) => quiet.push(line), columns: () => 40 });
  q.onEvent(finished("complete", ["Bash"]));
  q.onEvent({
    type: "api_retry",
    iteration: 1,
    attempt: 1,
    maxRetries: 10,
    status: 529,
    error: "overloaded",
    waitMs: 1,
  });
  assert.deepEqual(quiet, []);
  const verbose: string[] = [];
  const v = createReporter("verbose", { write: (line) => verbose.push(line), columns: () => 40 });
  v.onEvent({ type: "tool", iteration: 1, name: "mcp__finishline__complete_task" });
  v.onEvent({
    type: "text",
    iteration: 1,
    text: "A long text from the agent that is wider than forty columns",
  });
  assert.deepEqual(verbose, [
    "  [tool] mcp__finishline__complete_task",
    "  [agent] A long text from the agent that is wider than forty columns",
  ]);
});

Deno.test("verbose shows what each tool call runs or touches: the command, the file, the pattern", () => {
  const lines: string[] = [];
  const reporter = createReporter("verbose", { write: (line) => lines.push(line) });
  const calls = [
    { name: "Bash", input: { command: "npm test -- --grep add\n  && echo done" } },
    { name: "Read", input: { file_path: "src/math.js" } },
    { name: "Grep", input: { pattern: "add\\(", path: "src" } },
    { name: "TodoWrite", input: { todos: [] } },
  ];
  reporter.onEvent({
    type: "message",
    iteration: 1,
    message: {
      type: "assistant",
      message: {
        content: calls.map((call, index) => ({ type: "tool_use", id: `t${index}`, ...call })),
      },
    } as never,
  });
  for (const call of calls) reporter.onEvent({ type: "tool", iteration: 1, name: call.name });
  assert.deepEqual(lines, [
    "  [tool] Bash: npm test -- --grep add && echo done",
    "  [tool] Read: src/math.js",
    "  [tool] Grep: add\\( src",
    "  [tool] TodoWrite",
  ]);
});
