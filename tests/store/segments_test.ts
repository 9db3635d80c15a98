import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { Redactor } from "../../agents/support/redact.ts";
import { KILLED_REASON } from "../../agents/store/segments.ts";
import { iteration, newRun, openStore, summary } from "./_helpers.ts";

/** Set when a run's iterations were recorded, as another connection. */
function recordedAt(path: string, runId: string, number: number, at: string): void {
  const db = new DatabaseSync(path);
  try {
    db.prepare(`UPDATE iterations SET recorded_at = ? WHERE run_id = ? AND number = ?`)
      .run(at, runId, number);
  } finally {
    db.close();
  }
}

Deno.test("run segments", async (t) => {
  await t.step("a run's start is segment 1; its end records status, time and cost", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    assert.deepEqual(store.segments("run-1"), []);
    const number = store.startSegment("run-1", {
      startedAt: "2025-01-01T10:00:00.000Z",
      logFile: "/logs/a.jsonl",
      reportFile: "/logs/a.md",
    });
    assert.equal(number, 1);
    assert.deepEqual(store.segments("run-1"), [{
      runId: "run-1",
      number: 1,
      startedAt: "2025-01-01T10:00:00.000Z",
      endedAt: null,
      status: "running",
      reason: null,
      afterIteration: 0,
      durationMs: null,
      costUsd: null,
      logFile: "/logs/a.jsonl",
      reportFile: "/logs/a.md",
    }]);
    store.endSegment("run-1", {
      number: 1,
      status: "interrupted",
      reason: "Interrupted during iteration 2",
      durationMs: 4200.4,
      costUsd: 0.0064,
    });
    const [ended] = store.segments("run-1");
    assert.equal(ended.status, "interrupted");
    assert.equal(ended.reason, "Interrupted during iteration 2");
    assert.equal(ended.durationMs, 4200);
    assert.equal(ended.costUsd, 0.0064);
    assert.match(ended.endedAt ?? "", /^\d{4}-\d{2}-\d{2}T/);
  });

  await t.step("a resume is the next segment, after the iterations recorded so far", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.startSegment("run-1", { startedAt: "2025-01-01T10:00:00.000Z" });
    store.recordIteration(iteration("run-1", 1, summary(1, { costUsd: 0.5 })));
    store.endSegment("run-1", {
      number: 1,
      status: "interrupted",
      reason: "stop",
      durationMs: 1000,
      costUsd: 0.7,
    });
    const second = store.startSegment("run-1", {
      startedAt: "2025-01-02T10:00:00.000Z",
      resumed: true,
    });
    assert.equal(second, 2);
    const segments = store.segments("run-1");
    assert.deepEqual(segments.map((segment) => [segment.number, segment.afterIteration]), [
      [1, 0],
      [2, 1],
    ]);
    assert.equal(segments[0].costUsd, 0.7, "an ended segment is left as it was");
  });

  await t.step(
    "a resume closes a segment whose process died as killed, ended when last heard of",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      store.startSegment("run-1", { startedAt: "2025-01-01T10:00:00.000Z" });
      store.recordIteration(iteration("run-1", 1, summary(1, { costUsd: 0.25 })));
      store.recordIteration(iteration("run-1", 2, summary(2, { costUsd: 0.5 })));
      recordedAt(fixture.path, "run-1", 2, "2025-01-01T10:00:30.000Z");
      recordedAt(fixture.path, "run-1", 1, "2025-01-01T10:00:10.000Z");
      store.startSegment("run-1", {
        startedAt: "2025-01-01T11:00:00.000Z",
        resumed: true,
        lastHeardAt: "2025-01-01T10:00:45.000Z",
      });
      const [killed, resumed] = store.segments("run-1");
      assert.equal(killed.status, "killed");
      assert.equal(killed.reason, KILLED_REASON);
      assert.equal(killed.endedAt, "2025-01-01T10:00:45.000Z");
      assert.equal(killed.durationMs, 45_000);
      assert.equal(killed.costUsd, 0.75);
      assert.equal(resumed.afterIteration, 2);

      // Without a log, the last recorded iteration tells when it was last heard of.
      await using other = await openStore({ runs: ["run-2"] });
      other.store.startSegment("run-2", { startedAt: "2025-01-01T10:00:00.000Z" });
      other.store.recordIteration(iteration("run-2", 1));
      recordedAt(other.path, "run-2", 1, "2025-01-01T10:00:10.000Z");
      other.store.startSegment("run-2", { startedAt: "2025-01-01T12:00:00.000Z", resumed: true });
      assert.equal(other.store.segments("run-2")[0].durationMs, 10_000);
    },
  );

  await t.step(
    "a run recorded before segments were gets its earlier part as segment 1 when resumed",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1", { startedAt: "2025-01-01T10:00:00.000Z" }));
      store.recordIteration(iteration("run-1", 1, summary(1, { costUsd: 0.25 })));
      store.setRunStatus("run-1", "interrupted", "Interrupted during iteration 2");
      const db = new DatabaseSync(fixture.path);
      db.prepare(`UPDATE runs SET ended_at = ?, cost_usd = 0.4 WHERE id = 'run-1'`)
        .run("2025-01-01T10:01:00.000Z");
      db.close();
      const number = store.startSegment("run-1", {
        startedAt: "2025-01-03T10:00:00.000Z",
        resumed: true,
      });
      assert.equal(number, 2);
      const [earlier, resumed] = store.segments("run-1");
      assert.deepEqual(
        { ...earlier },
        {
          runId: "run-1",
          number: 1,
          startedAt: "2025-01-01T10:00:00.000Z",
          endedAt: "2025-01-01T10:01:00.000Z",
          status: "interrupted",
          reason: "Interrupted during iteration 2",
          afterIteration: 0,
          durationMs: 60_000,
          costUsd: 0.4,
          logFile: null,
          reportFile: null,
        },
      );
      assert.equal(resumed.afterIteration, 1);
    },
  );

  await t.step("a segment's reason is redacted", async () => {
    const secret = "ghp_0123456789abcdefghijklmnopqrstuvwxyzAB";
    await using fixture = await openStore({
      runs: ["run-1"],
      redactor: new Redactor({ GH_TOKEN: secret }),
    });
    const { store } = fixture;
    store.startSegment("run-1", { startedAt: "2025-01-01T10:00:00.000Z" });
    store.endSegment("run-1", {
      number: 1,
      status: "failed",
      reason: `push with ${secret} failed`,
      durationMs: 1,
      costUsd: 0,
    });
    assert.ok(!store.segments("run-1")[0].reason?.includes(secret));
  });
});
