/**
 * `fleet` without a model: bad input (one line naming the flag or what is
 * missing, exit 2, nothing written), the priority order and the runs'
 * command lines (`--dry-run`, against the scripted gh), the live view, and
 * the report with hostile issue titles, reasons, labels and names.
 */

import assert from "node:assert/strict";
import { fitRow } from "../../../agents/iterator/terminal/fit.ts";
import { parseCommandLine } from "../../../agents/iterator/flags/command_line.ts";
import { type FleetCommand, parseFleetFlags } from "../../../agents/iterator/fleet/flags.ts";
import type { FleetRecord } from "../../../agents/iterator/fleet/record.ts";
import { fleetTotals, renderFleetReport } from "../../../agents/iterator/fleet/report.ts";
import { FleetView, runRowText } from "../../../agents/iterator/fleet/view.ts";
import { git, runCli } from "../../_helpers.ts";
import { type FleetRepo, fleetRepo, goIssue } from "../../e2e/_fleet.ts";
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
} from "../run/_markdown_checks.ts";

interface BadFleet {
  name: string;
  args: string[];
  message: RegExp;
  /** Prepare the repository (after the issues and origin exist). */
  setup?: (fleet: FleetRepo) => Promise<void>;
}

const CASES: BadFleet[] = [
  { name: "no selection", args: ["fleet"], message: /"fleet" needs the issues to work on/ },
  {
    name: "label and issues",
    args: ["fleet", "--label", "agent:go", "--issues", "1"],
    message: /Flags "--label" and "--issues" conflict/,
  },
  {
    name: "issues not numbers",
    args: ["fleet", "--issues", "1,two"],
    message:
      /Flag "--issues" expects issue numbers separated by commas \(e\.g\. "4,7,9"\), got "1,two"/,
  },
  {
    name: "an issue twice",
    args: ["fleet", "--issues", "1,2,1"],
    message: /Flag "--issues" names issue 1 twice/,
  },
  {
    name: "parallel zero",
    args: ["fleet", "--label", "agent:go", "--parallel", "0"],
    message: /Flag "--parallel" expects the number of runs at once/,
  },
  {
    name: "limit not a number",
    args: ["fleet", "--label", "agent:go", "--limit", "many"],
    message: /Flag "--limit" expects a whole number of 1 or more, got "many"/,
  },
  {
    name: "a run flag that does not fit a fleet",
    args: ["fleet", "--label", "agent:go", "--task", "x"],
    message: /Flag "--task" does not go with "fleet"/,
  },
  {
    name: "a forwarded run flag with a bad value",
    args: ["fleet", "--label", "agent:go", "--iterate-max", "0"],
    message: /Flag "--iterate-max" expects the number of iterations/,
  },
  {
    name: "resume with other flags",
    args: ["fleet", "--resume", "--label", "agent:go"],
    message: /"fleet --resume" continues a fleet .* not "--label"/,
  },
  {
    name: "resume with nothing to resume",
    args: ["fleet", "--resume"],
    message: /No unfinished fleet to resume/,
  },
  {
    name: "an unknown agent",
    args: ["fleet", "--label", "agent:go", "--agent", "nobody"],
    message: /nobody/,
  },
  {
    name: "a named issue that does not exist",
    args: ["fleet", "--issues", "1,99"],
    message: /Cannot find issue #99/,
  },
  {
    name: "no origin to push to",
    args: ["fleet", "--label", "agent:go"],
    message: /has no remote "origin" to push to/,
    setup: (fleet) => git(fleet.repo.path, "remote", "remove", "origin").then(() => {}),
  },
  {
    name: "a base branch that does not exist",
    args: ["fleet", "--label", "agent:go", "--base-branch", "nope"],
    message: /Flag "--base-branch" names "nope"/,
  },
  {
    name: "gh not logged in",
    args: ["fleet", "--label", "agent:go"],
    message: /The GitHub CLI is not logged in/,
    setup: (fleet) => fleet.gh.update((state) => state.authenticated = false),
  },
];

Deno.test(`fleet bad input (${CASES.length} cases): one line, exit 2, nothing written`, async (t) => {
  for (const input of CASES) {
    await t.step(input.name, async () => {
      await using fleet = await fleetRepo([goIssue(1), goIssue(2)]);
      await input.setup?.(fleet);
      const run = await runCli(input.args, { cwd: fleet.repo.path, env: fleet.gh.env() });
      assert.equal(run.code, 2, run.stderr);
      const lines = run.stderr.trim().split("\n");
      assert.equal(lines.length, 1, `one line: ${run.stderr}`);
      assert.match(lines[0], /^finishline: /);
      assert.match(lines[0], input.message);
      assert.equal(run.stdout, "");
      assert.equal(
        await git(fleet.repo.path, "status", "--porcelain", "--ignored"),
        "",
        "nothing written to the repository",
      );
      const calls = (await fleet.gh.calls()).map((call) => call.argv.join(" "));
      assert.ok(!calls.some((call) => /^(issue (edit|comment|close)|pr create)/.test(call)));
    });
  }
});

Deno.test("fleet --dry-run: the priority order (high, medium, none, low, then oldest), --limit, the runs' command lines", async () => {
  await using fleet = await fleetRepo([
    goIssue(1, { labels: ["agent:go", "priority:low"] }),
    goIssue(2, { labels: ["agent:go"], createdAt: "2026-03-01T00:00:00Z" }),
    goIssue(3, { labels: ["agent:go"], createdAt: "2026-02-01T00:00:00Z" }),
    goIssue(4, { labels: ["agent:go", "Priority:Medium"] }),
    goIssue(5, { labels: ["agent:go", "priority:high"] }),
    goIssue(6, { labels: ["agent:go", "blocked"] }),
    goIssue(7, { labels: ["priority:high"] }),
    goIssue(8, { labels: ["agent:go"], state: "CLOSED" }),
  ]);
  const run = await runCli(
    ["fleet", "--label", "agent:go", "--dry-run", "--model", "claude-x", "--iterate-max", "4"],
    { cwd: fleet.repo.path, env: fleet.gh.env() },
  );
  assert.equal(run.code, 0, run.stderr);
  const order = [...run.stdout.matchAll(/^#(\d+) /gm)].map((match) => Number(match[1]));
  assert.deepEqual(order, [5, 4, 3, 2, 1]);
  assert.match(run.stdout, /^fleet: 5 issues, 2 at once, worktrees from main$/m);
  assert.match(
    run.stdout,
    /^ {2}deno run -A \S+main\.ts --agent iterator --issue 5 --worktree --create-pr --base-branch main --model claude-x --iterate-max 4$/m,
  );
  assert.match(run.stderr, /#6 is labelled "blocked": left out/);
  assert.equal(
    await git(fleet.repo.path, "status", "--porcelain", "--ignored"),
    "",
    "a dry run writes nothing",
  );
  const calls = (await fleet.gh.calls()).map((call) => call.argv.join(" "));
  assert.ok(
    calls.includes(
      "issue list --state open --label agent:go --limit 500 --json number,title,labels,createdAt,url",
    ),
    calls.join("\n"),
  );

  const limited = await runCli(
    ["fleet", "--label", "agent:go", "--limit", "2", "--dry-run"],
    { cwd: fleet.repo.path, env: fleet.gh.env() },
  );
  assert.deepEqual([...limited.stdout.matchAll(/^#(\d+) /gm)].map((match) => Number(match[1])), [
    5,
    4,
  ]);
  assert.match(limited.stderr, /--limit 2: 3 more issues left out/);

  const named = await runCli(["fleet", "--issues", "3,1,8", "--dry-run"], {
    cwd: fleet.repo.path,
    env: fleet.gh.env(),
  });
  assert.deepEqual([...named.stdout.matchAll(/^#(\d+) /gm)].map((match) => Number(match[1])), [
    3,
    1,
  ], "named issues keep their order; the closed one is left out");
  assert.match(named.stderr, /#8 is closed: left out/);
});

Deno.test("the live view: one row per run, fitted to the width, redrawn in place", () => {
  let out = "";
  const view = new FleetView({ mode: "live", write: (text) => out += text, columns: () => 41 });
  const row = {
    number: 12,
    title: "Fix the flaky login test",
    iteration: 2,
    maxIterations: 10,
    status: "running",
    costUsd: 0.0123,
    elapsedMs: 65_000,
  };
  view.show((width) => [runRowText(row, width), runRowText({ ...row, number: 3 }, width)]);
  const rows = out.split("\n");
  assert.equal(rows.length, 2);
  // deno-lint-ignore no-control-regex
  const plainText = (text: string) => text.replace(/\x1b\[[0-9;]*[A-Za-z]|\r/g, "");
  for (const text of rows) assert.ok(plainText(text).length <= 40);
  assert.match(rows[0], /^#12 Fix the fla… · 2\/10 · running$/);
  out = "";
  view.line("[finishline] #7 done");
  // Both rows erased (bottom up), the line printed, the rows drawn again under it.
  assert.ok(out.startsWith("\r\x1b[2K\x1b[1A\x1b[2K[finishline] #7 done\n"), JSON.stringify(out));
  assert.equal(out.split("\n").length, 3);
  out = "";
  view.finish();
  assert.equal(out, "\r\x1b[2K\x1b[1A\x1b[2K");

  const lines: string[] = [];
  const plain = new FleetView({
    mode: "plain",
    write: (text) => lines.push(text),
    columns: () => 40,
  });
  plain.show(() => ["never drawn"]);
  plain.line("[finishline] #7 done");
  assert.deepEqual(lines, ["[finishline] #7 done\n"]);
  assert.equal(fitRow([{ text: "x" }], 20), "x");
});

Deno.test("the fleet command line: fleet, fleet --resume, fleet --help", () => {
  assert.equal(parseCommandLine(["fleet", "--label", "x"]).kind, "fleet");
  assert.equal(parseCommandLine(["fleet", "--help"]).kind, "help");
  assert.deepEqual(parseCommandLine(["fleet", "--resume", "1a2b", "--parallel", "3"]), {
    kind: "fleet resume",
    fleetId: "1a2b",
    parallel: 3,
    json: false,
    quiet: false,
    cwd: undefined,
    store: undefined,
  });
  const command = parseCommandLine(["fleet", "--issues", "#4, 7", "--no-learnings", "--mode", "x"]);
  const parameters = new Map([["mode", ["mode", { type: "string" }]]]) as never;
  const flags = parseFleetFlags(command as FleetCommand, parameters);
  assert.deepEqual(flags.issues, [4, 7]);
  assert.deepEqual(flags.runArgs, ["--no-learnings", "--mode", "x"], "run flags, then parameters");
  assert.equal(flags.parallel, 2);
});

Deno.test("the fleet report shows issue titles, reasons, labels and names as text, never as markup", async (t) => {
  const evil = "<img src=x onerror=alert(1)>";
  const entry = (number: number, title: string, extra: Partial<FleetRecord["entries"][0]>) => ({
    number,
    title,
    labels: [],
    attempts: 1,
    status: "completed" as const,
    ...extra,
  });
  const record: FleetRecord = {
    version: 1,
    id: "0f1e2d3c-4b5a-6978-8a9b-0c1d2e3f4a5b",
    status: "interrupted",
    startedAt: "2026-11-22T13:24:20.542Z",
    cwd: "/repo",
    agent: `fixer ${evil}`,
    store: "/repo/.agent/.finishline/state.db",
    baseBranch: `main\n# forged ${evil}`,
    selection: { label: "agent:go | `x` <script>", limit: 3, notes: [...PAYLOADS] },
    parallel: 2,
    runArgs: [],
    blockedLabel: "blocked",
    report: "/repo/fleet.md",
    outputDir: "/repo/out",
    entries: PAYLOADS.map((title, index) =>
      entry(index + 1, title, {
        ...(index % 2 === 0
          ? { pullRequest: `https://github.com/octo/demo/pull/${index} ${title}` }
          : { labelled: `blocked ${title}`, status: "blocked" as const }),
        reason: LINES,
        runId: "`run|<script>",
        iterations: 1,
        costUsd: 0.01,
        durationMs: 1_000,
      })
    ),
  };
  const report = renderFleetReport(record, fleetTotals(record, 5_000));
  const html = toHtml(report);

  await t.step("no raw HTML outside code; only the report's own elements", () => {
    for (const raw of ["<script", "<img", "</blockquote>", "<!--"]) {
      assert.ok(!prose(report).includes(raw), `${raw} outside code`);
    }
    assert.deepEqual(foreignTags(html), []);
    assert.deepEqual(hiddenLinks(html), []);
  });

  await t.step("the only heading is the report's own", () => {
    assert.deepEqual(headingLines(report), ["# finishline fleet 0f1e2d3c"]);
    assert.deepEqual(renderedHeadings(report), ["# finishline fleet 0f1e2d3c"]);
  });

  await t.step("one row per issue, each with the table's eight columns", () => {
    assert.deepEqual(tableWidths(report), [Array(PAYLOADS.length + 2).fill(8)]);
    const rows = [...html.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].slice(1).map((row) =>
      textsOf(row[1], "td")
    );
    assert.equal(rows.length, PAYLOADS.length);
    for (const [index, cells] of rows.entries()) {
      const title = PAYLOADS[index];
      assert.equal(cells[1], title, "the title as written");
      assert.equal(cells[2], `${index % 2 === 0 ? "completed" : "blocked"}: ${ONE_LINE}`);
      assert.equal(
        cells[3],
        index % 2 === 0
          ? `https://github.com/octo/demo/pull/${index} ${title}`
          : `labelled blocked ${title}`,
      );
      assert.equal(cells[7], "`run|<sc", "the run id's first 8 characters");
    }
  });

  await t.step("the label, agent, branch and notes are there as written", () => {
    const items = textsOf(html, "li");
    assert.ok(
      items.includes(
        "Issues: the open issues labelled agent:go | `x` <script>, by priority label then age (at most 3)",
      ),
      items.join("\n"),
    );
    assert.ok(
      items.includes(`Agent fixer ${evil}, 2 runs at once, worktrees from main # forged ${evil}`),
    );
    for (const note of PAYLOADS) assert.ok(items.includes(note), `note ${note}`);
    assert.match(textOf(html), /Continue it with fleet --resume 0f1e2d3c/);
  });
});
