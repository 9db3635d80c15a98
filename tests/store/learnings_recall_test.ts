/**
 * Recall on the labelled set (tests/fixtures/learnings_recall.json): hybrid
 * search must find at least as much as keyword search. `deno task recall`
 * prints the figures.
 */

import assert from "node:assert/strict";
import { LexicalEmbedder } from "../../agents/embeddings/mod.ts";
import { loadRecallFixture, measureStore } from "../../bench/recall_bench.ts";

Deno.test("on the labelled set, hybrid search (lexical vectors) recalls at least what keyword search does", async () => {
  const fixture = await loadRecallFixture();
  assert.equal(fixture.learnings.length, 30);
  assert.equal(fixture.queries.length, 10);
  const known = new Set(fixture.learnings.map((learning) => learning.id));
  assert.ok(fixture.queries.every((query) => query.relevant.every((id) => known.has(id))));

  const keyword = measureStore(fixture);
  const hybrid = measureStore(fixture, new LexicalEmbedder());
  assert.ok(
    hybrid.recallAt5 >= keyword.recallAt5,
    `hybrid recall@5 ${hybrid.recallAt5} < keyword ${keyword.recallAt5}`,
  );
  // Every query keyword search answers in the first five, hybrid search answers too.
  for (const [index, entry] of keyword.perQuery.entries()) {
    assert.ok(hybrid.perQuery[index].found >= entry.found, `${entry.id}: hybrid lost a learning`);
  }
});
