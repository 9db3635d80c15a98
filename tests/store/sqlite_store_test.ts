import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { SqliteStore } from "../../agents/store/mod.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { REDACTED, Redactor } from "../../agents/support/redact.ts";
import { countIterations, iteration, newRun, openStore, summary } from "./_helpers.ts";

Deno.test("store concurrency", async (t) => {
  await t.step("the database is in WAL mode, as another connection sees it", async () => {
    await using fixture = await openStore();
    const other = new DatabaseSync(fixture.path, { readOnly: true });
    try {
      assert.equal(other.prepare("PRAGMA journal_mode").get()?.journal_mode, "wal");
    } finally {
      other.close();
    }
  });

  await t.step("a read-only connection sees each iteration as soon as it is recorded", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    const reader = new DatabaseSync(fixture.path, { readOnly: true });
    try {
      assert.equal(countIterations(reader, "run-1"), 0);
      store.recordIteration(iteration("run-1", 1));
      assert.equal(countIterations(reader, "run-1"), 1);
      store.recordIteration(iteration("run-1", 2));
      assert.equal(countIterations(reader, "run-1"), 2);
    } finally {
      reader.close();
    }
  });

  await t.step("a second store on the same file reads what the first writes", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    const second = SqliteStore.open(fixture.path, { redactor: new Redactor({}) });
    try {
      store.createRun(newRun("run-1"));
      store.recordIteration(iteration("run-1", 1, summary(1, { costUsd: 0.2, turns: 3 })));
      assert.equal(second.getRun("run-1")?.iterations, 1);
      assert.equal(second.getRun("run-1")?.turns, 3);
      store.recordIteration(iteration("run-1", 2, summary(2, { costUsd: 0.3, turns: 1 })));
      assert.equal(second.iterations("run-1").length, 2);
      assert.equal(second.getRun("run-1")?.turns, 4);
      // And the other way round.
      second.setRunStatus("run-1", "completed", "done");
      assert.equal(store.getRun("run-1")?.status, "completed");
    } finally {
      second.close();
    }
  });

  await t.step(
    "a reader inside a read transaction does not block recordIteration and sees the row after COMMIT",
    async () => {
      await using fixture = await openStore({ runs: ["run-1"] });
      const { store } = fixture;
      store.recordIteration(iteration("run-1", 1));
      const reader = new DatabaseSync(fixture.path, { readOnly: true });
      try {
        reader.exec("BEGIN");
        assert.equal(countIterations(reader, "run-1"), 1);
        const started = performance.now();
        store.recordIteration(iteration("run-1", 2, summary(2, { costUsd: 0.4 })));
        // The store's busy timeout is 5 s; a blocked writer would wait it out and fail.
        assert.ok(performance.now() - started < 2_000, "recordIteration waited for the reader");
        assert.equal(store.iterations("run-1").length, 2);
        // The reader's snapshot is stable until it ends its transaction.
        assert.equal(countIterations(reader, "run-1"), 1);
        reader.exec("COMMIT");
        assert.equal(countIterations(reader, "run-1"), 2);
        assert.equal(
          reader.prepare("SELECT cost_usd FROM runs WHERE id = ?").get("run-1")?.cost_usd,
          0.4,
        );
      } finally {
        reader.close();
      }
    },
  );
});

Deno.test("store keeps secrets out of the database file", async (t) => {
  const apiKey = "sk-ant-api03-secretsecretsecret";
  const ghToken = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  const redactor = (): Redactor => new Redactor({ MY_API_KEY: apiKey });
  // How each secret looks once redacted.
  const KEY = redactor().redact(apiKey);
  const GH = redactor().redact(ghToken);

  async function assertFilesClean(dir: string): Promise<number> {
    let checked = 0;
    for await (const entry of Deno.readDir(dir)) {
      if (!entry.isFile) continue;
      const bytes = new TextDecoder("latin1").decode(await Deno.readFile(join(dir, entry.name)));
      checked += bytes.length;
      assert.ok(!bytes.includes("secretsecretsecret"), `the API key is in ${entry.name}`);
      assert.ok(!bytes.includes(ghToken.slice(4)), `the GitHub token is in ${entry.name}`);
    }
    return checked;
  }

  await t.step(
    "iteration summaries, argv, finish summaries and learnings are redacted",
    async () => {
      await using fixture = await openStore({ redactor: redactor() });
      const { store } = fixture;
      store.createRun(newRun("run-1", { argv: ["--task", `use ${apiKey}`] }));
      const leaky: IterationSummary = {
        ...summary(1),
        assistantResponses: [`I exported ANTHROPIC_API_KEY=${apiKey} and pushed with ${ghToken}`],
        completeTask: {
          status: "success",
          original_request_summary: "push the fix",
          summary: `pushed with token ${ghToken}`,
        },
      };
      store.recordIteration(iteration("run-1", 1, leaky));
      store.finishStep("run-1", "summary", {
        summary: { keySteps: [`1: pushed with ${ghToken}`] },
      });
      store.setLearnings("run-1", "agent", [{ text: `authenticate gh with ${ghToken}` }]);

      const stored = store.iterations("run-1")[0].summary;
      assert.equal(stored.assistantResponses[0].includes(REDACTED), true);
      assert.equal(stored.completeTask?.summary, `pushed with token ${GH}`);
      assert.deepEqual(store.getRun("run-1")?.argv, ["--task", `use ${KEY}`]);
      assert.deepEqual(store.getFinish("run-1").summary, {
        keySteps: [`1: pushed with ${GH}`],
      });
      assert.equal(
        store.searchLearnings("authenticate")[0]?.text,
        `authenticate gh with ${GH}`,
      );

      // Check the bytes on disk, both while the write-ahead log holds them and after close.
      assert.ok(await assertFilesClean(join(fixture.dir, ".agent", ".finishline")) > 0);
      store.close();
      assert.ok(await assertFilesClean(join(fixture.dir, ".agent", ".finishline")) > 0);
    },
  );

  await t.step(
    "run reasons, finish errors, next actions, cleanup facts and skills are redacted too",
    async () => {
      await using fixture = await openStore({ redactor: redactor() });
      const { store } = fixture;
      store.createRun(
        newRun("run-1", { cleanup: { remote: `https://x:${ghToken}@github.com/o/r` } }),
      );
      store.updateCleanup("run-1", { note: `key ${apiKey}` });
      store.setRunStatus("run-1", "failed", `gh failed: bad credentials ${ghToken}`);
      store.finishStep("run-1", "next_actions", { nextActions: [`rotate ${ghToken}`] });
      store.finishError("run-1", `cleanup: curl -H "x-api-key: ${apiKey}" failed`);
      store.setSkills("run-1", [{
        name: `deploy with ${ghToken}`,
        kind: "used",
        description: `pushed with ${apiKey}`,
        lifecycle: "implemented",
      }]);

      const run = store.getRun("run-1");
      assert.equal(run?.reason, `gh failed: bad credentials ${GH}`);
      assert.ok(String(run?.cleanup.remote).includes(REDACTED));
      assert.equal(run?.cleanup.note, `key ${KEY}`);
      assert.ok(store.getFinish("run-1").error?.includes(REDACTED));
      assert.equal(store.skills("run-1")[0].name, `deploy with ${GH}`);
      assert.equal(store.skills("run-1")[0].description, `pushed with ${KEY}`);
      assert.deepEqual(store.getFinish("run-1").nextActions, [`rotate ${GH}`]);

      store.close();
      assert.ok(await assertFilesClean(join(fixture.dir, ".agent", ".finishline")) > 0);
    },
  );
});
