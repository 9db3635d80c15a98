import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { MIGRATIONS, SqliteStore } from "../../agents/store/mod.ts";
import { Redactor } from "../../agents/support/redact.ts";
import { tempDir } from "../_helpers.ts";
import { iteration, openStore, summary, userVersion } from "./_helpers.ts";

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
    "the duplicate learnings older versions stored are merged into one learning seen by each run",
    async () => {
      await using dir = await tempDir("finishline-store-");
      const path = join(dir.path, "state.db");
      const old = new DatabaseSync(path);
      try {
        for (const migration of MIGRATIONS.slice(0, 3)) old.exec(migration);
        old.exec("PRAGMA user_version = 3");
        const run = old.prepare(
          `INSERT INTO runs (id, agent, handler, argv, cwd, started_at, max_iterations)
           VALUES (?, 'fixer', 'iterate', '[]', '/old', ?, 3)`,
        );
        const learning = old.prepare(
          `INSERT INTO learnings (run_id, source, text, tags, created_at) VALUES (?, ?, ?, 'fixer', ?)`,
        );
        for (let index = 1; index <= 12; index++) {
          const id = `run-${String(index).padStart(2, "0")}`;
          const at = `2024-06-${String(index).padStart(2, "0")}T00:00:00.000Z`;
          run.run(id, at);
          // The agent reported the same learning in each iteration, worded a little differently.
          learning.run(id, "agent", "Use dax for shell commands", at);
          learning.run(
            id,
            "agent",
            index % 2 ? "use dax for shell commands." : "Use dax for shell commands",
            at,
          );
          learning.run(id, "extracted", "- Use  DAX for shell commands!", at);
        }
        learning.run("run-01", "agent", "Pin TZ in CI", "2024-06-01T00:00:00.000Z");
      } finally {
        old.close();
      }

      const store = SqliteStore.open(path, { redactor: new Redactor({}) });
      try {
        const found = store.searchLearnings("dax shell");
        assert.equal(found.length, 1, "one learning, not 36");
        assert.equal(found[0].text, "Use dax for shell commands");
        assert.equal(found[0].seen, 12);
        assert.equal(found[0].runId, "run-12");
        assert.equal(found[0].lastSeenAt, "2024-06-12T00:00:00.000Z");
        assert.deepEqual(store.recentLearnings().map((learning) => learning.text), [
          "Use dax for shell commands",
          "Pin TZ in CI",
        ]);
        assert.deepEqual(store.learningsOf("run-01").map((learning) => learning.text), [
          "Use dax for shell commands",
          "Pin TZ in CI",
        ]);
        // A new run's repeat joins the merged learning.
        store.createRun({
          id: "run-13",
          agent: "fixer",
          handler: "iterate",
          argv: [],
          cwd: "/new",
          startedAt: "2024-07-01T00:00:00.000Z",
          baseline: null,
          branch: null,
          maxIterations: 1,
          cleanup: {},
        });
        store.setLearnings("run-13", "agent", [{ text: "USE DAX FOR SHELL COMMANDS" }]);
        assert.equal(store.searchLearnings("dax")[0].seen, 13);
      } finally {
        store.close();
      }
      const check = new DatabaseSync(path, { readOnly: true });
      try {
        const n = (sql: string) => Number(check.prepare(sql).get()?.n);
        assert.equal(n("SELECT count(*) AS n FROM learnings"), 2);
        // The full-text index lost the merged rows with them.
        assert.equal(
          n("SELECT count(*) AS n FROM learnings_fts WHERE learnings_fts MATCH 'dax'"),
          1,
        );
      } finally {
        check.close();
      }
    },
  );

  await t.step(
    "migration 6 gives skills a description and a lifecycle and turns space-joined tags into JSON lists",
    async () => {
      await using dir = await tempDir("finishline-store-");
      const path = join(dir.path, "state.db");
      const old = new DatabaseSync(path);
      try {
        old.function("finishline_normalize_learning", (text) => String(text).toLowerCase());
        for (const migration of MIGRATIONS.slice(0, 5)) old.exec(migration);
        old.exec("PRAGMA user_version = 5");
        old.exec(
          `INSERT INTO runs (id, agent, handler, argv, cwd, started_at, max_iterations)
           VALUES ('run-1', 'fixer', 'iterate', '[]', '/old', '2024-06-01T00:00:00.000Z', 3);
           INSERT INTO skills (run_id, name, kind, status, created_at) VALUES
             ('run-1', 'git', 'used', 'used', '2024-06-01T00:00:00.000Z'),
             ('run-1', 'ci-config', 'needed', 'placeholder', '2024-06-01T00:00:00.000Z');
           INSERT INTO learnings (run_id, source, text, tags, created_at, norm) VALUES
             ('run-1', 'agent', 'Pin TZ in CI', 'fixer timezone  fixer', '2024-06-01T00:00:00.000Z', 'pin tz in ci'),
             ('run-1', 'agent', 'No tags here', '', '2024-06-01T00:00:00.000Z', 'no tags here');
           INSERT INTO learning_sightings (learning_id, run_id, source, seen_at)
             SELECT id, run_id, source, created_at FROM learnings;
           INSERT INTO finish (run_id, steps, updated_at)
             VALUES ('run-1', '["summary"]', '2024-06-01T00:00:00.000Z');`,
        );
      } finally {
        old.close();
      }

      const store = SqliteStore.open(path, { redactor: new Redactor({}) });
      try {
        assert.deepEqual(store.skills("run-1"), [
          { name: "git", kind: "used", description: "", lifecycle: "implemented" },
          { name: "ci-config", kind: "missing", description: "", lifecycle: "proposed" },
        ]);
        assert.deepEqual(store.learningsOf("run-1").map((learning) => learning.tags), [
          ["fixer", "timezone"],
          [],
        ]);
        // The full-text index follows the rewritten tags.
        assert.equal(store.searchLearnings("timezone")[0]?.text, "Pin TZ in CI");
        const finish = store.getFinish("run-1");
        assert.deepEqual(finish.steps, ["summary"]);
        assert.deepEqual(finish.nextActions, []);
        assert.equal(finish.usage, null);
      } finally {
        store.close();
      }
      const check = new DatabaseSync(path, { readOnly: true });
      try {
        assert.deepEqual(
          check.prepare("SELECT tags FROM learnings ORDER BY id").all().map((row) => row.tags),
          ['["fixer","timezone"]', "[]"],
        );
        const columns = check.prepare("PRAGMA table_info(skills)").all().map((row) => row.name);
        assert.ok(!columns.includes("status"), "the status column became the lifecycle");
      } finally {
        check.close();
      }
    },
  );

  await t.step(
    "migration 8 adds the runs' metrics: runs recorded before have none, and take them at their end",
    async () => {
      await using dir = await tempDir("finishline-store-");
      const path = join(dir.path, "state.db");
      const old = new DatabaseSync(path);
      try {
        old.function("finishline_normalize_learning", (text) => String(text).toLowerCase());
        old.function("finishline_tags_json", (text) => JSON.stringify(String(text).split(" ")));
        for (const migration of MIGRATIONS.slice(0, 7)) old.exec(migration);
        old.exec("PRAGMA user_version = 7");
        old.exec(
          `INSERT INTO runs (id, agent, handler, argv, cwd, status, started_at, max_iterations)
           VALUES ('run-1', 'fixer', 'iterate', '[]', '/old', 'stalled', '2024-06-01T00:00:00.000Z', 3);`,
        );
      } finally {
        old.close();
      }
      const store = SqliteStore.open(path, { redactor: new Redactor({}) });
      try {
        assert.equal(store.schemaVersion, MIGRATIONS.length);
        const run = store.getRun("run-1");
        assert.equal(run?.status, "stalled", "the run is kept");
        assert.equal(run?.metrics, null);
        const metrics = {
          iterations: 3,
          probedIterations: 3,
          probes: 3,
          probeTimeouts: 3,
          rescues: 0,
          rescuesCommitted: 0,
          aborted: true,
          falseAbort: false,
        };
        store.setRunMetrics("run-1", metrics);
        assert.deepEqual(store.getRun("run-1")?.metrics, metrics);
      } finally {
        store.close();
      }
      const check = new DatabaseSync(path, { readOnly: true });
      try {
        const column = check.prepare("PRAGMA table_info(runs)").all()
          .find((row) => row.name === "metrics");
        assert.deepEqual([column?.type, column?.notnull, column?.dflt_value], [
          "TEXT",
          1,
          "'{}'",
        ]);
      } finally {
        check.close();
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
    await using fixture = await openStore({ runs: ["run-1"] });
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
