/**
 * End to end for fast feedback on a failed claim: the real Claude Code
 * binary against the scripted model server, the CLI as a subprocess, real
 * git and the project's real `npm test` (`node --test`). The first claim
 * fails with two tests; at the next claim those two run first, alone, and
 * the full suite runs only once they pass: it still rejects a claim that
 * broke another test. After every run, `git worktree list` holds the
 * checkout alone.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import type { ChecksEvidence } from "../../agents/record/iteration.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { commitAgent, git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const KEYWORD = "SHIPPED";
const MATH = (add: string, sub: string) =>
  `exports.add = (a, b) => ${add};\nexports.sub = (a, b) => ${sub};\n`;
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add, sub } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
test("adds zero", () => assert.equal(add(2, 0), 2));
test("subtracts", () => assert.equal(sub(3, 1), 2));
`;

const AGENT = {
  name: "fixer",
  behavior: {
    completionType: "manual",
    completionConfig: { completionKeyword: KEYWORD, maxIterations: 1 },
    allowedTools: ["Bash"],
  },
  probe: { enabled: false },
};

const bash = (command: string) => toolTurn("Bash", { command });
const claim = (summary: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "Fix add() so that the tests pass",
    summary,
  });
/** The agent's edit of src/math.js, committed. */
const commitMath = (add: string, sub: string) =>
  bash(
    `cat > src/math.js <<'EOF'\n${MATH(add, sub)}EOF\ngit add -A && git commit -qm 'fix: add'`,
  );

async function play(
  second: { add: string; sub: string },
  onSpawn?: (child: Deno.ChildProcess) => Promise<void>,
) {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/src`);
  await Deno.mkdir(`${repo.path}/test`);
  await Deno.writeTextFile(`${repo.path}/src/math.js`, MATH("a * b + 7", "a - b"));
  await Deno.writeTextFile(`${repo.path}/test/math.test.js`, TEST);
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ name: "math", private: true, scripts: { test: "node --test" } }),
  );
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "math with a bug");
  await commitAgent(repo.path, AGENT);
  await using server = await ScriptedModelServer.start({
    scripts: [[
      // Claim 1 with nothing fixed: "adds" and "adds zero" fail.
      claim("done"),
      commitMath(second.add, second.sub),
      claim("add fixed"),
      textTurn(`All tests pass. ${KEYWORD}`),
    ]],
    fallback: textTurn(`Nothing to add. ${KEYWORD}`),
  });
  const run = await runCli(["--agent", AGENT.name, "--json"], {
    cwd: repo.path,
    server,
    onSpawn,
  });
  const result = JSON.parse(run.stdout);
  const finished = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line))
    .filter((record: { kind: string }) => record.kind === "iteration_finished");
  // What the agent was told: every request's messages.
  const told = server.requests.map((request) => JSON.stringify(request.body.messages));
  return {
    code: run.code,
    status: result.status as string,
    told: told.join("\n"),
    checks: finished.at(-1)?.summary.checks as ChecksEvidence | undefined,
    worktrees: (await git(repo.path, "worktree", "list")).trim().split("\n"),
    report: result.report ? await Deno.readTextFile(result.report) : "",
  };
}

Deno.test("claim 2 re-runs the two failed tests first, then the full suite completes it", async () => {
  const run = await play({ add: "a + b", sub: "a - b" });
  assert.match(run.told, /\\"adds\\", \\"adds zero\\"/, "claim 1 named both");
  assert.equal(run.status, "completed");
  const rerun = run.checks?.rerun?.[0];
  assert.deepEqual(rerun?.tests, ["adds", "adds zero"]);
  assert.equal(rerun?.outcome, "passed");
  assert.match(rerun?.command ?? "", /^npm test -- '--test-name-pattern=/);
  // The verdict came from the whole suite, after the two passed alone.
  assert.equal(run.checks?.checks[0].testsRun, 3);
  assert.equal(run.checks?.passed, true);
  assert.match(
    run.report,
    /re-run first:\*\*\n- `npm test`: adds, adds zero: passed, with `npm test -- /,
  );
  assert.equal(run.worktrees.length, 1, run.worktrees.join("\n"));
});

Deno.test("claim 2 whose fix broke another test is still rejected by the full suite", async () => {
  const run = await play({ add: "a + b", sub: "a + b" });
  assert.notEqual(run.status, "completed");
  assert.equal(run.checks?.rerun?.[0].outcome, "passed");
  assert.equal(run.checks?.passed, false);
  assert.deepEqual(run.checks?.checks[0].failing, ["subtracts"]);
  assert.match(run.told, /new failures \(not failing before your changes\): \\"subtracts\\"/);
  assert.equal(run.worktrees.length, 1, run.worktrees.join("\n"));
});

Deno.test("claim 2 that fixed nothing is answered from the two tests alone", async () => {
  const run = await play({ add: "a * b + 9", sub: "a - b" });
  assert.notEqual(run.status, "completed");
  assert.match(
    run.told,
    /still fails in \\"adds\\", \\"adds zero\\": finishline re-ran first only/,
  );
  assert.equal(run.checks?.rerun?.[0].outcome, "still failing");
  assert.equal(run.checks?.checks[0].testsRun, 2, "the full suite did not run");
  assert.equal(run.worktrees.length, 1, run.worktrees.join("\n"));
});

Deno.test("Ctrl-C while the failed tests run again leaves no worktree and no test process", async () => {
  await using marks = await tempDir();
  const started = `${marks.path}/started`;
  // Claim 2's add() says it started, then blocks for a minute: the re-run is under way.
  const slow = `(require("fs").writeFileSync(${
    JSON.stringify(started)
  }, String(process.pid)), Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000), a + b)`;
  const run = await play({ add: slow, sub: "a - b" }, async (child) => {
    while (!(await Deno.stat(started).then(() => true, () => false))) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill("SIGINT");
  });
  assert.equal(run.code, 130);
  assert.equal(run.status, "interrupted");
  assert.equal(run.worktrees.length, 1, run.worktrees.join("\n"));
  const pid = await Deno.readTextFile(started);
  // Nothing finishline starts outlives it: the blocked test process is gone with the run.
  // Gone, or dead and not yet reaped by init (a zombie holds no resources).
  const state = await Deno.readTextFile(`/proc/${pid}/stat`).then(
    (stat) => stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0],
    () => "gone",
  );
  assert.match(state, /^(?:gone|Z|X)$/, `the test process ${pid} is in state ${state}`);
});
