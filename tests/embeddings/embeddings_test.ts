import assert from "node:assert/strict";
import {
  cosine,
  createEmbedder,
  HttpEmbedder,
  LexicalEmbedder,
  parseEmbeddings,
} from "../../agents/embeddings/mod.ts";
import { EmbeddingsServer } from "../_embeddings_server.ts";

const KEY = "sk-test-embeddings-0123456789";

function env(values: Record<string, string>): { get(name: string): string | undefined } {
  return { get: (name) => values[name] };
}

Deno.test("the lexical embedder: unit vectors close for shared words and pieces, not for synonyms", () => {
  const embedder = new LexicalEmbedder();
  const [zones, zone, images, empty] = embedder.embed(
    [
      "Date assertions fail in other timezones",
      "tests break in another time zone",
      "Resize images on the client",
      "the and of",
    ],
    "document",
  );
  assert.equal(zones.length, 512);
  assert.ok(Math.abs(cosine(zones, zones) - 1) < 1e-6, "unit length");
  assert.ok(empty.every((value) => value === 0), "a text without words embeds as zeros");
  assert.ok(cosine(zones, zone) > 0.15, `timezones ~ time zone: ${cosine(zones, zone)}`);
  assert.ok(cosine(zones, zone) > cosine(zones, images) + 0.1);
  assert.deepEqual(embedder.embed(["Date assertions fail in other timezones"], "query")[0], zones);
  // Lexical, not semantic: words with no letters in common stay apart.
  const [flaky, intermittent] = embedder.embed(["flaky", "intermittent"], "query");
  assert.ok(
    cosine(flaky, intermittent) < 0.2,
    `flaky ~ intermittent: ${cosine(flaky, intermittent)}`,
  );
  assert.equal(embedder.kind, "lexical");
});

Deno.test("the lexical embedder: rewordings pass the repeat threshold, another tool does not", () => {
  const embedder = new LexicalEmbedder();
  const [fmt, reworded, lint] = embedder.embed(
    [
      "Run deno fmt before committing",
      "Always run deno fmt before you commit",
      "Run deno lint before committing",
    ],
    "document",
  );
  assert.ok(cosine(fmt, reworded) >= embedder.duplicateSimilarity);
  assert.ok(cosine(fmt, lint) < embedder.duplicateSimilarity);
});

Deno.test("the HTTP embedder asks an OpenAI-compatible endpoint, in batches, with the key from the environment", async () => {
  await using server = await EmbeddingsServer.start();
  const embedder = new HttpEmbedder({
    provider: "http",
    url: server.url,
    model: "test-model",
    apiKeyEnv: "TEST_EMBEDDINGS_KEY",
    dimensions: 64,
    batchSize: 2,
    env: env({ TEST_EMBEDDINGS_KEY: KEY }),
  });
  assert.equal(embedder.id, "http:test-model:64");
  const texts = ["The login test is flaky", "intermittent sign in spec", "resize images"];
  const vectors = embedder.embed(texts, "document");
  assert.equal(vectors.length, 3);
  assert.ok(Math.abs(cosine(vectors[0], vectors[0]) - 1) < 1e-6, "scaled to unit length");
  // The endpoint answers in reverse order; the index puts each vector back with its text.
  assert.ok(cosine(vectors[0], vectors[1]) > cosine(vectors[0], vectors[2]));
  const requests = await server.requests();
  assert.deepEqual(requests.map((request) => request.body.input), [
    texts.slice(0, 2),
    texts.slice(2),
  ]);
  assert.equal(requests[0].authorization, `Bearer ${KEY}`);
  assert.equal(requests[0].body.model, "test-model");
  assert.equal(requests[0].body.dimensions, 64);
  assert.equal(requests[0].body.input_type, undefined, "only Voyage gets input_type");
});

Deno.test("the voyage preset sends input_type; http without apiKeyEnv sends no key", async () => {
  await using server = await EmbeddingsServer.start();
  const voyage = createEmbedder({ provider: "voyage", url: server.url, timeoutSeconds: 5 })!;
  const savedKey = Deno.env.get("VOYAGE_API_KEY");
  Deno.env.set("VOYAGE_API_KEY", KEY);
  try {
    voyage.embed(["a query"], "query");
  } finally {
    if (savedKey === undefined) Deno.env.delete("VOYAGE_API_KEY");
    else Deno.env.set("VOYAGE_API_KEY", savedKey);
  }
  createEmbedder({ provider: "http", url: server.url, model: "local", timeoutSeconds: 5 })!
    .embed(["a document"], "document");
  const [first, second] = await server.requests();
  assert.equal(first.body.model, "voyage-3.5-lite");
  assert.equal(first.body.input_type, "query");
  assert.equal(first.authorization, `Bearer ${KEY}`);
  assert.equal(second.authorization, null);
});

Deno.test("HTTP embedder errors name the endpoint and never hold the key", async (t) => {
  await t.step("an error answer that echoes the key", async () => {
    await using server = await EmbeddingsServer.start({
      status: 401,
      errorBody: `{"error": "invalid api key ${KEY}"}`,
    });
    const embedder = new HttpEmbedder({
      provider: "http",
      url: server.url,
      model: "m",
      apiKeyEnv: "K",
      env: env({ K: KEY }),
    });
    assert.throws(() => embedder.embed(["x"], "query"), (error: Error) => {
      assert.match(
        error.message,
        /^Embeddings endpoint http:\/\/127\.0\.0\.1:\d+\/v1\/embeddings answered 401: /,
      );
      assert.match(error.message, /invalid api key \[redacted\]/);
      assert.ok(!error.message.includes(KEY));
      return true;
    });
  });

  await t.step("the key variable is not set", () => {
    const embedder = new HttpEmbedder({
      provider: "openai",
      url: "http://127.0.0.1:9/v1/embeddings",
      model: "m",
      apiKeyEnv: "NOT_SET_ANYWHERE",
      env: env({}),
    });
    assert.throws(
      () => embedder.embed(["x"], "query"),
      /^Error: The embeddings API key variable NOT_SET_ANYWHERE is not set \(learnings\.embeddings\.apiKeyEnv\)$/,
    );
  });

  await t.step("nobody answers", () => {
    const embedder = new HttpEmbedder({
      provider: "http",
      url: "http://127.0.0.1:9/v1/embeddings",
      model: "m",
      timeoutSeconds: 5,
    });
    assert.throws(() => embedder.embed(["x"], "query"), /did not answer/);
  });

  await t.step("an answer that is no list of embeddings", () => {
    const url = "http://host/v1/embeddings";
    assert.throws(
      () => parseEmbeddings('{"data": [{"index": 0, "embedding": [1, 0]}]}', 2, url),
      /answered no list of 2 embeddings under "data"/,
    );
    assert.throws(() => parseEmbeddings("<html>", 1, url), /answered no list of 1 embeddings/);
    assert.throws(
      () => parseEmbeddings('{"data": [{"embedding": [1, 0]}, {"embedding": [1]}]}', 2, url),
      /embeddings that are no number lists/,
    );
    assert.deepEqual(
      parseEmbeddings(
        '{"data": [{"index": 1, "embedding": [0, 2]}, {"index": 0, "embedding": [3, 0]}]}',
        2,
        url,
      )
        .map((vector) => [...vector]),
      [[1, 0], [0, 1]],
    );
  });
});
