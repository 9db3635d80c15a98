/**
 * What runs learned: one row per distinct learning, with the runs that saw
 * it (its sightings, per run and source), searchable across runs.
 *
 * - The same text after {@linkcode normalizeLearning} is the same learning;
 *   with an embedder, so is a text whose vector is at least the embedder's
 *   `duplicateSimilarity` like a stored learning's.
 * - Search is keyword search through an FTS5 index ranked by bm25; with an
 *   embedder it is hybrid: the keyword ranking and the vector ranking are
 *   fused by reciprocal rank fusion (see {@linkcode fuseRankings}).
 *
 * @module
 */

import type { SQLInputValue } from "node:sqlite";
import { type StoreDatabase, transaction } from "./_database.ts";
import type { FoundLearning, Learning } from "./records.ts";
import type { LearningVectors } from "./vectors.ts";

/** The k of reciprocal rank fusion: a result at rank r scores 1 / (k + r). */
const RRF_K = 60;

const STOP_WORDS = new Set(
  "the and for with that this from into your you are was were has have had not but all any can will should would its our out use using add make when then than what which who how why"
    .split(" "),
);

/**
 * Turn free text (an issue title and body, a task) into an FTS5 query: its
 * distinct words of three or more letters, quoted, joined with OR.
 *
 * @param text Any text.
 * @param maxTerms How many words at most.
 * @returns The query, or an empty string when no word is left.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ftsQuery } from "./learnings.ts";
 *
 * assert.equal(ftsQuery("Fix the flaky login test!"), '"fix" OR "flaky" OR "login" OR "test"');
 * ```
 */
export function ftsQuery(text: string, maxTerms = 24): string {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]{3,}/gu) ?? [];
  const terms = [...new Set(words.filter((word) => !STOP_WORDS.has(word)))].slice(0, maxTerms);
  return terms.map((term) => `"${term}"`).join(" OR ");
}

/**
 * The form two learnings are compared in: case, whitespace, a leading list
 * marker and trailing punctuation do not make a learning new.
 *
 * @param text A learning's text.
 * @returns Its normalised form (empty when nothing is left).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalizeLearning } from "./learnings.ts";
 *
 * assert.equal(normalizeLearning("- Run  deno fmt FIRST."), "run deno fmt first");
 * assert.equal(normalizeLearning("run deno fmt first"), "run deno fmt first");
 * ```
 */
export function normalizeLearning(text: string): string {
  return text.normalize("NFKC").toLowerCase()
    .replace(/\s+/gu, " ")
    .trim()
    .replace(/^(?:[-*•]|\d+[.)])\s+/u, "")
    .replace(/[\s.,;:!?…]+$/u, "");
}

/**
 * A learning's tags as stored: a JSON list, each tag once. Older histories
 * joined them with spaces; those are read, and migrated, as lists too.
 *
 * @param tags The tags: a list, a stored JSON list, or space-joined text.
 * @returns The JSON list.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseTags, tagsJson } from "./learnings.ts";
 *
 * assert.equal(tagsJson("ci  timezone ci"), '["ci","timezone"]');
 * assert.equal(tagsJson(["flaky tests", "ci"]), '["flaky tests","ci"]');
 * assert.deepEqual(parseTags('["flaky tests","ci"]'), ["flaky tests", "ci"]);
 * ```
 */
export function tagsJson(tags: string | string[]): string {
  const list = Array.isArray(tags) ? tags : parseTags(tags);
  return JSON.stringify([...new Set(list.map((tag) => tag.trim()).filter(Boolean))]);
}

/**
 * The tags of a stored learning: its JSON list, or older space-joined text.
 *
 * @param stored The `tags` column.
 * @returns The tags.
 */
export function parseTags(stored: string): string[] {
  if (stored.trimStart().startsWith("[")) {
    try {
      const value = JSON.parse(stored);
      if (Array.isArray(value)) return value.map(String);
    } catch {
      // not a list after all: read it as words
    }
  }
  return stored.split(" ").filter(Boolean);
}

/** The columns of a found learning: the learning, its last sighting and how often it was seen. */
const FOUND_COLUMNS = `l.id, l.text, l.technique, l.applicability, l.tags, last.run_id, last.source,
  last.seen_at AS last_seen_at, r.agent,
  (SELECT count(DISTINCT c.run_id) FROM learning_sightings c WHERE c.learning_id = l.id) AS seen`;

/** Joins a learning `l` to its latest sighting (outside `:exclude`, when set) and that run. */
const LAST_SIGHTING = `JOIN learning_sightings last ON last.rowid = (
    SELECT s.rowid FROM learning_sightings s
    WHERE s.learning_id = l.id AND (:exclude IS NULL OR s.run_id != :exclude)
    ORDER BY s.seen_at DESC, s.rowid DESC LIMIT 1)
  JOIN runs r ON r.id = last.run_id`;

/** Options of {@linkcode LearningRecords.searchLearnings}. */
export interface SearchOptions {
  /** At most this many results. @default 10 */
  limit?: number;
  /** Leave out learnings no run but this one saw (a run's own, for its prompt). */
  excludeRun?: string;
}

/** A learning about to be stored: redacted, with its normal form and, when new, its vector. */
interface Incoming {
  learning: Learning;
  norm: string;
  vector?: Float32Array;
}

/** The `learnings` table, its sightings, its full-text index and its vectors in an open store. */
export class LearningRecords {
  #store: StoreDatabase;
  #vectors: LearningVectors | undefined;

  /**
   * Work on the table of an open store.
   *
   * @param store The connection and redactor.
   * @param vectors The learnings' vectors, for hybrid search and deduplication by meaning.
   */
  constructor(store: StoreDatabase, vectors?: LearningVectors) {
    this.#store = store;
    this.#vectors = vectors;
  }

  /**
   * Replace what a run learned from one source (`agent` or `extracted`). Each
   * learning is redacted; one the history holds already (the same after
   * {@linkcode normalizeLearning}, or, with an embedder, as similar as its
   * `duplicateSimilarity`) gains a sighting instead of a copy, and fills in
   * the technique, applicability and tags it lacked. A learning no run sees
   * any more is forgotten.
   *
   * @param runId The run.
   * @param source Where they came from.
   * @param learnings The learnings.
   */
  setLearnings(runId: string, source: string, learnings: Learning[]): void {
    const { db } = this.#store;
    // Learnings stored before vectors were on are compared by meaning too.
    this.#vectors?.backfill();
    // Embedding may ask a server: it happens before the write lock is taken.
    const incoming = this.#prepare(learnings);
    transaction(db, () => {
      const now = new Date().toISOString();
      const kept = new Set<number>();
      for (const item of incoming) {
        const id = this.#upsert(item, { runId, source, now });
        kept.add(id);
        db.prepare(
          `INSERT INTO learning_sightings (learning_id, run_id, source, seen_at) VALUES (?, ?, ?, ?)
           ON CONFLICT DO NOTHING`,
        ).run(id, runId, source, now);
      }
      const before = db.prepare(
        `SELECT learning_id FROM learning_sightings WHERE run_id = ? AND source = ?`,
      ).all(runId, source).map((row) => Number(row.learning_id));
      for (const id of before.filter((id) => !kept.has(id))) {
        db.prepare(
          `DELETE FROM learning_sightings WHERE learning_id = ? AND run_id = ? AND source = ?`,
        ).run(id, runId, source);
        db.prepare(
          `DELETE FROM learnings WHERE id = ? AND NOT EXISTS (
             SELECT 1 FROM learning_sightings WHERE learning_id = ?)`,
        ).run(id, id);
      }
    });
  }

  /** Redact and normalise; embed those whose text the history does not hold yet. */
  #prepare(learnings: Learning[]): Incoming[] {
    const { db, redactor } = this.#store;
    const incoming = learnings.map((raw) => {
      const learning = redactor.redactValue(raw);
      return { learning, norm: normalizeLearning(learning.text) } as Incoming;
    }).filter((item) => item.norm);
    const known = db.prepare(`SELECT 1 FROM learnings WHERE norm = ?`);
    const fresh = incoming.filter((item) => !known.get(item.norm));
    const vectors = this.#vectors?.embed(fresh.map((item) => item.learning.text), "document");
    fresh.forEach((item, index) => item.vector = vectors?.[index]);
    return incoming;
  }

  /** The id of the learning this one repeats (by text, then by meaning), merged into, or inserted. */
  #upsert(item: Incoming, where: { runId: string; source: string; now: string }): number {
    const { db } = this.#store;
    const existing = db.prepare(`SELECT id FROM learnings WHERE norm = ?`).get(item.norm) ??
      this.#repeated(item.vector);
    if (existing) {
      const id = Number(existing.id);
      this.#merge(id, item.learning);
      return id;
    }
    const { learning } = item;
    const id = Number(
      db.prepare(
        `INSERT INTO learnings (run_id, source, text, technique, applicability, tags, created_at, norm)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      ).run(
        where.runId,
        where.source,
        learning.text,
        learning.technique ?? "",
        learning.applicability ?? "",
        tagsJson(learning.tags ?? []),
        where.now,
        item.norm,
      ).lastInsertRowid,
    );
    if (item.vector) this.#vectors?.put(id, item.vector);
    return id;
  }

  /** The stored learning a vector is a repeat of: the most similar, when similar enough. */
  #repeated(vector: Float32Array | undefined): { id: number } | undefined {
    const embedder = this.#vectors?.embedder;
    if (!vector || !embedder) return undefined;
    return this.#vectors!.nearest(vector, {
      limit: 1,
      minSimilarity: embedder.duplicateSimilarity,
    })[0];
  }

  /** Fill in the technique, applicability and tags a stored learning lacks. */
  #merge(id: number, learning: Learning): void {
    const { db } = this.#store;
    const existing = db.prepare(
      `SELECT technique, applicability, tags FROM learnings WHERE id = ?`,
    ).get(id)!;
    const merged = {
      technique: String(existing.technique) || learning.technique || "",
      applicability: String(existing.applicability) || learning.applicability || "",
      tags: tagsJson([...parseTags(String(existing.tags)), ...learning.tags ?? []]),
    };
    if (
      merged.technique !== existing.technique || merged.applicability !== existing.applicability ||
      merged.tags !== existing.tags
    ) {
      db.prepare(`UPDATE learnings SET technique = ?, applicability = ?, tags = ? WHERE id = ?`)
        .run(merged.technique, merged.applicability, merged.tags, id);
    }
  }

  /**
   * Search every run's learnings, best match first. Keyword search (FTS5,
   * bm25): the query may be FTS5 syntax or free text (an issue body), searched
   * word by word. With an embedder it is hybrid: the keyword ranking and the
   * ranking by vector similarity (those at least `minSimilarity` like the
   * query) are fused by {@linkcode fuseRankings}; learnings stored before
   * vectors were on are embedded first.
   *
   * @param query The query.
   * @param options At most `limit` results (default 10), without a run's own.
   * @returns The learnings found, with the run that saw each last and how often they were seen.
   */
  searchLearnings(query: string, options: SearchOptions = {}): FoundLearning[] {
    const limit = options.limit ?? 10;
    const vectors = this.#vectors;
    if (!vectors?.embedder || !query.trim()) return this.#keyword(query, { ...options, limit });
    vectors.backfill();
    const pool = Math.max(limit * 3, 30);
    const keyword = this.#keyword(query, { ...options, limit: pool });
    // The query may go to a provider: secrets out first, as from everything stored.
    const [vector] = vectors.embed([this.#store.redactor.redact(query)], "query") ?? [];
    if (!vector) return keyword.slice(0, limit);
    const matches = vectors.nearest(vector, {
      limit: pool,
      minSimilarity: vectors.embedder!.minSimilarity,
      excludeRun: options.excludeRun,
    });
    const similarity = new Map(matches.map((match) => [match.id, match.similarity]));
    const fused = fuseRankings([keyword.map((found) => found.id), matches.map((m) => m.id)])
      .slice(0, limit);
    const rows = new Map(keyword.map((found) => [found.id, found]));
    for (const found of this.#byIds(fused.map((entry) => entry.id).filter((id) => !rows.has(id)))) {
      rows.set(found.id, found);
    }
    return fused.flatMap(({ id, score }) => {
      const found = rows.get(id);
      if (!found) return [];
      const match = similarity.get(id);
      return [{ ...found, rank: -score, ...(match === undefined ? {} : { similarity: match }) }];
    });
  }

  /** Keyword search: FTS5 syntax first when the query looks like it, else its words. */
  #keyword(query: string, options: SearchOptions): FoundLearning[] {
    const words = ftsQuery(query);
    // Free text (an issue body) often holds quotes, parentheses or colons: when it is
    // no valid FTS5 query, or finds nothing as one (implicit AND), search its words.
    if (/["*:^()]| OR | AND | NOT /.test(query) && query !== words) {
      try {
        const found = this.#match(query, options);
        if (found.length > 0) return found;
      } catch {
        // Not FTS5 syntax after all.
      }
    }
    return words ? this.#match(words, options) : [];
  }

  /** Learnings by id (those still seen by some run), in no particular order. */
  #byIds(ids: number[]): FoundLearning[] {
    if (ids.length === 0) return [];
    return this.#store.db.prepare(
      `SELECT ${FOUND_COLUMNS}, 0 AS rank FROM learnings l ${LAST_SIGHTING}
       WHERE l.id IN (SELECT value FROM json_each(:ids))`,
    ).all({ exclude: null, ids: JSON.stringify(ids) }).map(toFound);
  }

  /**
   * The learnings seen most recently, latest first.
   *
   * @param options At most `limit` results (default 10).
   * @returns The learnings, with the run that saw each last and how often they were seen.
   */
  recentLearnings(options: { limit?: number } = {}): FoundLearning[] {
    return this.#store.db.prepare(
      `SELECT ${FOUND_COLUMNS}, 0 AS rank FROM learnings l ${LAST_SIGHTING}
       ORDER BY last.seen_at DESC, last.rowid DESC LIMIT :limit`,
    ).all({ exclude: null, limit: options.limit ?? 10 }).map(toFound);
  }

  /**
   * What a run learned, in the order it reported it.
   *
   * @param runId The run.
   * @returns The learnings.
   */
  learningsOf(runId: string): Learning[] {
    return this.#store.db.prepare(
      `SELECT l.text, l.technique, l.applicability, l.tags, min(s.rowid) AS first
       FROM learning_sightings s JOIN learnings l ON l.id = s.learning_id
       WHERE s.run_id = ? GROUP BY l.id ORDER BY first`,
    ).all(runId).map(toLearning);
  }

  #match(match: string, options: SearchOptions): FoundLearning[] {
    return this.#store.db.prepare(
      `SELECT ${FOUND_COLUMNS}, bm25(learnings_fts) AS rank
       FROM learnings_fts JOIN learnings l ON l.id = learnings_fts.rowid ${LAST_SIGHTING}
       WHERE learnings_fts MATCH :match ORDER BY rank, seen DESC LIMIT :limit`,
    ).all({ match, exclude: options.excludeRun ?? null, limit: options.limit ?? 10 }).map(
      toFound,
    );
  }
}

/**
 * Reciprocal rank fusion: each ranking gives the item at rank r (1 for the
 * best) a score of 1 / (60 + r), and the items are ordered by their summed
 * score. An item both rankings hold comes before one only one holds, at
 * like ranks; the scores of bm25 and cosine never need to be made
 * comparable. Ties keep the order of first appearance (the keyword ranking
 * first).
 *
 * @param rankings Rankings of ids, best first.
 * @returns Every id once, with its fused score, best first.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fuseRankings } from "./learnings.ts";
 *
 * const fused = fuseRankings([[1, 2, 3], [3, 4]]);
 * assert.deepEqual(fused.map((entry) => entry.id), [3, 1, 2, 4]);
 * ```
 */
export function fuseRankings(rankings: number[][]): Array<{ id: number; score: number }> {
  const scores = new Map<number, number>();
  for (const ranking of rankings) {
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (RRF_K + index + 1)));
  }
  return [...scores].map(([id, score]) => ({ id, score })).sort((a, b) => b.score - a.score);
}

function toFound(row: Record<string, SQLInputValue>): FoundLearning {
  return {
    id: Number(row.id),
    runId: String(row.run_id),
    agent: String(row.agent),
    source: String(row.source),
    ...toLearning(row),
    seen: Number(row.seen),
    lastSeenAt: String(row.last_seen_at),
    rank: Number(row.rank),
  };
}

function toLearning(row: Record<string, SQLInputValue>): Learning {
  return {
    text: String(row.text),
    technique: String(row.technique) || undefined,
    applicability: String(row.applicability) || undefined,
    tags: parseTags(String(row.tags)),
  };
}
