/**
 * What runs learned, kept per run and source and searchable across runs
 * through an FTS5 index ranked by bm25.
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

/** The `learnings` table and its full-text index in an open store. */
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
   * Replace a run's learnings of one source (`agent` or `extracted`); they
   * are redacted and indexed for full-text search.
   *
   * @param runId The run.
   * @param source Where they came from.
   * @param learnings The learnings.
   */
  setLearnings(runId: string, source: string, learnings: Learning[]): void {
    const { db, redactor } = this.#store;
    transaction(db, () => {
      db.prepare(`DELETE FROM learnings WHERE run_id = ? AND source = ?`).run(runId, source);
      const insert = db.prepare(
        `INSERT INTO learnings (run_id, source, text, technique, applicability, tags, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      for (const raw of learnings) {
        const learning = redactor.redactValue(raw);
        insert.run(
          runId,
          source,
          learning.text,
          learning.technique ?? "",
          learning.applicability ?? "",
          (learning.tags ?? []).join(" "),
          now,
        );
      }
    });
  }

  /**
   * Full-text search over every run's learnings, best match first; the query
   * may be FTS5 syntax or free text (an issue body), searched word by word.
   *
   * @param query The query.
   * @param options At most `limit` results (default 10).
   * @returns The learnings found, with their run and rank.
   */
  searchLearnings(query: string, options: { limit?: number } = {}): FoundLearning[] {
    const limit = options.limit ?? 10;
    const words = ftsQuery(query);
    // Free text (an issue body) often holds quotes, parentheses or colons: when it is
    // no valid FTS5 query, or finds nothing as one (implicit AND), search its words.
    if (/["*:^()]| OR | AND | NOT /.test(query) && query !== words) {
      try {
        const found = this.#match(query, limit);
        if (found.length > 0) return found;
      } catch {
        // Not FTS5 syntax after all.
      }
    }
    return words ? this.#match(words, limit) : [];
  }

  /**
   * A run's learnings, oldest first.
   *
   * @param runId The run.
   * @returns The learnings.
   */
  learningsOf(runId: string): Learning[] {
    return this.#store.db.prepare(
      `SELECT text, technique, applicability, tags FROM learnings WHERE run_id = ? ORDER BY id`,
    ).all(runId).map(toLearning);
  }

  #match(match: string, limit: number): FoundLearning[] {
    return this.#store.db.prepare(
      `SELECT l.id, l.run_id, l.source, l.text, l.technique, l.applicability, l.tags, r.agent,
         bm25(learnings_fts) AS rank
       FROM learnings_fts JOIN learnings l ON l.id = learnings_fts.rowid JOIN runs r ON r.id = l.run_id
       WHERE learnings_fts MATCH ? ORDER BY rank LIMIT ?`,
    ).all(match, limit).map((row) => ({
      id: Number(row.id),
      runId: String(row.run_id),
      agent: String(row.agent),
      source: String(row.source),
      ...toLearning(row),
      rank: Number(row.rank),
    }));
  }
}

function toLearning(row: Record<string, SQLInputValue>): Learning {
  return {
    text: String(row.text),
    technique: String(row.technique) || undefined,
    applicability: String(row.applicability) || undefined,
    tags: String(row.tags) ? String(row.tags).split(" ") : [],
  };
}
