/**
 * End to end: no evidence is not success. An issue run on a repository
 * where finishline finds no check (a C library built by a script of its own) must not say that the
 * checks passed, must not close the issue, and must say "unverified: no
 * checks found" in the complete_task answer, the final line, the report,
 * `--json`, the pull request body and the issue; exit 7. With a check the
 * same claim completes and the issue is closed. The CLI as a subprocess,
 * the real Claude Code binary against the scripted model server, a scripted
 * `gh`, real git.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";

const ISSUE = {
  number: 42,
  title: "add() returns the difference",
  body: "add(2, 3) should be 5.",
  labels: [],
};

/** A C library with a bug, built by a script of its own: no check finishline knows how to find. */
async function cmakeProject(repo: string): Promise<void> {
  await Deno.mkdir(`${repo}/src`, { recursive: true });
  await Deno.writeTextFile(`${repo}/build.sh`, "#!/bin/sh\ncc -c src/add.c -o add.o\n");
  await Deno.writeTextFile(`${repo}/src/add.c`, "int add(int a, int b) { return a - b; }\n");
  await git(repo, "add", ".");
  await git(repo, "commit", "-qm", "feat: adder");
}

/** The worker fixes the bug, commits, and claims success. */
function fixAndClaim() {
  return [
    toolTurn("Bash", {
      command: "sed -i 's/a - b/a + b/' src/add.c && git commit -qam 'fix: add adds'",
    }),
    toolTurn(COMPLETE_TASK_TOOL, {
      status: "success",
      original_request_summary: "add() must add",
      summary: "add() adds",
    }),
    textTurn("Fixed."),
  ];
}

/** Every tool result the worker read, as text. */
function toolResults(server: ScriptedModelServer): string {
  const results: string[] = [];
  for (const request of server.requests.filter((request) => !request.side)) {
    const body = request.body as { messages?: Array<{ content?: unknown }> };
    for (const message of body.messages ?? []) {
      if (!Array.isArray(message.content)) continue;
      for (const block of message.content as Array<{ type?: string; content?: unknown }>) {
        if (block.type === "tool_result") results.push(JSON.stringify(block.content));
      }
    }
  }
  return results.join("\n");
}

Deno.test("an issue run with no check found ends unverified (exit 7): nothing says the checks passed, the issue stays open, every output says why", async () => {
  await using repo = await tempRepo();
  await using origin = await tempDir("finishline-origin-");
  await git(origin.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", origin.path);
  await cmakeProject(repo.path);
  await using gh = await FakeGitHub.create({ repo: "octo/demo", issues: [ISSUE] });
  await using server = await ScriptedModelServer.start({ scripts: [fixAndClaim()] });
  const run = await runCli(["--issue", "42", "--worktree", "--create-pr", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 7, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "unverified");
  assert.equal(result.unverified, "no checks found");
  assert.match(result.completionReason, /^unverified: no checks found; /);
  assert.equal(server.sessionIds().length, 1, "one claim, no second session");

  // The worker is told the truth in the tool result: not "the checks passed".
  const said = toolResults(server);
  assert.match(
    said,
    /Recorded: success, but nothing could check it \(unverified: no checks found\)/,
  );
  assert.doesNotMatch(said, /the checks passed/);

  // The final line, the report.
  assert.match(run.stderr, /\[finishline\] Ended unverified: no checks found; /);
  assert.doesNotMatch(run.stderr, /Done: /);
  const report = await Deno.readTextFile(result.report);
  assert.match(report, /❔ \*\*unverified\*\*: no checks found/);
  assert.match(report, /> \*\*unverified: no checks found\.\*\* Nothing checked this work/);

  // The issue is open, with a comment that says why; the pull request's body says unverified.
  const state = await gh.state();
  assert.equal(state.issues[0].state ?? "OPEN", "OPEN");
  const calls = (await gh.calls()).map((call) => call.argv.join(" "));
  assert.ok(!calls.some((call) => call.startsWith("issue close")), calls.join("\n"));
  assert.ok(
    state.issues[0].comments?.some((comment) =>
      comment.body.includes("did not close this issue: unverified: no checks found")
    ),
    JSON.stringify(state.issues[0].comments),
  );
  const pulls = state.pullRequests ?? [];
  assert.equal(pulls.length, 1, "the work is published for a person to check");
  assert.match(pulls[0].body, /\*\*unverified: no checks found\*\*/);
  assert.doesNotMatch(pulls[0].body, /local checks passed/);
});

Deno.test("the same claim with a check that passes completes (exit 0) and finishline closes the issue", async () => {
  await using repo = await tempRepo();
  await cmakeProject(repo.path);
  await Deno.mkdir(`${repo.path}/.agent/worker`, { recursive: true });
  await Deno.writeTextFile(
    `${repo.path}/.agent/worker/agent.json`,
    JSON.stringify({
      name: "worker",
      behavior: { completionType: "issue", allowedTools: ["Bash"] },
      verify: { checks: [{ type: "command", name: "adds", command: "grep -q 'a + b' src/add.c" }] },
    }),
  );
  await git(repo.path, "add", ".agent");
  await git(repo.path, "commit", "-qm", "chore: agent");
  await using gh = await FakeGitHub.create({ repo: "octo/demo", issues: [ISSUE] });
  await using server = await ScriptedModelServer.start({ scripts: [fixAndClaim()] });
  const run = await runCli(["--agent", "worker", "--issue", "42", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.unverified, undefined);
  assert.match(toolResults(server), /Recorded: success, and the checks passed/);
  assert.doesNotMatch(run.stderr, /unverified/);
  assert.equal((await gh.state()).issues[0].state, "CLOSED");
});
