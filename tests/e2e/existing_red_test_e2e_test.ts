/**
 * End to end: a bug issue whose repository already has the failing test.
 * The worker fixes the code and adds no test file; the failing test, red at
 * the baseline and passing unchanged, is the fix's fail-to-pass test, so the
 * run completes and finishline closes the issue (before, the worker was asked
 * for another test file and a correct fix never completed). The CLI as a
 * subprocess, the real Claude Code binary against the scripted model server,
 * a scripted gh, real git and node --test.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { commitAgent, git, runCli, tempRepo } from "../_helpers.ts";

Deno.test("a bug issue whose failing test already exists completes with the fix alone (exit 0)", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/src`);
  await Deno.mkdir(`${repo.path}/test`);
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ name: "adder", private: true, scripts: { test: "node --test" } }),
  );
  await Deno.writeTextFile(`${repo.path}/src/math.js`, "exports.add = (a, b) => a - b;\n");
  await Deno.writeTextFile(
    `${repo.path}/test/math.test.js`,
    'const test = require("node:test");\nconst assert = require("node:assert");\nconst { add } = require("../src/math.js");\ntest("adds", () => assert.equal(add(2, 3), 5));\n',
  );
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "feat: adder");
  // The worker's test is the evidence under test: no held-out verifier session.
  await commitAgent(repo.path, {
    name: "fixer",
    behavior: { completionType: "issue", allowedTools: ["Bash"] },
    verify: { reproduce: "worker" },
  });
  await using gh = await FakeGitHub.create({
    repo: "octo/demo",
    issues: [{ number: 9, title: "add() subtracts", body: "test 'adds' fails", labels: ["bug"] }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command: "sed -i 's/a - b/a + b/' src/math.js && git commit -qam 'fix: add adds'",
      }),
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "add() must add",
        summary: "add() adds; the existing test adds passes",
      }),
      textTurn("Fixed."),
    ]],
  });
  const run = await runCli(["--agent", "fixer", "--issue", "9", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(server.sessionIds().length, 1, "one session: the first claim passed");
  const said = JSON.stringify(server.requests.filter((request) => !request.side).at(-1)?.body);
  assert.doesNotMatch(said, /add or change no test file/);
  const report = await Deno.readTextFile(result.report);
  assert.match(report, /the repository's own adds, red at the baseline, passes unchanged/);
  assert.match(report, /\*\*Canary\*\* .*: node held/);
  assert.equal((await gh.state()).issues[0].state, "CLOSED");
});
