import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import {
  ftsQuery,
  type Learning,
  normalizeLearning,
  type SqliteStore,
} from "../../agents/store/mod.ts";
import { newRun, openStore } from "./_helpers.ts";

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
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
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
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
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
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.setLearnings(
      "run-1",
      "agent",
      Array.from({ length: 15 }, (_, index) => ({ text: `widget lesson number ${index}` })),
    );
    assert.equal(store.searchLearnings("widget").length, 10);
    assert.equal(store.searchLearnings("widget", { limit: 3 }).length, 3);
  });

  await t.step("punctuation-heavy free text searches by its words without throwing", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
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
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
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
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
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

/** Rows of a table as another connection sees them. */
function count(path: string, sql: string): number {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return Number(db.prepare(sql).get()?.n);
  } finally {
    db.close();
  }
}

Deno.test("learnings are deduplicated when stored", async (t) => {
  await t.step(
    "the same learning from other runs, in other case, spacing or punctuation, is one learning seen by each",
    async () => {
      await using fixture = await openStore({ runs: ["run-1", "run-2", "run-3"] });
      const { store } = fixture;
      store.setLearnings("run-1", "agent", [{ text: "Pin TZ=UTC in CI" }]);
      store.setLearnings("run-2", "agent", [{ text: "pin  tz=utc\nin ci." }]);
      store.setLearnings("run-3", "extracted", [{ text: "- Pin TZ=UTC in CI!" }]);
      const found = store.searchLearnings("pin");
      assert.equal(found.length, 1);
      assert.equal(found[0].text, "Pin TZ=UTC in CI", "the first wording is kept");
      assert.equal(found[0].seen, 3);
      assert.equal(found[0].runId, "run-3", "named after the run that saw it last");
      assert.equal(found[0].source, "extracted");
      assert.match(found[0].lastSeenAt, /^\d{4}-\d{2}-\d{2}T/);
      assert.equal(count(fixture.path, "SELECT count(*) AS n FROM learnings"), 1);
      assert.equal(count(fixture.path, "SELECT count(*) AS n FROM learning_sightings"), 3);
      for (const run of ["run-1", "run-2", "run-3"]) {
        assert.deepEqual(store.learningsOf(run).map((learning) => learning.text), [
          "Pin TZ=UTC in CI",
        ]);
      }
    },
  );

  await t.step("repeats within one list are stored once", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.setLearnings("run-1", "agent", [
      { text: "Run deno fmt first" },
      { text: "run deno fmt first." },
      { text: "Commit each step" },
      { text: " ... " },
    ]);
    assert.deepEqual(store.learningsOf("run-1").map((learning) => learning.text), [
      "Run deno fmt first",
      "Commit each step",
    ]);
    assert.equal(store.searchLearnings("deno fmt")[0].seen, 1);
  });

  await t.step("finishing a run again neither counts it twice nor moves its time", async () => {
    await using fixture = await openStore({ runs: ["run-1"] });
    const { store } = fixture;
    store.setLearnings("run-1", "agent", [{ text: "Pin TZ in CI" }]);
    const first = store.searchLearnings("pin")[0];
    await new Promise((resolve) => setTimeout(resolve, 5));
    store.setLearnings("run-1", "agent", [{ text: "Pin TZ in CI" }]);
    const again = store.searchLearnings("pin")[0];
    assert.equal(again.seen, 1);
    assert.equal(again.lastSeenAt, first.lastSeenAt);
    assert.equal(again.id, first.id);
  });

  await t.step(
    "a repeat fills in the technique, applicability and tags the first lacked",
    async () => {
      await using fixture = await openStore({ runs: ["run-1", "run-2"] });
      const { store } = fixture;
      store.setLearnings("run-1", "agent", [{ text: "Pin TZ in CI", tags: ["fixer"] }]);
      store.setLearnings("run-2", "extracted", [{
        text: "pin tz in ci",
        technique: "environment pinning",
        applicability: "date tests",
        tags: ["ci", "fixer"],
      }]);
      const [found] = store.searchLearnings("pinning");
      assert.equal(found.text, "Pin TZ in CI");
      assert.equal(found.technique, "environment pinning");
      assert.equal(found.applicability, "date tests");
      assert.deepEqual(found.tags, ["fixer", "ci"]);
      // The full-text index follows the update: the old row is not found twice.
      assert.equal(store.searchLearnings("pin").length, 1);
      assert.equal(store.searchLearnings("date tests").length, 1);
    },
  );

  await t.step("a learning a run drops is forgotten only when no other run saw it", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.setLearnings("run-1", "agent", [{ text: "shared lesson" }, { text: "own lesson" }]);
    store.setLearnings("run-2", "agent", [{ text: "Shared lesson." }]);
    store.setLearnings("run-1", "agent", []);
    assert.deepEqual(store.searchLearnings("own"), []);
    const [shared] = store.searchLearnings("shared");
    assert.equal(shared.seen, 1);
    assert.equal(shared.runId, "run-2");
    assert.deepEqual(store.learningsOf("run-1"), []);
  });

  await t.step("excludeRun leaves out what only that run saw, and names another run", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.setLearnings("run-1", "agent", [{ text: "lesson from both runs" }]);
    store.setLearnings("run-2", "agent", [
      { text: "lesson from both runs" },
      { text: "lesson of the current run only" },
    ]);
    const found = store.searchLearnings("lesson", { excludeRun: "run-2" });
    assert.deepEqual(found.map((learning) => [learning.text, learning.runId]), [
      ["lesson from both runs", "run-1"],
    ]);
    assert.equal(store.searchLearnings("lesson").length, 2);
  });

  await t.step("recentLearnings lists the latest seen first, up to the limit", async () => {
    await using fixture = await openStore({ runs: ["run-1", "run-2"] });
    const { store } = fixture;
    store.setLearnings("run-1", "agent", [{ text: "alpha" }, { text: "beta" }, { text: "gamma" }]);
    store.setLearnings("run-2", "agent", [{ text: "Alpha." }]);
    assert.deepEqual(store.recentLearnings().map((learning) => learning.text), [
      "alpha",
      "gamma",
      "beta",
    ]);
    assert.deepEqual(store.recentLearnings({ limit: 2 }).map((learning) => learning.seen), [2, 1]);
    assert.equal(store.recentLearnings()[0].runId, "run-2");
  });
});

Deno.test("normalizeLearning", async (t) => {
  await t.step("ignores case, spacing, list markers and trailing punctuation", () => {
    for (
      const text of [
        "Run deno fmt first",
        "run deno fmt first.",
        "  RUN   deno\tfmt first!!  ",
        "- Run deno fmt first",
        "* run deno fmt first;",
        "1. Run deno fmt first…",
        "2) run deno fmt first?",
      ]
    ) {
      assert.equal(normalizeLearning(text), "run deno fmt first", JSON.stringify(text));
    }
  });

  await t.step("keeps what changes the meaning", () => {
    assert.notEqual(normalizeLearning("Run deno fmt"), normalizeLearning("Run deno lint"));
    assert.equal(normalizeLearning("Use v1.2.3"), "use v1.2.3");
    assert.equal(normalizeLearning("-x flag matters"), "-x flag matters");
    assert.equal(normalizeLearning("..."), "");
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
