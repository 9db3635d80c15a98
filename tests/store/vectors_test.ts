/**
 * Learnings with an embedder: hybrid search, deduplication by meaning,
 * vectors for learnings stored before, and the fall back to keyword search
 * where sqlite-vec does not load or the provider fails. Real SQLite files,
 * the real sqlite-vec extension, and a real HTTP endpoint in a worker.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { type Embedder, LexicalEmbedder } from "../../agents/embeddings/mod.ts";
import { createEmbedder } from "../../agents/embeddings/mod.ts";
import { Redactor } from "../../agents/support/redact.ts";
import { SqliteStore, type StoreOptions } from "../../agents/store/mod.ts";
import { tempDir } from "../_helpers.ts";
import { EmbeddingsServer } from "../_embeddings_server.ts";
import { newRun } from "./_helpers.ts";

const TIMEZONES = "Pin TZ=UTC when running the suite; date assertions fail in other timezones";

async function withStore(
  options: StoreOptions,
  work: (store: SqliteStore, path: string) => void | Promise<void>,
): Promise<void> {
  await using dir = await tempDir("finishline-vectors-");
  const path = join(dir.path, "state.db");
  const store = SqliteStore.open(path, { redactor: new Redactor({}), ...options });
  try {
    for (const id of ["run-1", "run-2", "run-3"]) store.createRun(newRun(id));
    await work(store, path);
  } finally {
    store.close();
  }
}

function vectorRows(path: string): Array<{ model: string; learning_id: number }> {
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    return db.prepare(`SELECT model, learning_id FROM learning_vectors ORDER BY learning_id`)
      .all() as Array<{ model: string; learning_id: number }>;
  } finally {
    db.close();
  }
}

Deno.test("hybrid search finds by word pieces what keyword search misses, and ranks both", async () => {
  const learnings = [
    { text: TIMEZONES },
    { text: "Resize images on the client before upload" },
    { text: "Specs run in another container" },
  ];
  await withStore({}, (keyword) => {
    keyword.setLearnings("run-1", "agent", learnings);
    assert.deepEqual(
      keyword.searchLearnings("specs break in another timezone").map((f) => f.text),
      [
        "Specs run in another container",
      ],
    );
  });
  await withStore({ embedder: new LexicalEmbedder() }, (hybrid) => {
    hybrid.setLearnings("run-1", "agent", learnings);
    const found = hybrid.searchLearnings("specs break in another timezone");
    assert.deepEqual(found.map((f) => f.text).sort(), [
      TIMEZONES,
      "Specs run in another container",
    ]);
    const byVector = found.find((f) => f.text === TIMEZONES)!;
    assert.ok(byVector.similarity! >= 0.15, `similarity ${byVector.similarity}`);
    assert.ok(found.every((f) => f.rank < 0), "a fused score, lower is better");
    assert.equal(byVector.seen, 1);
    assert.equal(byVector.runId, "run-1");
  });
});

Deno.test("a learning as similar as duplicateSimilarity is the stored one, seen again", async () => {
  await withStore({ embedder: new LexicalEmbedder() }, (store, path) => {
    store.setLearnings("run-1", "agent", [{ text: "Run deno fmt before committing" }]);
    store.setLearnings("run-2", "extracted", [
      { text: "Always run deno fmt before you commit", technique: "deno fmt", tags: ["deno"] },
      { text: "Run deno lint before committing" },
    ]);
    // Within one call too: the second is a rewording of the first.
    store.setLearnings("run-3", "agent", [
      { text: "Resize images on the client before upload" },
      { text: "Resize the images on the client before you upload them" },
    ]);
    const all = store.recentLearnings({ limit: 10 });
    assert.deepEqual(all.map((f) => [f.text, f.seen]).sort(), [
      ["Resize images on the client before upload", 1],
      ["Run deno fmt before committing", 2],
      ["Run deno lint before committing", 1],
    ]);
    const fmt = all.find((f) => f.text === "Run deno fmt before committing")!;
    assert.equal(fmt.technique, "deno fmt", "the repeat fills in what the stored one lacked");
    assert.deepEqual(fmt.tags, ["deno"]);
    assert.deepEqual(store.learningsOf("run-2").map((l) => l.text), [
      "Run deno fmt before committing",
      "Run deno lint before committing",
    ]);
    assert.equal(vectorRows(path).length, 3, "one vector per stored learning");
    // Forgetting a learning removes its vector.
    store.setLearnings("run-3", "agent", []);
    assert.equal(vectorRows(path).length, 2);
  });
});

Deno.test("learnings stored before vectors were on get theirs at the next search", async () => {
  await using dir = await tempDir("finishline-vectors-");
  const path = join(dir.path, "state.db");
  const before = SqliteStore.open(path, { redactor: new Redactor({}) });
  before.createRun(newRun("run-1"));
  before.setLearnings("run-1", "agent", [{ text: TIMEZONES }, { text: "Use dax for shell calls" }]);
  before.close();
  assert.equal(vectorRows(path).length, 0);
  const after = SqliteStore.open(path, {
    redactor: new Redactor({}),
    embedder: new LexicalEmbedder(),
  });
  try {
    assert.equal(after.searchLearnings("timezone")[0]?.text, TIMEZONES);
    assert.deepEqual(vectorRows(path).map((row) => row.model), [
      "lexical-v1-512",
      "lexical-v1-512",
    ]);
  } finally {
    after.close();
  }
  // A reworded repeat of an old learning is recognised once the old one has its vector.
  const again = SqliteStore.open(path, {
    redactor: new Redactor({}),
    embedder: new LexicalEmbedder(),
  });
  try {
    again.createRun(newRun("run-2"));
    again.setLearnings("run-2", "agent", [{ text: "Use dax for the shell call" }]);
    assert.deepEqual(again.recentLearnings().map((f) => [f.text, f.seen]).sort(), [
      [TIMEZONES, 1],
      ["Use dax for shell calls", 2],
    ]);
  } finally {
    again.close();
  }
  // Another embedder keeps its own vectors beside them.
  const other = SqliteStore.open(path, {
    redactor: new Redactor({}),
    embedder: new LexicalEmbedder({ dimensions: 256 }),
  });
  try {
    other.searchLearnings("timezone");
    assert.equal(vectorRows(path).length, 4);
  } finally {
    other.close();
  }
});

Deno.test("the vector search leaves out a run's own learnings too", async () => {
  await withStore({ embedder: new LexicalEmbedder() }, (store) => {
    store.setLearnings("run-1", "agent", [{ text: TIMEZONES }]);
    store.setLearnings("run-2", "agent", [{ text: "The timezone database needs an update" }]);
    const found = store.searchLearnings("timezone", { excludeRun: "run-1" });
    assert.deepEqual(found.map((f) => f.text), ["The timezone database needs an update"]);
  });
});

Deno.test("without sqlite-vec: one note, keyword search, deduplication by text", async () => {
  const notes: string[] = [];
  await withStore({
    embedder: new LexicalEmbedder(),
    extensionPath: "/nonexistent/vec0.so",
    onNote: (note) => notes.push(note),
  }, (store, path) => {
    store.setLearnings("run-1", "agent", [{ text: TIMEZONES }, { text: "Run deno fmt first" }]);
    store.setLearnings("run-2", "agent", [{ text: "run deno fmt first." }]);
    assert.deepEqual(store.searchLearnings("timezone"), []);
    assert.equal(store.searchLearnings("timezones")[0]?.text, TIMEZONES);
    assert.equal(store.searchLearnings("deno fmt")[0]?.seen, 2);
    assert.equal(vectorRows(path).length, 0);
  });
  assert.equal(notes.length, 1, notes.join("\n"));
  assert.match(
    notes[0],
    /^learnings: sqlite-vec did not load \(.*\): searching by keyword only, and deduplicating by text only$/,
  );
});

Deno.test("a provider that fails: a note, keyword results, and vectors once it answers", async () => {
  const notes: string[] = [];
  let fail = true;
  const lexical = new LexicalEmbedder();
  const flaky: Embedder = {
    id: "flaky-provider",
    kind: "semantic",
    minSimilarity: lexical.minSimilarity,
    duplicateSimilarity: lexical.duplicateSimilarity,
    embed(texts, purpose) {
      if (fail) throw new Error("Embeddings endpoint http://x answered 503: busy");
      return lexical.embed(texts, purpose);
    },
  };
  await withStore({ embedder: flaky, onNote: (note) => notes.push(note) }, (store, path) => {
    store.setLearnings("run-1", "agent", [{ text: TIMEZONES }]);
    assert.deepEqual(store.searchLearnings("timezones").map((f) => f.text), [TIMEZONES]);
    assert.deepEqual(store.searchLearnings("timezone"), []);
    assert.equal(vectorRows(path).length, 0);
    fail = false;
    assert.deepEqual(store.searchLearnings("timezone").map((f) => f.text), [TIMEZONES]);
    assert.equal(vectorRows(path).length, 1);
  });
  assert.deepEqual(notes, [
    "learnings: embeddings from flaky-provider failed (Embeddings endpoint http://x answered 503: busy): stored without vectors for now",
    "learnings: embeddings from flaky-provider failed (Embeddings endpoint http://x answered 503: busy): searching by keyword only",
  ]);
});

Deno.test("an HTTP provider: learnings deduplicated and found by meaning; no key or secret stored or sent", async () => {
  await using server = await EmbeddingsServer.start();
  const key = "sk-test-embeddings-store-0123456789";
  Deno.env.set("FINISHLINE_TEST_EMBEDDINGS_KEY", key);
  try {
    const embedder = createEmbedder({
      provider: "http",
      url: server.url,
      model: "concepts",
      apiKeyEnv: "FINISHLINE_TEST_EMBEDDINGS_KEY",
      duplicateSimilarity: 0.9,
      timeoutSeconds: 10,
    });
    await withStore({ embedder }, async (store, path) => {
      store.setLearnings("run-1", "agent", [
        { text: "The login test is flaky" },
        { text: "Resize images on the client" },
      ]);
      store.setLearnings("run-2", "agent", [{ text: "the sign-in spec is intermittent" }]);
      store.setLearnings("run-3", "agent", [
        { text: "Never paste sk-ant-api03-abcdefghijkl into a prompt" },
      ]);
      store.searchLearnings("why was sk-ant-api03-abcdefghijkl revoked", { limit: 1 });
      const found = store.searchLearnings("unreliable signin tests", { limit: 1 });
      assert.deepEqual(found.map((f) => [f.text, f.seen]), [["The login test is flaky", 2]]);
      for (const file of [path, `${path}-wal`]) {
        const text = new TextDecoder().decode(await Deno.readFile(file));
        assert.ok(!text.includes(key), `no key in ${file}`);
      }
      const requests = await server.requests();
      assert.ok(requests.every((request) => request.authorization === `Bearer ${key}`));
      assert.deepEqual(requests.map((request) => request.body.input), [
        ["The login test is flaky", "Resize images on the client"],
        ["the sign-in spec is intermittent"],
        ["Never paste sk-ant-…ijkl [redacted] into a prompt"],
        ["why was sk-ant-…ijkl [redacted] revoked"],
        ["unreliable signin tests"],
      ]);
    });
  } finally {
    Deno.env.delete("FINISHLINE_TEST_EMBEDDINGS_KEY");
  }
});
