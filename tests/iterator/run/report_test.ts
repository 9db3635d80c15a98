/**
 * Snapshot tests of the plain progress lines and the run report, against
 * committed expected files (`UPDATE_SNAPSHOTS=1 deno test -A tests/iterator/run/report_test.ts`
 * rewrites them), and a report whose every text from outside is hostile, read
 * back through a Markdown renderer.
 */

import assert from "node:assert/strict";
import type { IterationSummary } from "../../../agents/record/iteration.ts";
import { emptySummary } from "../../../agents/record/iteration.ts";
import { createReporter, finalLine } from "../../../agents/iterator/terminal/progress.ts";
import type { RunSegment } from "../../../agents/store/mod.ts";
import {
  evidenceMarkdown,
  renderReport,
  type ReportInput,
} from "../../../agents/iterator/run/report.ts";
import type { RunEvent, RunResult } from "../../../agents/loop/runner.ts";
import {
  foreignTags,
  headingLines,
  hiddenLinks,
  LINES,
  ONE_LINE,
  PAYLOADS,
  prose,
  renderedHeadings,
  tableWidths,
  textOf,
  textsOf,
  toHtml,
} from "./_markdown_checks.ts";

const SNAPSHOTS = new URL("../../fixtures/snapshots/", import.meta.url);

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
  lines.push(finalLine(RESULT, undefined, { report: "/repo/.agent/iterator/logs/run.md" }));
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

/** Everything a live run's report holds, for the snapshot. */
function fullInput(): ReportInput {
  return {
    result: RESULT,
    agent: "fixer",
    handler: "issue (close issue #42)",
    learnings: ["Run the pagination tests with --filter page to iterate fast"],
    branch: "finishline/fixer/issue-42",
    worktree: "/repo/.agent/.worktrees/fixer-issue-42",
    pullRequest: "https://github.com/octo/demo/pull/7",
    task: "GitHub issue #42 in octo/demo",
    command: "deno run -A /opt/finishline/agents/iterator/main.ts --issue 42 --repo octo/demo",
    cwd: "/repo",
    startedAt: "2026-11-22T13:24:20.542Z",
    model: "claude-sonnet-4-5",
    changes: {
      baseline: "0123456789abcdef0123456789abcdef01234567",
      commits: [{ hash: "9f8e7d6", subject: "fix: pagination off-by-one (#42)" }],
      files: [
        { path: "src/page.ts", change: "modified", added: 1, deleted: 1 },
        { path: "tests/page_test.ts", change: "added", added: 12, deleted: 0 },
        { path: "docs/logo.png", change: "added", added: null, deleted: null },
      ],
      uncommitted: [],
    },
    logFile: "/repo/.agent/fixer/logs/2026-11-22T13-24-20-542Z-0f1e2d3c.jsonl",
    reportFile: "/repo/.agent/fixer/logs/2026-11-22T13-24-20-542Z-0f1e2d3c.md",
  };
}

Deno.test("the run report matches its snapshot", async () => {
  await matchSnapshot("report.md", renderReport(fullInput()));
});

Deno.test("the report says which sandbox and network the sessions had", () => {
  const boxed = renderReport({
    ...fullInput(),
    isolation: "bubblewrap; network: model API only (api.anthropic.com:443)",
  });
  assert.match(
    boxed,
    /^- Sandbox: bubblewrap; network: model API only \(api\.anthropic\.com:443\)$/m,
  );
  const bare = renderReport({
    ...fullInput(),
    isolation:
      "none (bubblewrap (bwrap) is not installed): agent sessions ran with your home and /tmp in reach",
  });
  assert.match(bare, /^- Sandbox: none \(bubblewrap \(bwrap\) is not installed\)/m);
});

Deno.test("the report of a resumed run counts every segment and shows how it was resumed", () => {
  const logs = "/repo/.agent/fixer/logs";
  const segment = (fields: Partial<RunSegment> & Pick<RunSegment, "number">): RunSegment => ({
    runId: RESULT.runId,
    startedAt: "2026-11-22T13:24:20.542Z",
    endedAt: "2026-11-22T13:24:30.542Z",
    status: "interrupted",
    reason: "Interrupted during iteration 2",
    afterIteration: 0,
    durationMs: 10_000,
    costUsd: 0.0123,
    logFile: `${logs}/a.jsonl`,
    reportFile: `${logs}/a.md`,
    ...fields,
  });
  const report = renderReport({
    ...fullInput(),
    // This segment alone took 20.1 s and resumed after iteration 1.
    result: { ...RESULT, durationMs: 20_100 },
    segments: [
      segment({ number: 1 }),
      segment({
        number: 2,
        startedAt: "2026-11-22T14:00:00.000Z",
        status: "killed",
        reason: "the process stopped | without recording its end",
        durationMs: 3_000,
        costUsd: 0,
        afterIteration: 1,
        logFile: `${logs}/b.jsonl`,
      }),
      segment({
        number: 3,
        startedAt: "2026-11-22T15:00:00.000Z",
        status: "completed",
        reason: "Issue #42 closed after iteration 2",
        durationMs: 20_100,
        costUsd: 0.0201,
        afterIteration: 1,
        logFile: `${logs}/c.jsonl`,
      }),
    ],
    logFile: `${logs}/c.jsonl`,
    reportFile: `${logs}/c.md`,
  });
  // 10 s + 3 s + 20.1 s, and the cost of all three.
  assert.match(
    report,
    /^- Iterations: 2; duration: 33\.1s over 3 segments \(stopped 2 times and resumed\); cost: \$0\.0324$/m,
  );
  assert.match(report, /^## Interruptions and resumes$/m);
  assert.match(
    report,
    /^\| 1 \| 2026-11-22 13:24:20 UTC \| 10\.0s \| \$0\.0123 \| 1 \| interrupted: Interrupted during iteration 2 \| \[a\.jsonl\]\(a\.jsonl\) \|$/m,
  );
  assert.match(
    report,
    /^\| 2 \| 2026-11-22 14:00:00 UTC \| 3\.0s \| \$0\.0000 \| – \| killed: the process stopped \\\| without recording its end \| \[b\.jsonl\]\(b\.jsonl\) \|$/m,
  );
  assert.match(report, /^\| 3 \| .* \| 2 \| completed: .* \| \[c\.jsonl\]\(c\.jsonl\) \|$/m);
  assert.match(report, /^- Log: \[c\.jsonl\]\(c\.jsonl\)$/m);
});

Deno.test("the report lists every complete_task call, not only the last", () => {
  const [first, second] = summaries();
  first.completeTask = {
    status: "partial",
    original_request_summary: "Fix the pagination off-by-one in issue #42",
    summary: "Found the off-by-one in src/page.ts; the fix needs a test",
    remaining_work: "Write the regression test",
  };
  const report = renderReport({
    ...fullInput(),
    result: { ...RESULT, summaries: [first, second] },
  });
  const section = report.slice(report.indexOf("## The agent's reports (complete_task)"));
  assert.match(section, /### Iteration 1: partial\n\n- Request: Fix the pagination/);
  assert.match(section, /- Summary: Found the off-by-one in src\/page\.ts; the fix needs a test/);
  assert.match(section, /- Remaining work: Write the regression test/);
  // The agent's backticks are its words, shown as typed rather than as code.
  assert.match(section, /### Iteration 2: success\n\n- Summary: Changed \\`i &lt;= n\\`/);
  assert.equal(section.match(/- Request:/g)?.length, 1, "the same request is said once");
});

Deno.test("an interrupted run's report says how to resume it; a bare run's report stays short", () => {
  const interrupted = renderReport({
    ...fullInput(),
    result: { ...RESULT, status: "interrupted", completionReason: "Interrupted" },
    resumeCommand: "deno run -A main.ts --resume 0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
  });
  assert.match(interrupted, /Resume it with:\n\n```sh\ndeno run -A main\.ts --resume 0f1e2d3c/);
  const bare = renderReport({
    result: { ...RESULT, summaries: [] },
    agent: "iterator",
    handler: "iterate (1 iteration)",
  });
  for (
    const heading of [
      "## Task",
      "## Commits",
      "## Interruptions",
      "## The agent's reports",
      "## Next actions",
    ]
  ) {
    assert.ok(!bare.includes(heading), `${heading} without facts for it`);
  }
  assert.match(bare, /^- Iterations: 2; duration: 33\.9s; cost: \$0\.0324$/m);
});

Deno.test("the next actions of the finish workflow close the report, one line each", () => {
  const report = renderReport({
    ...fullInput(),
    nextActions: ["Pin TZ=UTC in the CI workflow", "Re-run the login tests\nwith --filter login"],
  });
  assert.ok(
    report.endsWith(
      "\n## Next actions\n\n- Pin TZ=UTC in the CI workflow\n- Re-run the login tests with --filter login\n",
    ),
    report.slice(-300),
  );
  assert.ok(report.indexOf("## Learnings captured") < report.indexOf("## Next actions"));
});

Deno.test("a command with backticks gets a longer fence; a multi-line task stays quoted", () => {
  const report = renderReport({
    ...fullInput(),
    task: "Fix the build\n\nIt fails on `deno check`.",
    command: "deno run -A main.ts --task 'Fix ```code```'",
  });
  assert.match(report, /## Task\n\n> Fix the build\n>\n> It fails on \\`deno check\\`\.\n/);
  assert.match(report, /\n````sh\ndeno run -A main\.ts --task 'Fix ```code```'\n````\n/);
});

Deno.test("the report lists the failures the agent fixed in the same iteration", () => {
  const [first, second] = summaries();
  const fixed = {
    passed: false,
    checker: "checks",
    feedback: '[checks] "deno task test" fails;\nfailing tests: "greets"',
    trigger: "complete_task" as const,
  };
  const report = renderReport({
    result: { ...RESULT, summaries: [first, { ...second, fixedChecks: [fixed] }] },
    agent: "fixer",
    handler: "iterate (2 iterations)",
  });
  const section = report.split("## Verification failures\n\n")[1].split("\n## ")[0];
  // Each check's output as it was printed, its lines kept, in a code block.
  assert.equal(
    section,
    [
      "- Iteration 1, command:",
      "",
      "```",
      "`deno task test` exited with code 1.",
      "```",
      "",
      "- Iteration 2, checks (at complete_task; fixed in the same iteration):",
      "",
      "```",
      '[checks] "deno task test" fails;',
      'failing tests: "greets"',
      "```",
      "",
      "",
    ].join("\n"),
  );
});

/** The first payloads, short enough for a table cell that is cut at 400 characters. */
const SHORT = PAYLOADS.slice(0, 6).join(" ");

/** A run where every text from outside is hostile: the task, the agent's words, check output, names. */
function hostileInput(): ReportInput {
  const [first, second] = summaries();
  const evil = "<img src=x onerror=alert(1)>";
  const checkName = "npm test | `grep` <script>";
  const failed = {
    passed: false,
    checker: `checks ${evil}`,
    feedback: LINES,
    trigger: "complete_task" as const,
  };
  return {
    ...fullInput(),
    result: {
      ...RESULT,
      completionReason: ONE_LINE,
      baseline: {
        commit: "0123456789abcdef",
        durationMs: 1_000,
        runs: [{
          name: checkName,
          green: false,
          code: 1,
          timedOut: false,
          failing: [...PAYLOADS],
          durationMs: 900,
          tail: LINES,
        }],
      },
      summaries: [
        {
          ...first,
          toolsUsed: ["Read", "mcp__evil__a|b<script>", "Bash"],
          verdict: `continue (${SHORT})`,
          verification: { ...failed, checker: "command" },
        },
        {
          ...second,
          fixedChecks: [failed],
          completeTask: {
            status: "success",
            original_request_summary: ONE_LINE,
            summary: LINES,
            remaining_work: ONE_LINE,
            files_modified: [`${evil}.ts`, "`a` | b.ts", "## x.ts"],
            next_steps: LINES,
          },
          checks: {
            passed: true,
            checks: [{
              name: checkName,
              baseline: "red",
              now: "green",
              failing: [...PAYLOADS],
              durationMs: 900,
            }],
            outOfScope: [{ check: checkName, reason: LINES }],
            testsChanged: [{ path: `tests/${evil}.ts`, change: "modified", reason: LINES }],
            originalsPass: true,
          },
        },
      ],
    },
    handler: `custom (${ONE_LINE})`,
    model: ONE_LINE,
    learnings: [...PAYLOADS],
    nextActions: [...PAYLOADS],
    branch: `feature/${evil}`,
    worktree: "/repo/`wt` <script>",
    pullRequest: `https://github.com/octo/demo/pull/7 ${ONE_LINE}`,
    checks: `npm test  (package.json has scripts.test)\n${LINES}\n\`\`\`\`\`\n# after the fence`,
    task: `${LINES}\r# after a carriage return\n    four spaces in`,
    command: `deno run -A main.ts --task '${LINES}'`,
    cwd: `/repo/${evil}`,
    changes: {
      baseline: "0123456789abcdef0123456789abcdef01234567",
      commits: PAYLOADS.map((subject, index) => ({ hash: `abc${index}`, subject })),
      files: [{ path: `src/${evil}.ts`, change: "modified", added: 1, deleted: 1 }],
      uncommitted: [`${evil}.txt`],
    },
    segments: [
      {
        runId: RESULT.runId,
        number: 1,
        startedAt: "2026-11-22T13:24:20.542Z",
        endedAt: "2026-11-22T13:24:30.542Z",
        status: "interrupted",
        reason: LINES,
        afterIteration: 0,
        durationMs: 10_000,
        costUsd: 0.0123,
        logFile: "/repo/.agent/fixer/logs/a (1).jsonl",
        reportFile: "/repo/.agent/fixer/logs/a (1).md",
      },
      {
        runId: RESULT.runId,
        number: 2,
        startedAt: "2026-11-22T14:00:00.000Z",
        endedAt: "2026-11-22T14:00:20.000Z",
        status: "completed",
        reason: ONE_LINE,
        afterIteration: 1,
        durationMs: 20_000,
        costUsd: 0.0201,
        logFile: "/repo/.agent/fixer/logs/b.jsonl",
        reportFile: "/repo/.agent/fixer/logs/b.md",
      },
    ],
  };
}

Deno.test("text from outside stays text in the report: no HTML, headings, links, table cells or fences of its own", async (t) => {
  const input = hostileInput();
  const report = renderReport(input);
  const html = toHtml(report);
  const own = [
    // The title is the task's first line, escaped.
    "# &lt;script&gt;alert(1)&lt;/script&gt;",
    "## Evidence: the repository's checks",
    "## The run",
    "## Task",
    "## Iterations",
    "## Commits and changed files",
    "## Interruptions and resumes",
    "## Verification failures",
    "## The agent's reports (complete_task)",
    "### Iteration 2: success",
    "## Learnings captured",
    "## Next actions",
  ];

  await t.step(
    "no raw HTML survives outside code, and the rendered HTML has only the report's own elements",
    () => {
      for (const raw of ["<script", "<img", "</blockquote>", "<http", "<!--"]) {
        assert.ok(!prose(report).includes(raw), `${raw} outside code`);
      }
      assert.doesNotMatch(prose(report), /</, "no < at all outside code");
      assert.deepEqual(foreignTags(html), []);
      assert.equal(html.match(/<blockquote>/g)?.length, 1, "the task's quote, once");
      assert.equal(html.match(/<\/blockquote>/g)?.length, 1, "closed once");
    },
  );

  await t.step("the headings are exactly the report's own", () => {
    assert.deepEqual(headingLines(report), own);
    assert.deepEqual(renderedHeadings(report), own);
  });

  await t.step("every row of a table has the table's columns", () => {
    const widths = tableWidths(report);
    assert.deepEqual(
      widths.map((rows) => rows.length),
      [3, 4, 4],
      "evidence (first now), iterations, segments",
    );
    for (const rows of widths) assert.ok(rows.every((width) => width === rows[0]), `${rows}`);
    const cells = textsOf(html, "td");
    assert.ok(cells.includes(`continue (${SHORT})`), "the verdict in its own cell");
    assert.ok(cells.includes("Read, a|b<script>, Bash"), "the tools in their own cell");
    assert.ok(cells.includes("npm test | `grep` <script>"), "the check's name in its own cell");
    assert.ok(cells.includes(PAYLOADS.slice(0, 5).join(", ")), "the failing tests in their cell");
    assert.ok(cells.includes(`interrupted: ${ONE_LINE}`), "the segment's reason in its cell");
  });

  await t.step("links only where the text is the target; no image", () => {
    assert.deepEqual(hiddenLinks(html), []);
    assert.doesNotMatch(html, /href="javascript:/);
    assert.doesNotMatch(html, /<img/);
  });

  await t.step("the text is all there, as written", () => {
    assert.ok(
      report.includes("> &lt;script&gt;alert(1)&lt;/script&gt;\n"),
      "escaped in the source",
    );
    assert.ok(report.includes("- \\[click\\](javascript:alert(1))\n"), "escaped in the source");
    const text = textOf(html);
    assert.ok(text.includes(`completed: ${ONE_LINE}`), "the completion reason");
    const [quote] = textsOf(html, "blockquote");
    assert.equal(quote, `${LINES}\n# after a carriage return\nfour spaces in`.replace(/\s+/g, " "));
    const items = textsOf(html, "li");
    const lists = { "Learnings captured": input.learnings!, "Next actions": input.nextActions! };
    for (const [heading, list] of Object.entries(lists)) {
      const section = html.slice(html.indexOf(`<h2>${heading}</h2>`));
      assert.deepEqual(textsOf(section, "li").slice(0, list.length), list, heading);
    }
    for (const [index, subject] of PAYLOADS.entries()) {
      assert.ok(items.includes(`abc${index} ${subject}`), `commit subject ${subject}`);
    }
    assert.ok(items.includes(`Summary: ${ONE_LINE}`), "the agent's summary");
    assert.ok(items.includes(`Files: <img src=x onerror=alert(1)>.ts, \`a\` | b.ts, ## x.ts`));
    assert.ok(text.includes(`--task '${LINES}'`.replace(/\s+/g, " ")), "the command, in its block");
  });
});

Deno.test("the evidence table shows each check's test counts at the baseline and now", () => {
  const summary = emptySummary(1);
  summary.checks = {
    passed: false,
    checks: [
      {
        name: "cargo test",
        baseline: "red",
        now: "green",
        failing: [],
        baselineCounts: { run: 3, passed: 1, failed: 2, ignored: 0 },
        counts: { run: 1, passed: 1, failed: 0, ignored: 2 },
        durationMs: 10,
      },
      // Evidence recorded before counts existed carries testsRun alone.
      {
        name: "npm test",
        baseline: "green",
        now: "green",
        failing: [],
        testsRun: 4,
        durationMs: 5,
      },
      { name: "lint", baseline: "green", now: "green", failing: [], durationMs: 5 },
    ],
    outOfScope: [],
    testsChanged: [],
  };
  assert.deepEqual(evidenceMarkdown(summary).slice(0, 5), [
    "| check | baseline | final | tests (baseline → final) | failing tests |",
    "|---|---|---|---|---|",
    "| `cargo test` | red | green | 1 passed, 2 failed → 1 passed, 2 ignored | – |",
    "| `npm test` | green | green | ? → 4 run | – |",
    "| `lint` | green | green | – | – |",
  ]);
});
