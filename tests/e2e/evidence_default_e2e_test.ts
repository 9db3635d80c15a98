/**
 * End to end for evidence by default: a small Node project whose `npm test`
 * fails, the built-in agent with no `verify` block, the real Claude Code
 * binary against the scripted model server, a scripted `gh` on PATH.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";

const BROKEN = "exports.add = (a, b) => a - b;\n";
const FIXED = "exports.add = (a, b) => a + b;\n";
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

const success = (summary: string, extra: Record<string, unknown> = {}) =>
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "Fix add() so that the tests pass",
    summary,
    ...extra,
  });

Deno.test("an issue is done only when the repository's own tests pass, and the runner closes it", async () => {
  await using repo = await tempRepo();
  await nodeProject(repo.path);
  await using gh = await FakeGitHub.create({
    repo: "octo/math",
    issues: [{ number: 5, title: "add() subtracts", body: "2 + 2 should be 4." }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      // The agent tries to close the issue and claim success without changing code.
      toolTurn("Bash", { command: "gh issue close 5 --comment 'fixed'" }),
      // By other spellings too, and with what GitHub access it has.
      toolTurn("Bash", { command: `"$(command -v gh)" issue close 5` }),
      toolTurn("Bash", { command: "gh api repos/octo/math/issues/5 -f state=closed" }),
      toolTurn("Bash", {
        command: 'printf "token=%s login=%s" "$GH_TOKEN" "$GH_CONFIG_DIR" > /dev/stderr; exit 3',
      }),
      success("Closed the issue"),
      // Sent back by the failed checks, it fixes the code for real.
      toolTurn("Bash", {
        command: `printf '${FIXED.trim()}\\n' > src/math.js && git commit -qam 'fix: add() adds'`,
      }),
      success("Fixed add() and committed"),
      textTurn("Done."),
    ]],
  });
  const run = await runCli(["--issue", "5", "--json"], {
    cwd: repo.path,
    server,
    // The runner's own login: the agent never sees it.
    env: { ...gh.env(), GH_TOKEN: "ghp_runnersowntoken0000000000000000000000" },
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 1);

  // The agent's own close was refused before it ran.
  const closes = (await gh.calls()).filter((call) =>
    call.argv.slice(0, 2).join(" ") === "issue close"
  );
  assert.equal(closes.length, 1, "only the runner closed the issue");
  assert.ok(!closes[0].argv.includes("fixed"), "the agent's comment never reached gh");
  const requests = JSON.stringify(server.requests.filter((request) => !request.side));
  assert.match(requests, /finishline closes the issue itself once the evidence passes/);
  const last = JSON.stringify(server.requests.filter((request) => !request.side).at(-1)?.body);
  assert.equal(
    last.match(/finishline closes the issue itself once the evidence passes/g)?.length,
    3,
    "each spelling was refused",
  );
  // No token in the agent's environment, and gh pointed at a folder with no login.
  assert.match(requests, /token= login=[^"\\]*no-gh-login/);
  assert.doesNotMatch(requests, /ghp_runnersowntoken/);
  // The first complete_task was answered with the failing check, named with its test.
  assert.match(requests, /npm test.*fails/);
  assert.match(requests, /failing before your changes too: \\"adds\\"/);

  const state = await gh.state();
  assert.equal(state.issues[0].state, "CLOSED");
  const closing = state.issues[0].comments?.at(-1)?.body ?? "";
  assert.match(closing, /Checks that passed on the final state:\n- `npm test`/);
  assert.match(closing, /fix: add\(\) adds/);

  const report = await Deno.readTextFile(result.report);
  assert.match(report, /## Evidence: the repository's checks/);
  assert.match(report, /npm test {2}\(package.json has scripts.test/);
  assert.match(report, /Baseline on `[0-9a-f]{12}` \([0-9.]+ ?s\): `npm test` red \(adds\)/);
  assert.match(report, /\| `npm test` \| red \| green \|/);
});

Deno.test("a run whose checks cannot start is refused before any session", async () => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ scripts: { test: "vitest" }, packageManager: "pnpm@9.0.0" }),
  );
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "pnpm project");
  await using server = await ScriptedModelServer.start({ fallback: textTurn("never") });
  const run = await runCli(["--task", "x", "--iterate-max", "1"], {
    cwd: repo.path,
    server,
    env: { PATH: "/usr/bin:/bin" },
  });
  assert.equal(run.code, 2, run.stderr);
  assert.match(
    run.stderr,
    /Check "pnpm test" \(from package.json scripts.test\) cannot start: "pnpm" is not installed or not on PATH/,
  );
  assert.equal(server.requests.length, 0);
  await assert.rejects(Deno.stat(`${repo.path}/.agent/.finishline`));
});
