/**
 * What runs learned: one row per distinct learning (the same text after
 * {@linkcode normalizeLearning} is the same learning), with the runs that saw
 * it (its sightings, per run and source), searchable across runs through an
 * FTS5 index ranked by bm25.
 *
 * @module
 */

import type { SQLInputValue } from "node:sqlite";
import { type StoreDatabase, transaction } from "./_database.ts";
import type { FoundLearning, Learning } from "./types.ts";

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

/** The `learnings` table, its sightings and its full-text index in an open store. */
export class LearningRecords {
  #store: StoreDatabase;

  /**
   * Work on the table of an open store.
   *
   * @param store The connection and redactor.
   */
  constructor(store: StoreDatabase) {
    this.#store = store;
  }

  /**
   * Replace what a run learned from one source (`agent` or `extracted`). Each
   * learning is redacted; one the history holds already (the same after
   * {@linkcode normalizeLearning}) gains a sighting instead of a copy, and
   * fills in the technique, applicability and tags it lacked. A learning no
   * run sees any more is forgotten.
   *
   * @param runId The run.
   * @param source Where they came from.
   * @param learnings The learnings.
   */
  setLearnings(runId: string, source: string, learnings: Learning[]): void {
    const { db, redactor } = this.#store;
    transaction(db, () => {
      const now = new Date().toISOString();
      const kept = new Set<number>();
      for (const raw of learnings) {
        const learning = redactor.redactValue(raw);
        const norm = normalizeLearning(learning.text);
        if (!norm) continue;
        const id = this.#upsert(learning, { norm, runId, source, now });
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

  /** The id of the learning with this normal form: merged into, or inserted. */
  #upsert(
    learning: Learning,
    where: { norm: string; runId: string; source: string; now: string },
  ): number {
    const { db } = this.#store;
    const existing = db.prepare(
      `SELECT id, technique, applicability, tags FROM learnings WHERE norm = ?`,
    ).get(where.norm);
    const tags = learning.tags ?? [];
    if (!existing) {
      return Number(
        db.prepare(
          `INSERT INTO learnings (run_id, source, text, technique, applicability, tags, created_at, norm)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
        ).run(
          where.runId,
          where.source,
          learning.text,
          learning.technique ?? "",
          learning.applicability ?? "",
          tagsJson(tags),
          where.now,
          where.norm,
        ).lastInsertRowid,
      );
    }
    const id = Number(existing.id);
    const merged = {
      technique: String(existing.technique) || learning.technique || "",
      applicability: String(existing.applicability) || learning.applicability || "",
      tags: tagsJson([...parseTags(String(existing.tags)), ...tags]),
    };
    if (
      merged.technique !== existing.technique || merged.applicability !== existing.applicability ||
      merged.tags !== existing.tags
    ) {
      db.prepare(`UPDATE learnings SET technique = ?, applicability = ?, tags = ? WHERE id = ?`)
        .run(merged.technique, merged.applicability, merged.tags, id);
    }
    return id;
  }

  /**
   * Full-text search over every run's learnings, best match first; the query
   * may be FTS5 syntax or free text (an issue body), searched word by word.
   *
   * @param query The query.
   * @param options At most `limit` results (default 10), without a run's own.
   * @returns The learnings found, with the run that saw each last and how often they were seen.
   */
  searchLearnings(query: string, options: SearchOptions = {}): FoundLearning[] {
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
