/**
 * End to end for the GitHub handlers: the CLI as a subprocess, the real
 * Claude Code binary against the scripted model server, a scripted `gh` on
 * PATH (GitHub itself cannot run here), real git in temp repositories.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { pathExists } from "../../agents/support/resource.ts";
import { runCli, tempRepo } from "../_helpers.ts";
import { catalogueLine } from "./_fault_catalogue.ts";
import { checkedDefaultAgent, unsandboxedDefaultAgent } from "./_checked_agent.ts";

const REPO = "octo/demo";

async function agent(repo: string, name: string, github: Record<string, unknown>): Promise<void> {
  await Deno.mkdir(`${repo}/.agent/${name}`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.agent/${name}/agent.json`,
    JSON.stringify({
      name,
      behavior: {
        completionType: "iterate",
        completionConfig: { maxIterations: 4 },
        allowedTools: ["Bash"],
      },
      // These runs test the agent closing the issue itself; runner closing has its own tests.
      github: { closeIssue: "agent", ...github },
      // The agent's own `gh` is the scripted one, whose GitHub is a folder of the host's: the
      // sandbox (rightly) hides it, where the real gh would reach GitHub over the network.
      verify: { sandbox: "off" },
    }),
  );
}

function mainRequests(server: ScriptedModelServer, sessionIndex: number) {
  return server.requests.filter((request) =>
    !request.side && request.sessionIndex === sessionIndex
  );
}

Deno.test("issue run: the agent closes the issue in iteration 2; with no check the run ends unverified, exit 7", async () => {
  await using repo = await tempRepo();
  await agent(repo.path, "worker", {
    labels: { inProgress: "agent:working", blocked: "agent:blocked" },
    comment: true,
  });
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{
      number: 42,
      title: "Add a greeting",
      body: "Create greet.txt saying hello. {uv-agent_name} stays literal.",
      labels: ["enhancement"],
      comments: [{ author: "alice", body: "Old comment from before the run" }],
    }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        async () => {
          await gh.update((state) => {
            state.issues[0].comments = [
              ...(state.issues[0].comments ?? []),
              {
                author: "bob",
                body: "Please also add a newline at the end.",
                createdAt: new Date().toISOString(),
              },
            ];
          });
          return toolTurn("Bash", {
            command:
              "printf 'hello' > greet.txt && git add greet.txt && git commit -qm 'feat: greet'",
          });
        },
        textTurn("Wrote greet.txt and committed it."),
      ],
      [
        toolTurn("Bash", {
          command:
            "echo >> greet.txt && git commit -qam 'fix: newline' && gh issue close 42 --comment 'Done: greet.txt'",
        }),
        textTurn("Closed the issue."),
      ],
      [textTurn("This session must never start.")],
    ],
  });
  const run = await runCli(["--agent", "worker", "--issue", "42", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  // The agent closed the issue, and no check exists: closed, but nothing verified it (exit 7).
  assert.equal(run.code, 7, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "unverified");
  assert.equal(result.unverified, "no checks found");
  assert.equal(server.sessionIds().length, 2);

  const first = JSON.stringify(mainRequests(server, 0)[0].body);
  assert.ok(first.includes("Add a greeting"), "the title reaches the agent");
  assert.ok(
    first.includes("Create greet.txt saying hello. {uv-agent_name} stays literal."),
    "the body, literally",
  );
  assert.ok(
    first.includes("close issue #42") || first.includes("gh issue close 42"),
    "criteria reach the agent",
  );
  const second = JSON.stringify(mainRequests(server, 1)[0].body);
  assert.ok(
    second.includes("Please also add a newline at the end."),
    "a new human comment steers the agent",
  );
  assert.ok(!second.includes("Old comment from before the run"), "old comments are not new");

  const state = await gh.state();
  assert.equal(state.issues[0].state, "CLOSED");
  assert.ok(
    !state.issues[0].labels?.includes("agent:working"),
    "the in-progress label is removed at the end",
  );
  const calls = (await gh.calls()).map((call) => call.argv.join(" "));
  assert.ok(
    calls.some((call) =>
      call.startsWith("issue edit 42") && call.includes("--add-label agent:working")
    ),
  );
  assert.ok(
    calls.some((call) =>
      call.startsWith("issue edit 42") && call.includes("--remove-label agent:working")
    ),
  );
  const progress = (state.issues[0].comments ?? []).filter((comment) =>
    comment.body.includes("finishline")
  );
  assert.equal(progress.length, 2, "one progress comment per iteration");
  assert.equal(
    calls.filter((call) => call.startsWith("issue view 42 --json state")).length,
    2,
    "checked once per iteration",
  );
});

Deno.test("issue run: an issue never closed ends at the cap with exit 3", async () => {
  await using repo = await tempRepo();
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{ number: 7, title: "Impossible" }],
  });
  await using server = await ScriptedModelServer.start({ fallback: textTurn("Still thinking.") });
  const run = await runCli(["--issue", "7", "--iterate-max", "2"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(server.sessionIds().length, 2);
  assert.match(
    run.stderr,
    /Stopped at the iteration cap \(2\) before resolve issue #7 with passing checks/,
  );
});

Deno.test("issue run: gh failing transiently mid-run is retried, logged and does not end the run", async () => {
  await using repo = await tempRepo();
  // A check, so that the claim is verified and the runner closes the issue.
  await checkedDefaultAgent(repo.path, "test -f net.txt");
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{ number: 5, title: "Flaky network" }],
    failures: [{ match: "issue view 5 --json state", times: 2 }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [
      [textTurn("First pass done.")],
      [
        toolTurn("Bash", {
          command: "printf 'retry' > net.txt && git add net.txt && git commit -qm 'fix: retry'",
        }),
        toolTurn(COMPLETE_TASK_TOOL, {
          status: "success",
          original_request_summary: "Make the network less flaky",
          summary: "Retried the calls",
        }),
        textTurn("Reported."),
      ],
    ],
  });
  const run = await runCli(["--issue", "5", "--iterate-max", "3", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 2);
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n").map((line) =>
    JSON.parse(line)
  );
  const first = records.find((record) =>
    record.kind === "iteration_finished" && record.iteration === 1
  );
  assert.equal(first.verdict, "continue");
  assert.equal(
    first.summary.faults.length,
    2,
    "both failed attempts are counted in the iteration record",
  );
  assert.match(first.summary.faults[0], /gh issue view 5: HTTP 502.*attempt 1, retrying/);
  // The runner, not the agent, closed the issue once the run completed.
  const state = await gh.state();
  assert.equal(state.issues[0].state, "CLOSED");
  assert.match(
    state.issues[0].comments?.at(-1)?.body ?? "",
    /finishline\*\* closes this issue: Issue #5 done after iteration 2/,
  );
});

Deno.test("project run: phases follow the board and review actions, never free text", async () => {
  await using repo = await tempRepo();
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{ number: 1, title: "Login page", state: "CLOSED" }, {
      number: 2,
      title: "Logout button",
    }],
    projects: [{
      number: 3,
      owner: "octo",
      title: "Auth",
      items: [
        { id: "PVTI_1", title: "Login page", status: "Done", issue: 1 },
        { id: "PVTI_2", title: "Logout button", status: "In Progress", issue: 2 },
      ],
    }],
  });
  const review = (result: string, notes: string) =>
    textTurn(
      `Reviewed.\n\`\`\`action\n${JSON.stringify({ type: "review", result, notes })}\n\`\`\``,
    );
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        toolTurn("Bash", {
          command: "gh issue close 2 && gh project item-edit --id PVTI_2 --project-id PVT_kw3 " +
            "--field-id PVTSSF_status --single-select-option-id opt_done",
        }),
        textTurn("Logout button shipped. Phase: complete! Project complete."),
      ],
      [review("fail", "logout lacks a test")],
      [review("pass", "tests added and green")],
      [textTurn("This session must never start.")],
    ],
  });
  await unsandboxedDefaultAgent(repo.path);
  const run = await runCli(["--project", "3", "--owner", "octo", "--json", "--iterate-max", "5"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  // The board is done and the review passed, but no check exists here: unverified (exit 7).
  assert.equal(run.code, 7, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 3, "free text claiming completion does not complete");
  assert.equal(result.status, "unverified");
  assert.match(result.completionReason, /called the work done in iteration 3/);
  const first = JSON.stringify(mainRequests(server, 0)[0].body);
  assert.ok(first.includes("Phase: **processing**"));
  assert.ok(first.includes("#2 Logout button [In Progress]"), "open items listed");
  const second = JSON.stringify(mainRequests(server, 1)[0].body);
  assert.ok(second.includes("Phase: **review**"), "all items done -> review");
  const third = JSON.stringify(mainRequests(server, 2)[0].body);
  assert.ok(third.includes("Phase: **processing**"), "a failed review goes back to processing");
  assert.ok(third.includes("Back after a failed review: yes"));
  assert.ok(third.includes("logout lacks a test"));
});

Deno.test("project run: --label selects the items that count", async () => {
  await using repo = await tempRepo();
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{ number: 1, title: "A" }, { number: 2, title: "B" }],
    projects: [{
      number: 4,
      owner: "octo",
      title: "Mixed",
      items: [
        { id: "PVTI_A", title: "A", status: "Done", issue: 1, labels: ["sprint"] },
        { id: "PVTI_B", title: "B", status: "Todo", issue: 2, labels: ["later"] },
      ],
    }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn(
        'All sprint items are done.\n```action\n{"type": "review", "result": "pass", "notes": "ok"}\n```',
      ),
    ]],
  });
  const run = await runCli(["--project", "4", "--owner", "octo", "--label", "sprint", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 7, run.stderr);
  assert.match(JSON.parse(run.stdout).completionReason, /^unverified: no checks found; /);
  const first = JSON.stringify(mainRequests(server, 0)[0].body);
  assert.ok(first.includes("Phase: **review**"));
  assert.ok(!first.includes("PVTI_B"), "items without the label are left out");
});

Deno.test("GitHub preflight failures exit 2 before any agent session", async (t) => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start();
  await t.step("gh missing", async () => {
    const run = await runCli(["--issue", "1"], {
      cwd: repo.path,
      server,
      env: { PATH: "/nonexistent" },
    });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /Cannot find the GitHub CLI "gh": install it/);
  });
  await t.step("gh not logged in", async () => {
    await using gh = await FakeGitHub.create({
      repo: REPO,
      authenticated: false,
      issues: [{ number: 1, title: "x" }],
    });
    const run = await runCli(["--issue", "1"], { cwd: repo.path, server, env: gh.env() });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /gh auth login/);
  });
  await t.step("issue not found", async () => {
    await using gh = await FakeGitHub.create({ repo: REPO, issues: [] });
    const run = await runCli(["--issue", "99"], { cwd: repo.path, server, env: gh.env() });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /Cannot find issue #99 \(flag "--issue"\)/);
    assert.equal(run.stderr.trim().split("\n").length, 1);
  });
  await t.step("GitHub answering 502 every time: not answering, after the retries", async () => {
    await using gh = await FakeGitHub.create({
      repo: REPO,
      issues: [{ number: 7, title: "x" }],
      failures: [{ match: "issue view", times: 99 }],
    });
    const started = performance.now();
    const run = await runCli(["--issue", "7"], { cwd: repo.path, server, env: gh.env() });
    assert.equal(run.code, 2, run.stderr);
    assert.equal(
      run.stderr,
      [1, 2, 3].map((attempt) =>
        `[finishline] GitHub did not answer gh issue view (HTTP 502: Bad Gateway, attempt ${attempt}): trying again\n`
      ).join("") +
        "finishline: GitHub is not answering (HTTP 502: Bad Gateway after 4 attempts): try again later\n",
    );
    const views = (await gh.calls()).filter((call) => call.argv[0] === "issue");
    assert.equal(views.length, 4);
    assert.equal(await pathExists(`${repo.path}/.agent/.finishline`), false, "nothing written");
    catalogueLine("gh 502 at preflight, every time", "not answering, exit 2", started, []);
  });
  await t.step("project not found", async () => {
    await using gh = await FakeGitHub.create({ repo: REPO, projects: [] });
    const run = await runCli(["--project", "8"], { cwd: repo.path, server, env: gh.env() });
    assert.equal(run.code, 2, run.stderr);
    assert.match(run.stderr, /Cannot find project #8 of owner "octo"/);
  });
  await t.step("bad flags", async () => {
    for (
      const [args, message] of [
        [["--issue", "0"], /--issue/],
        [["--issue", "abc"], /--issue/],
        [["--issue", "1", "--project", "2"], /conflict/],
        [["--label", "x"], /"--label" only applies to project runs/],
        [["--issue", "1", "--repo", "not a repo"], /"--repo" expects owner\/name/],
      ] as Array<[string[], RegExp]>
    ) {
      const run = await runCli(args, { cwd: repo.path, server });
      assert.equal(run.code, 2, run.stderr);
      assert.match(run.stderr, message);
    }
  });
  assert.equal(server.requests.length, 0, "no agent session started");
});

Deno.test("a 502 twice at preflight is retried and the issue run proceeds", async () => {
  await using repo = await tempRepo();
  await agent(repo.path, "worker", {});
  await using gh = await FakeGitHub.create({
    repo: REPO,
    issues: [{ number: 7, title: "Add a greeting", body: "Create greet.txt." }],
    failures: [{ match: "issue view 7", times: 2 }],
  });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command:
          "printf 'hello' > greet.txt && git add greet.txt && git commit -qm 'feat: greet' && gh issue close 7",
      }),
      textTurn("Committed greet.txt and closed the issue."),
    ]],
  });
  const started = performance.now();
  const run = await runCli(["--agent", "worker", "--issue", "7", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 7, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "unverified");
  assert.equal(
    run.stderr.match(/GitHub did not answer gh issue view \(HTTP 502: Bad Gateway, attempt \d\)/g)
      ?.length,
    2,
    run.stderr,
  );
  const store = SqliteStore.open(`${repo.path}/.agent/.finishline/state.db`);
  const iterations = store.iterations(result.runId).map((row) => row.number);
  store.close();
  catalogueLine("gh 502 twice at preflight", "retried, completed, exit 0", started, iterations);
  const reads = (await gh.calls()).filter((call) =>
    call.argv.join(" ").startsWith("issue view 7 --json number")
  );
  assert.equal(reads.length, 3, "two 502s, then the answer");
});
