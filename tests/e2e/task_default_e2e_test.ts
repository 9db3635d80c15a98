/**
 * End to end for the default of `--task`: the run ends when the agent
 * reports success and the repository's checks pass, not after a fixed
 * number of iterations. A small Node project whose `npm test` fails, the
 * built-in agent, the real Claude Code binary against the scripted server.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const BROKEN = "exports.add = (a, b) => a - b;\n";
const FIXED = "exports.add = (a, b) => a + b;";
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;

async function nodeProject(path: string): Promise<void> {
  await Deno.mkdir(`${path}/src`);
  await Deno.mkdir(`${path}/test`);
  await Deno.writeTextFile(
    `${path}/package.json`,
    JSON.stringify({ name: "math", scripts: { test: "node --test" } }),
  );
  await Deno.writeTextFile(`${path}/src/math.js`, BROKEN);
  await Deno.writeTextFile(`${path}/test/math.test.js`, TEST);
  await git(path, "add", "-A");
  await git(path, "commit", "-qm", "math with a bug");
}

const success = (summary: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "Fix the failing add test",
    summary,
  });

const fix = toolTurn("Bash", {
  command: `printf '${FIXED}\\n' > src/math.js && git commit -qam 'fix: add() adds'`,
});

/** Every iteration of the worker's script: fix in the first, then claims that change nothing. */
const fixInFirst = [
  [fix, success("Fixed add() and committed"), textTurn("Done.")],
  [success("Nothing left to do"), textTurn("Done.")],
  [success("Nothing left to do"), textTurn("Done.")],
];

Deno.test("--task alone ends completed after the iteration that fixes the failing test", async () => {
  await using repo = await tempRepo();
  await nodeProject(repo.path);
  await using server = await ScriptedModelServer.start({ scripts: fixInFirst });
  // The user has Claude Code settings of their own, which the run does not read.
  await using home = await tempDir("finishline-home-");
  await Deno.mkdir(`${home.path}/.claude`);
  await Deno.writeTextFile(`${home.path}/.claude/settings.json`, "{}");
  const run = await runCli(["--task", "Fix the failing add test", "--json"], {
    cwd: repo.path,
    server,
    home: home.path,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.match(
    run.stderr,
    /\[finishline\] your Claude Code settings \(~\/\.claude\/settings\.json\) are not read/,
  );
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 1, "no iteration after the fix");
  // The stable fields of the result: what it worked on, and the evidence at both ends.
  assert.equal(result.handler, "task");
  assert.equal(result.task, "Fix the failing add test");
  assert.equal(result.commits.count, 1);
  assert.deepEqual(
    result.evidence.checks.map((
      check: { name: string; baseline: string; final: string },
    ) => [check.name, check.baseline, check.final]),
    [["npm test", "red", "green"]],
  );
  assert.match(result.completionReason, /Task done and verified in iteration 1/);
  const report = await Deno.readTextFile(result.report);
  assert.match(report, /\| `npm test` \| red \| green \|/);
  // The task is a bug fix: a held-out test was asked of the verifier (it wrote none here).
  assert.match(report, /Held-out reproduction test: none/);
});

Deno.test("--task with --iterate-max N still runs exactly N iterations", async () => {
  await using repo = await tempRepo();
  await nodeProject(repo.path);
  await using server = await ScriptedModelServer.start({ scripts: fixInFirst });
  const run = await runCli(
    ["--task", "Fix the failing add test", "--iterate-max", "3", "--json"],
    { cwd: repo.path, server },
  );
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 3);
  assert.match(result.completionReason, /Completed 3\/3 iterations/);
});

Deno.test("--task: a success claim with the test still red goes on to the next iteration", async () => {
  await using repo = await tempRepo();
  await nodeProject(repo.path);
  await using server = await ScriptedModelServer.start({
    scripts: [
      // A claim without a fix: the checks answer it; the agent stops without fixing.
      [success("It works"), textTurn("I am done.")],
      // The next iteration fixes it.
      [fix, success("Fixed add() and committed"), textTurn("Done.")],
    ],
  });
  const run = await runCli(["--task", "Fix the failing add test", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 2, "the red claim did not end the run");
  const worker = JSON.stringify(server.requests.filter((request) => !request.side));
  assert.match(worker, /npm test.*fails/, "the claim was answered with the failing check");
  assert.equal(
    (await Deno.readTextFile(`${repo.path}/src/math.js`)).trim(),
    FIXED,
  );
});
