import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import type { StoredRun } from "../../agents/store/mod.ts";
import { countIterations, iteration, newRun, openStore, summary } from "./_helpers.ts";

Deno.test("store runs and iterations", async (t) => {
  await t.step("createRun stores every field and getRun reads it back", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(
      newRun("3f2a9c1e-0000-4000-8000-000000000001", {
        branch: "finishline/fix-login",
        cleanup: { issue: 42, labels: { inProgress: "wip" } },
      }),
    );
    const run = store.getRun("3f2a9c1e-0000-4000-8000-000000000001");
    assert.deepEqual(
      run,
      {
        id: "3f2a9c1e-0000-4000-8000-000000000001",
        agent: "fixer",
        handler: "iterate",
        argv: ["--task", "fix the flaky login test"],
        cwd: "/repo",
        status: "running",
        reason: null,
        startedAt: "2025-01-01T10:00:00.000Z",
        endedAt: null,
        baseline: "0123456789abcdef0123456789abcdef01234567",
        branch: "finishline/fix-login",
        maxIterations: 5,
        costUsd: 0,
        tokensInput: 0,
        tokensOutput: 0,
        turns: 0,
        iterations: 0,
        cleanup: { issue: 42, labels: { inProgress: "wip" } },
        pid: null,
        metrics: null,
      } satisfies StoredRun,
    );
  });

  await t.step(
    "getRun finds a run by a unique id prefix and gives nothing for an ambiguous one",
    async () => {
      await using fixture = await openStore({ runs: ["abc123-first", "abc456-second", "abc"] });
      const { store } = fixture;
      assert.equal(store.getRun("abc123")?.id, "abc123-first");
      assert.equal(store.getRun("abc4")?.id, "abc456-second");
      // An exact id wins even though it is also a prefix of the others.
      assert.equal(store.getRun("abc")?.id, "abc");
      assert.equal(store.getRun("ab"), undefined);
      assert.equal(store.getRun("zzz"), undefined);
    },
  );

  await t.step("LIKE wildcards in a prefix match themselves only", async () => {
    await using fixture = await openStore({ runs: ["run_1", "runX2"] });
    const { store } = fixture;
    assert.equal(store.getRun("run_")?.id, "run_1");
    assert.equal(store.getRun("r%"), undefined);
  });

  await t.step("recordIteration adds cost, tokens, turns and a count to the run", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.recordIteration(
      iteration("run-1", 1, summary(1, { costUsd: 0.125, input: 1000, output: 200, turns: 4 })),
    );
    store.recordIteration(
      iteration("run-1", 2, summary(2, { costUsd: 0.25, input: 500, output: 100, turns: 3 })),
    );
    const run = store.getRun("run-1");
    assert.equal(run?.costUsd, 0.375);
    assert.equal(run?.tokensInput, 1500);
    assert.equal(run?.tokensOutput, 300);
    assert.equal(run?.turns, 7);
    assert.equal(run?.iterations, 2);
    assert.equal(store.getRun("run-2")?.iterations, 0, "another run's totals moved");
    const rows = store.iterations("run-1");
    assert.deepEqual(rows.map((row) => row.number), [1, 2]);
    assert.equal(rows[1].sessionId, "session-2");
    assert.equal(rows[1].promptDigest, "digest-2");
    assert.equal(rows[1].verdict, "continue");
    assert.equal(rows[1].summary.costUsd, 0.25);
    assert.ok(!Number.isNaN(Date.parse(rows[1].recordedAt)));
    assert.deepEqual(store.iterations("run-2"), []);
  });

  await t.step(
    "iterations come back in number order whatever order they were recorded in",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      for (const number of [3, 1, 2]) store.recordIteration(iteration("run-1", number));
      assert.deepEqual(store.iterations("run-1").map((row) => row.number), [1, 2, 3]);
    },
  );

  await t.step(
    "a duplicate iteration number is rejected and the run's totals are left as they were",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      store.recordIteration(
        iteration("run-1", 1, summary(1, { costUsd: 0.5, input: 10, output: 5, turns: 2 })),
      );
      const before = store.getRun("run-1");
      assert.throws(
        () =>
          store.recordIteration(
            iteration("run-1", 1, summary(1, { costUsd: 9, input: 900, output: 90, turns: 9 })),
          ),
        /UNIQUE constraint failed: iterations\.run_id, iterations\.number/,
      );
      assert.deepEqual(store.getRun("run-1"), before);
      assert.equal(store.iterations("run-1").length, 1);
      assert.equal(store.iterations("run-1")[0].summary.costUsd, 0.5);
      // The transaction was rolled back, not left open: the next write commits.
      store.recordIteration(iteration("run-1", 2, summary(2, { costUsd: 0.25 })));
      assert.equal(store.getRun("run-1")?.costUsd, 0.75);
      const other = new DatabaseSync(fixture.path, { readOnly: true });
      try {
        assert.equal(countIterations(other, "run-1"), 2);
      } finally {
        other.close();
      }
    },
  );

  await t.step("an iteration of an unknown run is rejected", async () => {
    await using fixture = await openStore();
    assert.throws(
      () => fixture.store.recordIteration(iteration("ghost", 1)),
      /FOREIGN KEY constraint failed/,
    );
  });

  await t.step(
    "setRunStatus sets ended_at for a final status and clears it for running",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      const before = Date.now();
      store.setRunStatus("run-1", "completed", "All checks passed");
      let run = store.getRun("run-1");
      assert.equal(run?.status, "completed");
      assert.equal(run?.reason, "All checks passed");
      assert.ok(run?.endedAt);
      assert.ok(Date.parse(run.endedAt) >= before - 1000);
      store.setRunStatus("run-1", "running", null);
      run = store.getRun("run-1");
      assert.equal(run?.status, "running");
      assert.equal(run?.reason, null);
      assert.equal(run?.endedAt, null);
      store.setRunStatus("run-1", "interrupted", "SIGINT");
      assert.ok(store.getRun("run-1")?.endedAt);
    },
  );

  await t.step(
    "latestUnfinished gives the newest running or interrupted run, of an agent when asked",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      assert.equal(store.latestUnfinished(), undefined);
      store.createRun(newRun("old-interrupted", { startedAt: "2025-01-01T00:00:00.000Z" }));
      store.setRunStatus("old-interrupted", "interrupted", "SIGINT");
      store.createRun(
        newRun("reviewer-running", { agent: "reviewer", startedAt: "2025-01-02T00:00:00.000Z" }),
      );
      store.createRun(newRun("newest-completed", { startedAt: "2025-01-03T00:00:00.000Z" }));
      store.setRunStatus("newest-completed", "completed", "done");
      store.createRun(newRun("newest-failed", { startedAt: "2025-01-04T00:00:00.000Z" }));
      store.setRunStatus("newest-failed", "failed", "max iterations");
      assert.equal(store.latestUnfinished()?.id, "reviewer-running");
      assert.equal(store.latestUnfinished("fixer")?.id, "old-interrupted");
      assert.equal(store.latestUnfinished("reviewer")?.id, "reviewer-running");
      assert.equal(store.latestUnfinished("nobody"), undefined);
      store.setRunStatus("old-interrupted", "completed", "finished later");
      assert.equal(store.latestUnfinished("fixer"), undefined);
    },
  );

  await t.step(
    "listRuns gives the newest first, with a limit and an agent filter",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("b", { startedAt: "2025-01-02T00:00:00.000Z" }));
      store.createRun(newRun("a", { startedAt: "2025-01-03T00:00:00.000Z", agent: "reviewer" }));
      store.createRun(newRun("c", { startedAt: "2025-01-01T00:00:00.000Z" }));
      // Same start time as "b": the one recorded later comes first.
      store.createRun(newRun("d", { startedAt: "2025-01-02T00:00:00.000Z" }));
      assert.deepEqual(store.listRuns().map((run) => run.id), ["a", "d", "b", "c"]);
      assert.deepEqual(store.listRuns({ limit: 2 }).map((run) => run.id), ["a", "d"]);
      assert.deepEqual(store.listRuns({ agent: "fixer" }).map((run) => run.id), ["d", "b", "c"]);
      assert.deepEqual(store.listRuns({ agent: "fixer", limit: 1 }).map((run) => run.id), ["d"]);
      assert.deepEqual(store.listRuns({ agent: "nobody" }), []);
    },
  );

  await t.step("listRuns shows twenty runs unless told otherwise", async () => {
    await using fixture = await openStore();
    for (let index = 0; index < 25; index++) {
      fixture.store.createRun(newRun(`run-${String(index).padStart(2, "0")}`));
    }
    const runs = fixture.store.listRuns();
    assert.equal(runs.length, 20);
    assert.equal(runs[0].id, "run-24");
  });

  await t.step(
    "setRunMetrics records a run's metrics, replacing earlier ones; other runs keep none",
    async () => {
      await using fixture = await openStore({ runs: ["run-1", "run-2"] });
      const { store } = fixture;
      const metrics = {
        iterations: 3,
        probedIterations: 2,
        probes: 4,
        probeTimeouts: 1,
        rescues: 1,
        rescuesCommitted: 1,
        aborted: true,
        falseAbort: false,
      };
      store.setRunMetrics("run-1", { ...metrics, iterations: 2 });
      // A resumed run ends again: its metrics over all its iterations replace the first ones.
      store.setRunMetrics("run-1", metrics);
      assert.deepEqual(store.getRun("run-1")?.metrics, metrics);
      assert.equal(store.getRun("run-2")?.metrics, null);
      assert.deepEqual(store.listRuns().map((run) => [run.id, run.metrics]), [["run-2", null], [
        "run-1",
        metrics,
      ]]);
    },
  );

  await t.step("updateCleanup merges new facts over the recorded ones", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1", { cleanup: { issue: 7, repo: "o/r", labels: { a: "x" } } }));
    store.updateCleanup("run-1", { worktreePath: "/wt", repo: "o/other" });
    assert.deepEqual(store.getRun("run-1")?.cleanup, {
      issue: 7,
      repo: "o/other",
      labels: { a: "x" },
      worktreePath: "/wt",
    });
  });
});

Deno.test("a run's summed cost reads back without float noise", async () => {
  await using fixture = await openStore({ runs: ["run-1"] });
  const { store } = fixture;
  for (const number of [1, 2, 3]) {
    store.recordIteration(iteration("run-1", number, summary(number, { costUsd: 0.0008 })));
  }
  // SQLite sums 0.0008 three times to 0.0024000000000000002.
  assert.equal(store.getRun("run-1")?.costUsd, 0.0024);
  assert.match(JSON.stringify(store.listRuns()), /"costUsd":0\.0024,/);
});
