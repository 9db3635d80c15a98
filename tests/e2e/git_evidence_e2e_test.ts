/**
 * End to end for git as the source of truth: the five completion-detection
 * states, status probe replies, and worktree runs. Real git in temp
 * repositories, the real Claude Code binary against the scripted model.
 */

import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { PROBE_MARKER } from "../../agents/loop/status_probe.ts";
import { probeReply, scenarioDefinition, SCENARIOS } from "../fixtures/scenarios/mod.ts";
import { runScenario } from "../fixtures/scenarios/run.ts";
import { git, runCli, tempDir, tempRepo } from "../_helpers.ts";

Deno.test("completion detection decides the five states correctly", async (t) => {
  for (const scenario of SCENARIOS) {
    await t.step(`${scenario.state}: ${scenario.name}`, async () => {
      const outcome = await runScenario(scenario);
      assert.deepEqual(outcome.problems, []);
      // The stalled scenario's agent never says it is at work in its last iteration.
      assert.equal(outcome.metrics.falseAbort, false);
    });
  }
});

Deno.test("status probe replies: bare, fenced, in prose, garbage, and a timeout", async (t) => {
  const cases: Array<[string, string | undefined, string]> = [
    ["bare JSON", '{"status": "blocked", "message": "needs a token"}', "blocked"],
    ["fenced JSON", '```json\n{"status": "blocked", "message": "needs a token"}\n```', "blocked"],
    ["JSON in prose", 'Sure. {"status": "blocked", "message": "needs a token"} Thanks!', "blocked"],
    ["garbage", "I am blocked, I think?", "unknown"],
    ["timeout", undefined, "unknown"],
    [
      "the seed's fields",
      JSON.stringify({
        status: "blocked",
        message: "needs a token",
        agents_active: false,
        agents_details: "no agents started",
        commits_made: 0,
        should_continue: false,
      }),
      "blocked",
    ],
  ];
  for (const [name, reply, expected] of cases) {
    await t.step(name, async () => {
      await using repo = await tempRepo();
      await Deno.mkdir(`${repo.path}/.agent/scenario/completion`, { recursive: true });
      await Deno.copyFile(
        new URL("../fixtures/scenarios/commits_handler.ts", import.meta.url),
        `${repo.path}/.agent/scenario/completion/commits.ts`,
      );
      await Deno.writeTextFile(
        `${repo.path}/.agent/scenario/agent.json`,
        JSON.stringify(scenarioDefinition({
          // A real resume takes 1-3 s; only the timeout case gets a short timeout.
          probe: {
            maxProbes: 1,
            probeIntervalSeconds: 0,
            probeTimeoutSeconds: reply === undefined ? 3 : 60,
          },
          behavior: {
            completionType: "custom",
            completionConfig: { handlerPath: "completion/commits.ts", maxIterations: 1 },
            requireCompleteTask: false,
          },
        })),
      );
      await using server = await ScriptedModelServer.start({
        scripts: [[
          textTurn("Not sure where I am."),
          reply === undefined ? { text: "too late", delayMs: 30_000 } : textTurn(reply),
        ]],
      });
      const run = await runCli(["--agent", "scenario", "--json"], { cwd: repo.path, server });
      const records = (await Deno.readTextFile(JSON.parse(run.stdout).logFile)).trim().split("\n")
        .map((line) => JSON.parse(line));
      const probe = records.find((record) => record.kind === "probe");
      assert.equal(probe?.status.status, expected);
      assert.ok(
        server.requests.some((request) => JSON.stringify(request.body).includes(PROBE_MARKER)),
      );
      assert.equal(run.code, expected === "blocked" ? 5 : 3, run.stderr);
      if (expected === "blocked") {
        assert.match(JSON.parse(run.stdout).completionReason, /needs a token/);
      }
      const summary = records.find((record) => record.kind === "iteration_finished")?.summary;
      // No parseable answer within the timeout is the seed's genuine timeout: it counts.
      assert.deepEqual(
        summary?.stall,
        expected === "blocked"
          ? { counted: false, streak: 0, probe: "blocked" }
          : { counted: true, streak: 1, probe: "timeout" },
      );
      if (name === "the seed's fields") {
        assert.deepEqual(summary?.probes, [{
          status: "blocked",
          message: "needs a token",
          tasksCompleted: [],
          tasksPending: [],
          nextAction: "",
          agentsActive: false,
          agentsDetails: "no agents started",
          commitsMade: 0,
          shouldContinue: false,
        }]);
      }
    });
  }
});

Deno.test("commits are counted again before each probe: new ones end the probing", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/.agent/scenario/completion`, { recursive: true });
  await Deno.copyFile(
    new URL("../fixtures/scenarios/commits_handler.ts", import.meta.url),
    `${repo.path}/.agent/scenario/completion/commits.ts`,
  );
  await Deno.writeTextFile(
    `${repo.path}/.agent/scenario/agent.json`,
    JSON.stringify(scenarioDefinition({
      probe: { maxProbes: 3, probeIntervalSeconds: 0, probeTimeoutSeconds: 60 },
    })),
  );
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn("Migration started in the background."),
      // Answering the first probe, the agent commits, and still says it waits.
      probeReply(toolTurn("Bash", {
        command: "printf x > m.log && git add m.log && git commit -qm 'chore: m'",
      })),
      textTurn(JSON.stringify({
        status: "waiting",
        message: "the migration runs",
        agents_active: true,
        agents_details: "the migration worker",
        commits_made: 1,
        should_continue: true,
      })),
    ]],
  });
  const run = await runCli(["--agent", "scenario", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line));
  assert.equal(
    records.filter((record) => record.kind === "probe").length,
    1,
    "no second probe once git shows the commit",
  );
  assert.deepEqual(
    records.filter((record) => record.kind === "probe_skipped").map((record) => ({
      reason: record.reason,
      newCommits: record.newCommits,
    })),
    [{ reason: "commits", newCommits: 1 }],
  );
  const summary = records.find((record) => record.kind === "iteration_finished").summary;
  assert.deepEqual(summary.stall, { counted: false, streak: 0, probe: "progress" });
  assert.equal(summary.probes.length, 1);
  assert.equal(summary.probes[0].status, "waiting");
  assert.equal(summary.probes[0].agentsActive, true);
  assert.equal(summary.probes[0].agentsDetails, "the migration worker");
  assert.equal(summary.probes[0].commitsMade, 1);
  assert.equal(summary.probes[0].shouldContinue, true);
  assert.equal(await git(repo.path, "show", "HEAD:m.log"), "x");
});

Deno.test("a worktree run leaves the main checkout untouched and the branch holds the commits", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command: "printf 'hello' > greet.txt && git add greet.txt && git commit -qm 'feat: greet'",
      }),
      textTurn("Done."),
    ]],
  });
  const headBefore = await git(repo.path, "rev-parse", "HEAD");
  const run = await runCli(["--iterate-max", "1", "--worktree", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  const branch = result.worktree.branch as string;
  assert.match(branch, /^finishline\/iterator\/[0-9a-f]{8}$/);
  assert.equal(result.worktree.removed, true, "a clean worktree is removed");
  assert.equal(
    await git(repo.path, "rev-parse", "HEAD"),
    headBefore,
    "the main checkout's HEAD did not move",
  );
  assert.equal(await git(repo.path, "status", "--porcelain"), "", "the main checkout is clean");
  await assert.rejects(Deno.stat(`${repo.path}/greet.txt`), "the work is not in the main checkout");
  assert.equal(
    await git(repo.path, "show", `${branch}:greet.txt`),
    "hello",
    "the branch holds the commit",
  );
  assert.equal(await git(repo.path, "rev-list", "--count", `HEAD..${branch}`), "1");
});

Deno.test("a worktree with uncommitted work is rescued, autoCommitted and kept only if still dirty", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/.agent/wt`, { recursive: true });
  await Deno.writeTextFile(
    `${repo.path}/.agent/wt/agent.json`,
    JSON.stringify({
      name: "wt",
      behavior: {
        completionType: "iterate",
        completionConfig: { maxIterations: 1 },
        requireCompleteTask: false,
      },
      git: { autoCommit: true },
      probe: { enabled: false },
    }),
  );
  await git(repo.path, "add", ".agent");
  await git(repo.path, "commit", "-qm", "chore: agent");
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "printf 'draft' > draft.txt" }),
      textTurn("Wrote a draft."),
      textTurn("ok"),
    ]],
  });
  const run = await runCli(["--agent", "wt", "--worktree", "--base-branch", "main", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.worktree.base, "main");
  assert.equal(result.worktree.removed, true);
  assert.equal(
    await git(repo.path, "show", `${result.worktree.branch}:draft.txt`),
    "draft",
    "nothing was lost",
  );
});

Deno.test("--create-pr pushes the branch and opens a pull request through gh", async () => {
  await using repo = await tempRepo();
  await using remote = await tempDir("finishline-remote-");
  await git(remote.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", remote.path);
  const { FakeGitHub } = await import("../fixtures/fake_gh/mod.ts");
  await using gh = await FakeGitHub.create({ repo: "octo/demo" });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command: "printf 'x' > x.txt && git add x.txt && git commit -qm 'feat: x'",
      }),
      textTurn("Done."),
    ]],
  });
  const run = await runCli(["--iterate-max", "1", "--worktree", "--create-pr", "--json"], {
    cwd: repo.path,
    server,
    env: gh.env(),
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.match(result.worktree.pullRequest, /^https:\/\/github\.com\/octo\/demo\/pull\/\d+$/);
  assert.equal(
    await git(remote.path, "rev-parse", `refs/heads/${result.worktree.branch}`).then(() => true),
    true,
  );
  const calls = (await gh.calls()).map((call) => call.argv.join(" "));
  assert.ok(
    calls.some((call) =>
      call.startsWith("pr create") && call.includes(`--head ${result.worktree.branch}`)
    ),
  );
});
