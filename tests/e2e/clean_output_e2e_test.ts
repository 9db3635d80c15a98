/**
 * End to end for clean output: an ordinary run prints no warning of a
 * dependency; every run ends with one sentence for people (what failed and
 * where the details are, never the feedback written for the agent); Ctrl-C
 * says how to resume; `--json` prints JSON alone on stdout. The real Claude
 * Code binary against the scripted model server, real git, a scripted `gh`.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { type CliRun, commitAgent, git, runCli, tempRepo } from "../_helpers.ts";
import { fleetRepo, goIssue } from "./_fleet.ts";

/** No line of stderr is a warning (Node's `(node:123) ...Warning`, Deno's boxed ones). */
function assertNoWarning(run: CliRun): void {
  const warnings = run.stderr.split("\n").filter((line) => /Warning/.test(line));
  assert.deepEqual(warnings, [], run.stderr);
}

/** The last line of stderr: the final line, and the report it names. */
function finalLine(run: CliRun): { line: string; report: string } {
  const line = run.stderr.trimEnd().split("\n").at(-1) ?? "";
  const report = / details in the report: (\S+\.md)$/.exec(line)?.[1];
  assert.ok(report, `the final line names the report: "${line}"`);
  return { line, report };
}

/** A Node project whose tests fail: `npm test` is the check the gate runs. */
async function failingProject(path: string): Promise<void> {
  await Deno.mkdir(`${path}/test`);
  await Deno.writeTextFile(
    `${path}/package.json`,
    JSON.stringify({ name: "math", scripts: { test: "node --test" } }),
  );
  await Deno.writeTextFile(
    `${path}/math.js`,
    "exports.add = (a, b) => a - b;\nexports.divide = (a, b) => a * b;\n",
  );
  await Deno.writeTextFile(
    `${path}/test/math.test.js`,
    `const test = require("node:test");
const assert = require("node:assert");
const { add, divide } = require("../math.js");
test("adds", () => assert.equal(add(2, 2), 4));
test("divides", () => assert.equal(divide(4, 2), 2));
`,
  );
  await git(path, "add", "-A");
  await git(path, "commit", "-qm", "math with two bugs");
}

Deno.test("ordinary multi-iteration runs print no warning and end with one sentence for people", async (t) => {
  await t.step("stalled, with the next iteration's process parked", async () => {
    await using repo = await tempRepo();
    await commitAgent(repo.path, {
      name: "idle",
      behavior: {
        completionType: "iterate",
        completionConfig: { maxIterations: 10 },
        // The stall is the point: without this the Stop hook sends the idle agent back for
        // complete_task, and the script would need turns that are not what this test checks.
        requireCompleteTask: false,
      },
      probe: { enabled: false },
    });
    await using server = await ScriptedModelServer.start({
      scripts: () => [textTurn("Nothing to do.")],
    });
    const run = await runCli(["--agent", "idle"], { cwd: repo.path, server });
    assert.equal(run.code, 4, run.stderr);
    assertNoWarning(run);
    const { line, report } = finalLine(run);
    assert.match(
      line,
      /^\[finishline\] Stalled: No progress \(no commits, no file changes\) in 3 iterations in a row; 3 iterations in \d+\.\ds for \$\d+\.\d{4}; details in the report: /,
    );
    assert.match(await Deno.readTextFile(report), /^# finishline run /);
  });

  await t.step("the cap, each claim sent back by the failing check", async () => {
    await using repo = await tempRepo();
    await failingProject(repo.path);
    await using server = await ScriptedModelServer.start({
      scripts: ({ sessionIndex }) => [
        toolTurn("Bash", {
          command:
            `echo ${sessionIndex} >> notes.txt && git add notes.txt && git commit -qm "note ${sessionIndex}"`,
        }),
        toolTurn(COMPLETE_TASK_TOOL, {
          status: "success",
          original_request_summary: "Fix add() and divide()",
          summary: "Fixed them.",
        }),
        textTurn("Done."),
      ],
    });
    const run = await runCli(["--iterate-max", "2", "--task", "Fix add() and divide()", "--json"], {
      cwd: repo.path,
      server,
    });
    assert.equal(run.code, 3, run.stderr);
    assertNoWarning(run);
    const failed = "`npm test` still fails (2 failing tests: adds, divides)";
    const result = JSON.parse(run.stdout);
    assert.equal(result.completionReason, `Reached the cap of 2 iterations; ${failed}`);
    const { line, report } = finalLine(run);
    assert.equal(report, result.report);
    assert.match(
      line,
      new RegExp(
        `^\\[finishline\\] Stopped at the iteration cap \\(2\\): ${
          failed.replace(/[()]/g, "\\$&")
        }; 2 iterations in \\d+\\.\\ds for \\$\\d+\\.\\d{4}; details in the report: `,
      ),
    );
    // The agent was told how to fix it; the person reads what failed.
    assert.doesNotMatch(run.stderr, /Last lines of its output|out_of_scope|fix it, or/);
    assert.match(await Deno.readTextFile(report), /\*\*max_iterations\*\*: Reached the cap of 2/);
  });
});

Deno.test("Ctrl-C ends the run with the command that resumes it; the resumed run says where it goes on", async () => {
  await using repo = await tempRepo();
  let firstRequest: () => void;
  const requested = new Promise<void>((resolve) => firstRequest = resolve);
  let sessions = 0;
  await using server = await ScriptedModelServer.start({
    scripts: () =>
      sessions++ === 0
        ? [() => {
          firstRequest();
          return { text: "This reply comes too late.", delayMs: 60_000 };
        }]
        : [textTurn("Iteration done.")],
  });
  const run = await runCli(["--iterate-max", "2", "--task", "Tidy up"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await requested;
      child.kill("SIGINT");
    },
  });
  assert.equal(run.code, 130, run.stderr);
  const { line } = finalLine(run);
  const resume =
    /^\[finishline\] Interrupted during iteration 1\. Resume with: (deno run -A \S+main\.ts --resume ([0-9a-f-]{36})); 1 iteration in /
      .exec(line);
  assert.ok(resume, `the final line says how to resume: "${line}"`);
  const [, command, id] = resume;
  const args = command.split(" ").slice(4);
  assert.deepEqual(args, ["--resume", id]);
  const resumed = await runCli(args, { cwd: repo.path, server });
  assert.equal(resumed.code, 0, resumed.stderr);
  // The iteration cut short is not recorded: it runs again, from the start.
  assert.match(
    resumed.stderr,
    new RegExp(
      `^\\[finishline\\] resuming run ${id} from the start: no iteration was recorded$`,
      "m",
    ),
  );
  assert.doesNotMatch(resumed.stderr, /after iteration 0/);
  assert.match(finalLine(resumed).line, /^\[finishline\] Done: Completed 2\/2 iterations; /);
});

Deno.test("--json prints one JSON value on stdout, and nothing else, wherever it is offered", async (t) => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({ fallback: textTurn("Done.") });
  /** Runs the CLI; its stdout must be one line of JSON. */
  const json = async (
    args: string[],
    options: { cwd?: string; env?: Record<string, string> } = {},
  ) => {
    const run = await runCli(args, { cwd: options.cwd ?? repo.path, server, env: options.env });
    assert.equal(run.code, 0, `${args.join(" ")}: ${run.stderr}`);
    assert.equal(run.stdout.trimEnd().split("\n").length, 1, `one line: ${run.stdout}`);
    return JSON.parse(run.stdout);
  };
  const result = await json(["--iterate-max", "1", "--task", "Tidy up", "--json"]);
  assert.equal(result.status, "completed");
  await t.step("runs, runs show, learnings search, finish", async () => {
    assert.equal((await json(["runs", "--json"]))[0].id, result.runId);
    assert.equal((await json(["runs", "show", result.runId, "--json"])).run.id, result.runId);
    assert.ok(Array.isArray(await json(["learnings", "search", "tidy", "--json"])));
    assert.equal((await json(["finish", result.runId, "--json"])).runId, result.runId);
  });
  await t.step("--list and --dry-run", async () => {
    const agents = await json(["--list", "--json"]);
    assert.ok(agents.some((agent: { name: string }) => agent.name === "iterator"));
    assert.equal((await json(["--dry-run", "--json", "--task", "x"])).dryRun, true);
  });
  await t.step("fleet --dry-run", async () => {
    await using fleet = await fleetRepo([goIssue(1), goIssue(2)]);
    const plan = await json(["fleet", "--dry-run", "--json", "--label", "agent:go"], {
      cwd: fleet.repo.path,
      env: fleet.gh.env(),
    });
    assert.equal(plan.dryRun, true);
    assert.deepEqual(plan.issues.map((issue: { number: number }) => issue.number), [1, 2]);
    assert.deepEqual(plan.issues[0].command.slice(-7), [
      "iterator",
      "--issue",
      "1",
      "--worktree",
      "--create-pr",
      "--base-branch",
      "main",
    ]);
  });
});
