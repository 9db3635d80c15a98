import assert from "node:assert/strict";
import { openStore } from "./_helpers.ts";

Deno.test("store finish records", async (t) => {
  await t.step("a run without a finish record has no steps, summary or error", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    assert.deepEqual(fixture.store.getFinish("run-1"), {
      runId: "run-1",
      steps: [],
      summary: null,
      nextActions: [],
      usage: null,
      error: null,
    });
  });

  await t.step("finishStep appends each step once and keeps the summary", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.finishStep("run-1", "summary", { summary: { outcome: "completed", iterations: 2 } });
    store.finishStep("run-1", "summary");
    store.finishStep("run-1", "learnings");
    store.finishStep("run-1", "learnings");
    assert.deepEqual(store.getFinish("run-1"), {
      runId: "run-1",
      steps: ["summary", "learnings"],
      summary: { outcome: "completed", iterations: 2 },
      nextActions: [],
      usage: null,
      error: null,
    });
  });

  await t.step(
    "clearFinishSteps forgets those checkpoints only; the step redone replaces the summary",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      store.finishStep("run-1", "summary", { summary: { outcome: "completed", iterations: 1 } });
      store.finishStep("run-1", "learnings");
      store.finishStep("run-1", "next_actions", { nextActions: ["Resume this session later"] });
      store.clearFinishSteps("run-1", ["summary", "next_actions"]);
      assert.deepEqual(store.getFinish("run-1").steps, ["learnings"]);
      store.finishStep("run-1", "summary", { summary: { outcome: "stalled", iterations: 2 } });
      const record = store.getFinish("run-1");
      assert.deepEqual(record.steps, ["learnings", "summary"]);
      assert.deepEqual(record.summary, { outcome: "stalled", iterations: 2 });
    },
  );

  await t.step("finishError records the error and the next step clears it", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.finishStep("run-1", "summary", { summary: { outcome: "failed" } });
    store.finishError("run-1", "learnings: database is locked");
    let record = store.getFinish("run-1");
    assert.equal(record.error, "learnings: database is locked");
    assert.deepEqual(record.steps, ["summary"]);
    assert.deepEqual(record.summary, { outcome: "failed" });
    store.finishStep("run-1", "learnings");
    record = store.getFinish("run-1");
    assert.equal(record.error, null);
    assert.deepEqual(record.steps, ["summary", "learnings"]);
    assert.deepEqual(record.summary, { outcome: "failed" });
  });

  await t.step("finishError works before any step and null clears it", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.finishError("run-1", "summary: boom");
    assert.deepEqual(store.getFinish("run-1"), {
      runId: "run-1",
      steps: [],
      summary: null,
      nextActions: [],
      usage: null,
      error: "summary: boom",
    });
    store.finishError("run-1", null);
    assert.equal(store.getFinish("run-1").error, null);
  });

  await t.step("clearFinish forgets one run's record only", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.finishStep("run-1", "summary", { summary: { outcome: "completed" } });
    store.finishStep("run-2", "summary", { summary: { outcome: "failed" } });
    store.finishError("run-1", "skills: boom");
    store.clearFinish("run-1");
    assert.deepEqual(store.getFinish("run-1"), {
      runId: "run-1",
      steps: [],
      summary: null,
      nextActions: [],
      usage: null,
      error: null,
    });
    assert.deepEqual(store.getFinish("run-2").steps, ["summary"]);
    store.finishStep("run-1", "summary", { summary: { outcome: "interrupted" } });
    assert.deepEqual(store.getFinish("run-1").summary, { outcome: "interrupted" });
  });

  await t.step("finishStep keeps the next actions, and later steps leave them alone", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.finishStep("run-1", "summary", { summary: { outcome: "completed" } });
    store.finishStep("run-1", "next_actions", { nextActions: ["Pin TZ in CI", "Watch CI"] });
    store.finishStep("run-1", "persist");
    const record = store.getFinish("run-1");
    assert.deepEqual(record.nextActions, ["Pin TZ in CI", "Watch CI"]);
    assert.deepEqual(record.summary, { outcome: "completed" });
    assert.deepEqual(record.steps, ["summary", "next_actions", "persist"]);
  });

  await t.step("addFinishUsage adds up requests, cost and tokens over attempts", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    const usage = (costUsd: number, input: number) => ({
      model: "claude-haiku-4-5",
      requests: 1,
      costUsd,
      tokens: { input, output: 10, cacheRead: 5, cacheCreation: 0 },
    });
    store.addFinishUsage("run-1", usage(0.001, 900));
    store.finishStep("run-1", "summary", { summary: { outcome: "completed" } });
    // A later attempt (finish RUN_ID) adds to the same total.
    store.addFinishUsage("run-1", usage(0.0002, 100));
    assert.deepEqual(store.getFinish("run-1").usage, {
      model: "claude-haiku-4-5",
      requests: 2,
      costUsd: 0.0012,
      tokens: { input: 1000, output: 20, cacheRead: 10, cacheCreation: 0 },
    });
    assert.deepEqual(store.getFinish("run-1").steps, ["summary"]);
    // A resumed run finishes afresh: its finish record, cost included, is forgotten.
    store.clearFinish("run-1");
    assert.equal(store.getFinish("run-1").usage, null);
  });
});
