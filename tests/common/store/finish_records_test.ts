import assert from "node:assert/strict";
import { openStore } from "./_helpers.ts";

Deno.test("store finish records", async (t) => {
  await t.step("a run without a finish record has no steps, summary or error", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    assert.deepEqual(fixture.store.getFinish("run-1"), {
      runId: "run-1",
      steps: [],
      summary: null,
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
      error: null,
    });
  });

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
      error: null,
    });
    assert.deepEqual(store.getFinish("run-2").steps, ["summary"]);
    store.finishStep("run-1", "summary", { summary: { outcome: "interrupted" } });
    assert.deepEqual(store.getFinish("run-1").summary, { outcome: "interrupted" });
  });
});
