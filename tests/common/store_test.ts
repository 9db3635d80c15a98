import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import {
  ftsQuery,
  type Learning,
  MIGRATIONS,
  SqliteStore,
  type StoredRun,
} from "../../agents/common/store.ts";
import type { IterationSummary } from "../../agents/common/completion/types.ts";
import { REDACTED, Redactor } from "../../agents/common/redact.ts";
import { emptySummary } from "../../agents/common/summary.ts";
import { tempDir } from "../_helpers.ts";

// Every test works on a real database file in a temp folder; the redactor
// gets an empty environment so the machine's own secrets cannot change what
// is stored.

type NewRun = Parameters<SqliteStore["createRun"]>[0];

function newRun(id: string, fields: Partial<NewRun> = {}): NewRun {
  return {
    id,
    agent: "fixer",
    handler: "iterate",
    argv: ["--task", "fix the flaky login test"],
    cwd: "/repo",
    startedAt: "2025-01-01T10:00:00.000Z",
    baseline: "0123456789abcdef0123456789abcdef01234567",
    branch: null,
    maxIterations: 5,
    cleanup: {},
    ...fields,
  };
}

function summary(
  iteration: number,
  usage: { costUsd?: number; input?: number; output?: number; turns?: number } = {},
): IterationSummary {
  const base = emptySummary(iteration);
  return {
    ...base,
    assistantResponses: [`iteration ${iteration} done`],
    costUsd: usage.costUsd ?? 0,
    tokens: { ...base.tokens, input: usage.input ?? 0, output: usage.output ?? 0 },
    turns: usage.turns ?? 0,
  };
}

function iteration(runId: string, number: number, summaryOf = summary(number)) {
  return {
    runId,
    number,
    sessionId: `session-${number}`,
    promptDigest: `digest-${number}`,
    summary: summaryOf,
    verdict: "continue",
  };
}

interface StoreFixture extends AsyncDisposable {
  dir: string;
  path: string;
  store: SqliteStore;
}

async function openStore(
  options: { redactor?: Redactor; file?: string } = {},
): Promise<StoreFixture> {
  const dir = await tempDir("finishline-store-");
  // A nested folder: open creates it.
  const path = join(dir.path, ".agent", ".finishline", options.file ?? "state.db");
  let store: SqliteStore;
  try {
    store = SqliteStore.open(path, { redactor: options.redactor ?? new Redactor({}) });
  } catch (error) {
    await dir[Symbol.asyncDispose]();
    throw error;
  }
  return {
    dir: dir.path,
    path,
    store,
    [Symbol.asyncDispose]: async () => {
      try {
        store.close();
      } catch {
        // Already closed by the test.
      }
      await dir[Symbol.asyncDispose]();
    },
  };
}

function userVersion(db: DatabaseSync): number {
  return Number((db.prepare("PRAGMA user_version").get() as { user_version: number }).user_version);
}

function countIterations(db: DatabaseSync, runId: string): number {
  return Number(
    (db.prepare("SELECT count(*) AS n FROM iterations WHERE run_id = ?").get(runId) as {
      n: number;
    }).n,
  );
}

Deno.test("store migrations", async (t) => {
  await t.step("opening an empty file creates every migration's schema", async () => {
    await using fixture = await openStore();
    assert.equal(fixture.store.schemaVersion, MIGRATIONS.length);
    assert.equal(fixture.store.path, fixture.path);
    const db = new DatabaseSync(fixture.path, { readOnly: true });
    try {
      assert.equal(userVersion(db), MIGRATIONS.length);
      const tables = db.prepare(
        "SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY name",
      ).all().map((row) => String(row.name));
      for (const name of ["runs", "iterations", "finish", "learnings", "learnings_fts", "skills"]) {
        assert.ok(tables.includes(name), `table "${name}" missing from ${tables.join(", ")}`);
      }
    } finally {
      db.close();
    }
  });

  await t.step(
    "an older database migrates to the latest version and keeps its runs and iterations",
    async () => {
      await using dir = await tempDir("finishline-store-");
      const path = join(dir.path, "state.db");
      const old = new DatabaseSync(path);
      try {
        old.exec(MIGRATIONS[0]);
        old.exec("PRAGMA user_version = 1");
        old.prepare(
          `INSERT INTO runs (id, agent, handler, argv, cwd, status, reason, started_at, ended_at, baseline,
             branch, max_iterations, cost_usd, tokens_input, tokens_output, turns, iterations)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          "old-run",
          "fixer",
          "iterate",
          JSON.stringify(["--task", "old task"]),
          "/old",
          "completed",
          "done",
          "2024-06-01T00:00:00.000Z",
          "2024-06-01T01:00:00.000Z",
          null,
          "finishline/old",
          3,
          0.25,
          100,
          40,
          2,
          1,
        );
        old.prepare(
          `INSERT INTO iterations (run_id, number, session_id, prompt_digest, summary, cost_usd, tokens_input,
             tokens_output, duration_ms, commits, files_changed, verdict, recorded_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          "old-run",
          1,
          "session-old",
          "digest-old",
          JSON.stringify(summary(1, { costUsd: 0.25, input: 100, output: 40, turns: 2 })),
          0.25,
          100,
          40,
          1200,
          1,
          2,
          "complete",
          "2024-06-01T00:30:00.000Z",
        );
      } finally {
        old.close();
      }

      const store = SqliteStore.open(path, { redactor: new Redactor({}) });
      try {
        assert.equal(store.schemaVersion, MIGRATIONS.length);
        const run = store.getRun("old-run");
        assert.ok(run);
        assert.deepEqual(run.argv, ["--task", "old task"]);
        assert.equal(run.status, "completed");
        assert.equal(run.branch, "finishline/old");
        assert.equal(run.costUsd, 0.25);
        assert.equal(run.iterations, 1);
        assert.deepEqual(run.cleanup, {});
        const iterations = store.iterations("old-run");
        assert.equal(iterations.length, 1);
        assert.equal(iterations[0].sessionId, "session-old");
        assert.equal(iterations[0].verdict, "complete");
        assert.deepEqual(iterations[0].summary.assistantResponses, ["iteration 1 done"]);
        // The tables of the newer migrations work on the migrated file.
        store.recordIteration(iteration("old-run", 2, summary(2, { costUsd: 0.5 })));
        assert.equal(store.getRun("old-run")?.costUsd, 0.75);
        store.setLearnings("old-run", "agent", [{ text: "migrated databases keep their history" }]);
        assert.equal(store.searchLearnings("migrated history")[0]?.runId, "old-run");
        store.updateCleanup("old-run", { worktreePath: "/wt" });
        assert.deepEqual(store.getRun("old-run")?.cleanup, { worktreePath: "/wt" });
      } finally {
        store.close();
      }
    },
  );

  await t.step(
    "a database with a newer schema version is refused with an upgrade hint",
    async () => {
      await using dir = await tempDir("finishline-store-");
      const path = join(dir.path, "state.db");
      const newer = new DatabaseSync(path);
      newer.exec(`PRAGMA user_version = ${MIGRATIONS.length + 1}`);
      newer.close();
      assert.throws(
        () => SqliteStore.open(path, { redactor: new Redactor({}) }),
        (error: unknown) => {
          assert.ok(error instanceof Error);
          assert.match(error.message, new RegExp(`schema version ${MIGRATIONS.length + 1}`));
          assert.match(error.message, new RegExp(`\\(${MIGRATIONS.length}\\)`));
          assert.match(error.message, /upgrade finishline/);
          return true;
        },
      );
      const check = new DatabaseSync(path, { readOnly: true });
      try {
        // Nothing was migrated into it.
        assert.equal(userVersion(check), MIGRATIONS.length + 1);
        assert.equal(check.prepare("SELECT count(*) AS n FROM sqlite_master").get()?.n, 0);
      } finally {
        check.close();
      }
    },
  );

  await t.step("reopening a current database changes nothing and keeps its data", async () => {
    await using fixture = await openStore();
    fixture.store.createRun(newRun("run-1"));
    fixture.store.recordIteration(iteration("run-1", 1, summary(1, { costUsd: 0.1 })));
    fixture.store.close();
    const again = SqliteStore.open(fixture.path, { redactor: new Redactor({}) });
    try {
      assert.equal(again.schemaVersion, MIGRATIONS.length);
      assert.equal(again.getRun("run-1")?.costUsd, 0.1);
      assert.equal(again.iterations("run-1").length, 1);
    } finally {
      again.close();
    }
    const third = SqliteStore.open(fixture.path, { redactor: new Redactor({}) });
    third.close();
  });
});

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
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
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
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1"));
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
      } satisfies StoredRun,
    );
  });

  await t.step(
    "getRun finds a run by a unique id prefix and gives nothing for an ambiguous one",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("abc123-first"));
      store.createRun(newRun("abc456-second"));
      store.createRun(newRun("abc"));
      assert.equal(store.getRun("abc123")?.id, "abc123-first");
      assert.equal(store.getRun("abc4")?.id, "abc456-second");
      // An exact id wins even though it is also a prefix of the others.
      assert.equal(store.getRun("abc")?.id, "abc");
      assert.equal(store.getRun("ab"), undefined);
      assert.equal(store.getRun("zzz"), undefined);
    },
  );

  await t.step("LIKE wildcards in a prefix match themselves only", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run_1"));
    store.createRun(newRun("runX2"));
    assert.equal(store.getRun("run_")?.id, "run_1");
    assert.equal(store.getRun("r%"), undefined);
  });

  await t.step("recordIteration adds cost, tokens, turns and a count to the run", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.createRun(newRun("run-2"));
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
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1"));
      for (const number of [3, 1, 2]) store.recordIteration(iteration("run-1", number));
      assert.deepEqual(store.iterations("run-1").map((row) => row.number), [1, 2, 3]);
    },
  );

  await t.step(
    "a duplicate iteration number is rejected and the run's totals are left as they were",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1"));
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
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1"));
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

Deno.test("store keeps secrets out of the database file", async (t) => {
  const apiKey = "sk-ant-api03-secretsecretsecret";
  const ghToken = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8";
  const redactor = (): Redactor => new Redactor({ MY_API_KEY: apiKey });

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
      assert.equal(stored.completeTask?.summary, `pushed with token ${REDACTED}`);
      assert.deepEqual(store.getRun("run-1")?.argv, ["--task", `use ${REDACTED}`]);
      assert.deepEqual(store.getFinish("run-1").summary, {
        keySteps: [`1: pushed with ${REDACTED}`],
      });
      assert.equal(
        store.searchLearnings("authenticate")[0]?.text,
        `authenticate gh with ${REDACTED}`,
      );

      // Check the bytes on disk, both while the write-ahead log holds them and after close.
      assert.ok(await assertFilesClean(join(fixture.dir, ".agent", ".finishline")) > 0);
      store.close();
      assert.ok(await assertFilesClean(join(fixture.dir, ".agent", ".finishline")) > 0);
    },
  );

  await t.step(
    "run reasons, finish errors, cleanup facts and skill names are redacted too",
    async () => {
      await using fixture = await openStore({ redactor: redactor() });
      const { store } = fixture;
      store.createRun(
        newRun("run-1", { cleanup: { remote: `https://x:${ghToken}@github.com/o/r` } }),
      );
      store.updateCleanup("run-1", { note: `key ${apiKey}` });
      store.setRunStatus("run-1", "failed", `gh failed: bad credentials ${ghToken}`);
      store.finishError("run-1", `cleanup: curl -H "x-api-key: ${apiKey}" failed`);
      store.setSkills("run-1", [{ name: `deploy with ${ghToken}`, kind: "used", status: "used" }]);

      const run = store.getRun("run-1");
      assert.equal(run?.reason, `gh failed: bad credentials ${REDACTED}`);
      assert.ok(String(run?.cleanup.remote).includes(REDACTED));
      assert.equal(run?.cleanup.note, `key ${REDACTED}`);
      assert.ok(store.getFinish("run-1").error?.includes(REDACTED));
      assert.equal(store.skills("run-1")[0].name, `deploy with ${REDACTED}`);

      store.close();
      assert.ok(await assertFilesClean(join(fixture.dir, ".agent", ".finishline")) > 0);
    },
  );
});

Deno.test("store finish records", async (t) => {
  await t.step("a run without a finish record has no steps, summary or error", async () => {
    await using fixture = await openStore();
    fixture.store.createRun(newRun("run-1"));
    assert.deepEqual(fixture.store.getFinish("run-1"), {
      runId: "run-1",
      steps: [],
      summary: null,
      error: null,
    });
  });

  await t.step("finishStep appends each step once and keeps the summary", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
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
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
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
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
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
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.createRun(newRun("run-2"));
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

Deno.test("store learnings", async (t) => {
  function storedLearnings(path: string, runId: string): Array<{ source: string; text: string }> {
    const db = new DatabaseSync(path, { readOnly: true });
    try {
      return db.prepare("SELECT source, text FROM learnings WHERE run_id = ? ORDER BY id").all(
        runId,
      )
        .map((row) => ({ source: String(row.source), text: String(row.text) }));
    } finally {
      db.close();
    }
  }

  await t.step("setLearnings replaces one run's learnings of one source only", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.createRun(newRun("run-2"));
    store.setLearnings("run-1", "agent", [{ text: "alpha lesson" }, { text: "beta lesson" }]);
    store.setLearnings("run-1", "extracted", [{ text: "gamma lesson" }]);
    store.setLearnings("run-2", "agent", [{ text: "delta lesson" }]);
    store.setLearnings("run-1", "agent", [{ text: "epsilon lesson" }]);
    assert.deepEqual(storedLearnings(fixture.path, "run-1"), [
      { source: "extracted", text: "gamma lesson" },
      { source: "agent", text: "epsilon lesson" },
    ]);
    assert.deepEqual(storedLearnings(fixture.path, "run-2"), [
      { source: "agent", text: "delta lesson" },
    ]);
    // The full-text index follows the deletes.
    assert.deepEqual(store.searchLearnings("alpha"), []);
    assert.deepEqual(store.searchLearnings("beta"), []);
    assert.equal(store.searchLearnings("epsilon")[0]?.text, "epsilon lesson");
    store.setLearnings("run-1", "extracted", []);
    assert.deepEqual(store.searchLearnings("gamma"), []);
  });

  await t.step(
    "a search finds text, technique and tags and reports where a learning came from",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1", { agent: "fixer" }));
      const learning: Learning = {
        text: "Pin TZ=UTC before running the suite",
        technique: "environment pinning",
        applicability: "any test that formats dates",
        tags: ["timezone", "tests"],
      };
      store.setLearnings("run-1", "extracted", [learning]);
      for (const query of ["suite", "pinning", "timezone", "dates"]) {
        const found = store.searchLearnings(query);
        assert.equal(found.length, 1, `no hit for "${query}"`);
        assert.equal(found[0].text, learning.text);
        assert.equal(found[0].technique, "environment pinning");
        assert.equal(found[0].applicability, "any test that formats dates");
        assert.deepEqual(found[0].tags, ["timezone", "tests"]);
        assert.equal(found[0].runId, "run-1");
        assert.equal(found[0].agent, "fixer");
        assert.equal(found[0].source, "extracted");
        assert.equal(typeof found[0].id, "number");
      }
      store.setLearnings("run-1", "agent", [{ text: "bare lesson without extras" }]);
      const bare = store.searchLearnings("bare")[0];
      assert.equal(bare.technique, undefined);
      assert.equal(bare.applicability, undefined);
      assert.deepEqual(bare.tags, []);
    },
  );

  await t.step("a better match ranks first", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.setLearnings("run-1", "agent", [
      { text: "The login page needs a retry around the session cookie" },
      { text: "Deno fmt must run before committing" },
      { text: "The flaky login test passes once the timezone is pinned in the login test setup" },
    ]);
    const found = store.searchLearnings("flaky login test timezone");
    assert.equal(found.length, 2);
    assert.match(found[0].text, /flaky login test/);
    assert.match(found[1].text, /login page/);
    assert.ok(found[0].rank < found[1].rank, "bm25 ranks lower for better matches");
  });

  await t.step("a search returns at most the limit", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.setLearnings(
      "run-1",
      "agent",
      Array.from({ length: 15 }, (_, index) => ({ text: `widget lesson number ${index}` })),
    );
    assert.equal(store.searchLearnings("widget").length, 10);
    assert.equal(store.searchLearnings("widget", { limit: 3 }).length, 3);
  });

  await t.step("punctuation-heavy free text searches by its words without throwing", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.setLearnings("run-1", "agent", [
      { text: "The login test is flaky until the timezone is pinned" },
    ]);
    const issues = [
      'Login test is "flaky" on CI',
      "Crash (segfault) when the login form is submitted",
      'Fix: "login" broken AND NOT working (see #12): steps: 1) open 2) click',
      "Error: login failed: TypeError: Cannot read properties of undefined (reading 'id')",
      'Unbalanced "quote and (paren in the login test',
      "login* ^test NEAR(flaky) col:umn",
      "flaky - login + test {braces} [brackets] ~tilde",
    ];
    for (const issue of issues) {
      let found: ReturnType<SqliteStore["searchLearnings"]> = [];
      try {
        found = store.searchLearnings(issue);
      } catch (error) {
        assert.fail(`searching ${JSON.stringify(issue)} threw: ${error}`);
      }
      assert.equal(found.length, 1, `no learning found for ${JSON.stringify(issue)}`);
    }
  });

  await t.step("a deliberate FTS5 query is used as written", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.setLearnings("run-1", "agent", [
      { text: "flaky login test" },
      { text: "flaky upload test" },
    ]);
    assert.deepEqual(store.searchLearnings("flak*").map((found) => found.text).sort(), [
      "flaky login test",
      "flaky upload test",
    ]);
    assert.deepEqual(store.searchLearnings("flaky NOT upload").map((found) => found.text), [
      "flaky login test",
    ]);
    assert.deepEqual(store.searchLearnings('"login test"').map((found) => found.text), [
      "flaky login test",
    ]);
  });

  await t.step("stop words, short words and empty text find nothing", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.setLearnings("run-1", "agent", [{ text: "the and for with that this is a to of" }]);
    assert.deepEqual(store.searchLearnings("the and for with"), []);
    assert.deepEqual(store.searchLearnings("a to of is"), []);
    assert.deepEqual(store.searchLearnings(""), []);
    assert.deepEqual(store.searchLearnings("  ?!  "), []);
  });

  await t.step("searching a closed store fails with the database error", async () => {
    await using fixture = await openStore();
    fixture.store.close();
    assert.throws(
      () => fixture.store.searchLearnings('"login" (flaky)'),
      (error: unknown) => error instanceof Error && !(error instanceof RangeError),
    );
  });
});

Deno.test("ftsQuery", async (t) => {
  await t.step("quotes the distinct lowercased words and joins them with OR", () => {
    assert.equal(ftsQuery("Fix the flaky login test!"), '"fix" OR "flaky" OR "login" OR "test"');
    assert.equal(ftsQuery("Login LOGIN login"), '"login"');
  });

  await t.step("drops stop words and words shorter than three letters", () => {
    assert.equal(ftsQuery("it is a bug in the parser"), '"bug" OR "parser"');
    assert.equal(ftsQuery("the and for with that this"), "");
    assert.equal(ftsQuery(""), "");
  });

  await t.step("keeps FTS5 operators and punctuation out of the query", () => {
    assert.equal(
      ftsQuery('NEAR("foo" AND bar*) OR NOT col:baz ^qux'),
      '"near" OR "foo" OR "bar" OR "col" OR "baz" OR "qux"',
    );
  });

  await t.step("keeps letters of any script, digits and underscores", () => {
    assert.equal(
      ftsQuery("Größe über snake_case 404"),
      '"größe" OR "über" OR "snake_case" OR "404"',
    );
  });

  await t.step("stops at the term limit", () => {
    assert.equal(ftsQuery("alpha beta gamma delta", 2), '"alpha" OR "beta"');
    const many = Array.from({ length: 40 }, (_, index) => `word${index}`).join(" ");
    assert.equal(ftsQuery(many).split(" OR ").length, 24);
  });
});

Deno.test("store skills", async (t) => {
  await t.step(
    "setSkills and skills round trip in order, needed ones as placeholders",
    async () => {
      await using fixture = await openStore();
      const { store } = fixture;
      store.createRun(newRun("run-1"));
      store.setSkills("run-1", [
        { name: "deno-testing", kind: "used", status: "used" },
        { name: "sqlite-migrations", kind: "needed", status: "placeholder" },
        { name: "git-bisect", kind: "used", status: "used" },
      ]);
      assert.deepEqual(store.skills("run-1"), [
        { name: "deno-testing", kind: "used", status: "used" },
        { name: "sqlite-migrations", kind: "needed", status: "placeholder" },
        { name: "git-bisect", kind: "used", status: "used" },
      ]);
    },
  );

  await t.step("setSkills replaces a run's skills and leaves other runs alone", async () => {
    await using fixture = await openStore();
    const { store } = fixture;
    store.createRun(newRun("run-1"));
    store.createRun(newRun("run-2"));
    store.setSkills("run-1", [{ name: "old", kind: "used", status: "used" }]);
    store.setSkills("run-2", [{ name: "other", kind: "needed", status: "placeholder" }]);
    store.setSkills("run-1", [{ name: "new", kind: "needed", status: "placeholder" }]);
    assert.deepEqual(store.skills("run-1"), [{
      name: "new",
      kind: "needed",
      status: "placeholder",
    }]);
    assert.deepEqual(store.skills("run-2"), [
      { name: "other", kind: "needed", status: "placeholder" },
    ]);
    store.setSkills("run-1", []);
    assert.deepEqual(store.skills("run-1"), []);
    assert.deepEqual(store.skills("never-ran"), []);
  });
});
