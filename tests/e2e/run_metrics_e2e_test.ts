/**
 * End to end for the success metrics of completion detection (seed 003):
 * several short runs in one repository, the real Claude Code binary against
 * the scripted model, real git and real SQLite; each run's `--json` result
 * carries its metrics, and `runs stats` sums them over the history.
 */

import assert from "node:assert/strict";
import {
  ScriptedModelServer,
  type SessionScript,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { probeReply, rescueReply } from "../fixtures/scenarios/mod.ts";
import { commitAgent, git, runCli, tempRepo } from "../_helpers.ts";

const unanswered = () => probeReply(textTurn("no idea"));

Deno.test("runs stats sums the seed's metrics over the runs of a repository", async (t) => {
  await using repo = await tempRepo();
  await commitAgent(repo.path, {
    name: "metrics",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 6 },
      allowedTools: ["Bash"],
      // The probes and rescues are under test: a complete_task call would skip the probe.
      requireCompleteTask: false,
    },
    probe: { maxProbes: 3, probeIntervalSeconds: 0, probeTimeoutSeconds: 60 },
  });
  const run = async (args: string[], scripts: SessionScript[]) => {
    await using server = await ScriptedModelServer.start({ scripts });
    const result = await runCli(["--agent", "metrics", "--json", ...args], {
      cwd: repo.path,
      server,
    });
    return { ...result, json: JSON.parse(result.stdout || "{}") };
  };

  await t.step(
    "a stall: three iterations whose probes got no answer, then a rescue that commits",
    async () => {
      const stalled = await run(["--task", "Draft the notes", "--iterate-max", "6"], [
        // Changed files without a commit or a claim: probed, and the agent is still at it.
        [
          toolTurn("Bash", { command: "printf 'draft' > notes.txt" }),
          textTurn("Drafted notes."),
          probeReply(textTurn(JSON.stringify({ status: "working", message: "a first draft" }))),
          // Asked again while it works: no answer ends the probing.
          unanswered(),
        ],
        [textTurn("Thinking."), unanswered()],
        [textTurn("Still thinking."), unanswered()],
        [
          textTurn("Hmm."),
          unanswered(),
          rescueReply(
            toolTurn("Bash", { command: "git add notes.txt && git commit -qm 'docs: notes'" }),
          ),
          textTurn("Committed the notes."),
        ],
      ]);
      assert.equal(stalled.code, 4, stalled.stderr);
      assert.equal(await git(repo.path, "show", "HEAD:notes.txt"), "draft");
      assert.deepEqual(stalled.json.metrics, {
        iterations: 4,
        probedIterations: 4,
        probes: 5,
        probeTimeouts: 3,
        rescues: 1,
        rescuesCommitted: 1,
        aborted: true,
        // The agent never said it was waiting or working: a true stall.
        falseAbort: false,
      });
    },
  );

  await t.step("a worktree run whose work is rescued into a commit", async () => {
    const worktree = await run(["--task", "Write the report", "--iterate-max", "1", "--worktree"], [
      [
        toolTurn("Bash", { command: "printf 'ready' > report.txt" }),
        textTurn("The report is written."),
        probeReply(textTurn(JSON.stringify({ status: "complete", message: "report.txt" }))),
        rescueReply(
          toolTurn("Bash", { command: "git add report.txt && git commit -qm 'docs: report'" }),
        ),
        textTurn("Committed report.txt."),
      ],
    ]);
    assert.equal(worktree.code, 0, worktree.stderr);
    assert.equal(
      await git(repo.path, "show", `${worktree.json.worktree.branch}:report.txt`),
      "ready",
    );
    assert.deepEqual(worktree.json.metrics, {
      iterations: 1,
      probedIterations: 1,
      probes: 1,
      probeTimeouts: 0,
      rescues: 1,
      rescuesCommitted: 1,
      aborted: false,
      falseAbort: false,
    });
  });

  await t.step("a run whose agent waits, then commits between two probes", async () => {
    const waiting = await run(["--task", "Migrate the data", "--iterate-max", "1"], [
      [
        textTurn("The migration runs in the background."),
        probeReply(textTurn(JSON.stringify({ status: "waiting", message: "40% done" }))),
        probeReply(
          toolTurn("Bash", {
            command: "printf 'migrated' > migration.log && git add migration.log && " +
              "git commit -qm 'chore: migration'",
          }),
        ),
        textTurn(JSON.stringify({ status: "complete", message: "migrated and committed" })),
      ],
    ]);
    assert.equal(waiting.code, 0, waiting.stderr);
    assert.deepEqual(waiting.json.metrics, {
      iterations: 1,
      probedIterations: 1,
      probes: 2,
      probeTimeouts: 0,
      rescues: 0,
      rescuesCommitted: 0,
      aborted: false,
      falseAbort: false,
    });
  });

  const expected = {
    runs: 3,
    iterations: 6,
    probedIterations: 6,
    probes: 8,
    probeTimeouts: 3,
    rescues: 2,
    rescuesCommitted: 2,
    aborts: 1,
    falseAborts: 0,
    falseAbortRate: 0,
    rescueSuccessRate: 1,
    probesPerIteration: 1.3333,
    probesPerProbedIteration: 1.3333,
    timeoutRate: 0.5,
    fromIterations: 0,
    target: { falseAbortRate: 0.05 },
  };

  await t.step("runs stats --json sums them with exact counts", async () => {
    const stats = await runCli(["runs", "stats", "--json"], { cwd: repo.path });
    assert.equal(stats.code, 0, stats.stderr);
    const sums = JSON.parse(stats.stdout);
    // The detection's metrics, exactly; beside them, the outcomes in the user's terms.
    assert.deepEqual(
      Object.fromEntries(Object.keys(expected).map((key) => [key, sums[key]])),
      expected,
    );
    assert.deepEqual(sums.byStatus, { completed: 2, stalled: 1 });
    assert.equal(sums.completed, 2);
    assert.ok(sums.iterationsPerCompletedRun > 0 && sums.costUsd > 0 && sums.durationMs > 0);
    // Each run recorded its metrics at its end, the worktree run's in the main checkout's history.
    const runs = JSON.parse((await runCli(["runs", "--json"], { cwd: repo.path })).stdout);
    assert.deepEqual(
      runs.map((stored: { status: string; metrics: { probes: number } }) => [
        stored.status,
        stored.metrics.probes,
      ]),
      [["completed", 2], ["completed", 1], ["stalled", 5]],
    );
  });

  await t.step("runs stats in words", async () => {
    const stats = await runCli(["runs", "stats"], { cwd: repo.path });
    assert.equal(stats.code, 0, stats.stderr);
    const lines = stats.stdout.split("\n");
    assert.equal(lines[0], "Finished:   2 of 3 runs completed with the evidence passing (67 %)");
    assert.equal(lines[1], "Outcomes:   2 completed, 1 stalled");
    assert.match(lines[2], /^Spent: {6}\$\d+\.\d{4} and \d+\.\ds in all$/);
    assert.match(
      lines[3],
      /^Per done: {3}\d\.\d iterations and \$\d+\.\d{4} a completed run, on average$/,
    );
    assert.equal(
      lines.slice(4).join("\n"),
      [
        "",
        "How well finishline told done from not done (completion detection):",
        "  Runs:               3 runs, 6 iterations",
        "  False aborts:       0 of 1 abort (0 %), target < 5 %",
        "  Rescue success:     2 of 2 rescues created a commit (100 %)",
        "  Probes/iteration:   1.33 over all 6 iterations; 1.33 over the 6 probed (8 probes)",
        "  Probe timeouts:     3 of 6 iterations (50 %) had probes that ran out with no answer",
        "",
      ].join("\n"),
    );
  });

  await t.step(
    "a run without recorded metrics is counted from its stored iterations; --limit and --agent narrow the sum",
    async () => {
      // A run whose process was killed: iterations recorded, no end, no metrics.
      const store = SqliteStore.open(`${repo.path}/.agent/.finishline/state.db`);
      try {
        store.createRun({
          id: "killed-run",
          agent: "other",
          handler: "iterate",
          argv: [],
          cwd: repo.path,
          startedAt: "2020-01-01T00:00:00.000Z",
          baseline: null,
          branch: null,
          maxIterations: 3,
          cleanup: {},
        });
        store.recordIteration({
          runId: "killed-run",
          number: 1,
          sessionId: null,
          promptDigest: "digest",
          summary: { ...emptySummary(1), probes: [{ status: "unknown", message: "no answer" }] },
          verdict: "continue",
        });
      } finally {
        store.close();
      }
      const stats = async (...args: string[]) =>
        JSON.parse((await runCli(["runs", "stats", "--json", ...args], { cwd: repo.path })).stdout);
      const all = await stats();
      assert.deepEqual(
        [all.runs, all.iterations, all.probes, all.probeTimeouts, all.fromIterations],
        [4, 7, 9, 4, 1],
      );
      // The latest three are the finished runs; the killed one started first.
      const latest = await stats("--limit", "3");
      assert.deepEqual(
        Object.fromEntries(Object.keys(expected).map((key) => [key, latest[key]])),
        expected,
      );
      const other = await stats("--agent", "other");
      assert.deepEqual(
        [other.runs, other.iterations, other.aborts, other.falseAbortRate, other.fromIterations],
        [1, 1, 0, null, 1],
      );
    },
  );
});
