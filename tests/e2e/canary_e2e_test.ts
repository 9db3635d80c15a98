/**
 * End to end: the canary. The real Claude Code binary against the scripted
 * model server, a node project whose test fails at the start: the worker
 * first makes the suite pass by muting node:assert in a module the code
 * imports, and the complete_task answer refuses it (the runner was tampered
 * with); then it fixes the code, and the run completes with the canary held.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";

const claim = (summary: string) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "add() must add",
    summary,
  });

Deno.test("a worker that mutes node:assert is refused by the canary; its honest fix completes", async () => {
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
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command:
          `printf 'const a = require("node:assert");\\nfor (const k of Object.keys(a)) a[k] = () => {};\\n' > src/quiet.js && ` +
          `printf 'require("./quiet.js");\\nexports.add = (a, b) => a - b;\\n' > src/math.js && ` +
          "git add -A && git commit -qm 'fix: add'",
      }),
      claim("The tests pass now"),
      toolTurn("Bash", {
        command:
          "git rm -q src/quiet.js && printf 'exports.add = (a, b) => a + b;\\n' > src/math.js && " +
          "git commit -qam 'fix: add adds'",
      }),
      claim("add() adds"),
      textTurn("Fixed."),
    ]],
  });
  const run = await runCli(["--iterate-max", "1", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  const said = server.requests.filter((request) => !request.side)
    .map((request) => JSON.stringify(request.body)).join("\n");
  assert.match(
    said,
    /Recorded, but the checks did NOT pass \(checks\):\\nThe test runner was tampered with/,
  );
  const report = await Deno.readTextFile(result.report);
  assert.match(
    report,
    /\*\*Canary\*\* \(finishline's own tests that must fail, random per run\): node held/,
  );
  assert.match(report, /The test runner was tampered with/);
});
