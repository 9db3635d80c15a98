/**
 * Learning vectors: one per learning and embedder, in an ordinary table
 * (float32 blobs, sqlite-vec's own format), compared by sqlite-vec's
 * `vec_distance_cosine` in a full scan.
 *
 * Why no `vec0` index: a `vec0` table has one fixed size and needs the
 * extension for every write and delete, so a store could no longer be opened
 * where the extension does not load, and two embedders could not share it.
 * `vec0` in sqlite-vec 0.1 scans all rows too, so the plain table loses no
 * speed; `deno task recall` measures the scan (a few ms per thousand
 * learnings).
 *
 * Without an embedder, or where sqlite-vec does not load, nothing here is
 * used and the learnings are searched by keyword alone; the note says why.
 *
 * @module
 */

import { getLoadablePath } from "sqlite-vec";
import type { Embedder, EmbeddingPurpose } from "../embeddings/embedder.ts";
import { firstLine } from "../support/errors.ts";
import { type StoreDatabase, transaction } from "./_database.ts";

/** Options of {@linkcode LearningVectors}. */
export interface VectorOptions {
  /** Turns learnings and queries into vectors; none: keyword search only. */
  embedder?: Embedder;
  /** The sqlite-vec loadable; by default the one its npm package ships for this platform. */
  extensionPath?: string;
  /** Told, once each, why vectors are not used (the extension, the provider). */
  onNote?: (note: string) => void;
}

/** A learning the vector search found, with its cosine similarity to the query. */
export interface VectorMatch {
  /** The learning's row id. */
  id: number;
  /** Cosine similarity, from -1 to 1. */
  similarity: number;
}

/** Learnings embedded at most per {@linkcode LearningVectors.backfill}. */
const BACKFILL_LIMIT = 2000;

/** The `learning_vectors` table of an open store, and the embedder that fills it. */
export class LearningVectors {
  #store: StoreDatabase;
  #options: VectorOptions;
  #loaded: boolean | undefined;
  #notes = new Set<string>();

  /**
   * Work on the vectors of an open store.
   *
   * @param store The connection (opened with `allowExtension`) and redactor.
   * @param options The embedder, the extension and where notes go.
   */
  constructor(store: StoreDatabase, options: VectorOptions = {}) {
    this.#store = store;
    this.#options = options;
  }

  /** The embedder, when vectors are in use: one is set and sqlite-vec loaded. */
  get embedder(): Embedder | undefined {
    const { embedder } = this.#options;
    if (!embedder) return undefined;
    this.#loaded ??= this.#load();
    return this.#loaded ? embedder : undefined;
  }

  #load(): boolean {
    try {
      this.#store.db.loadExtension(this.#options.extensionPath ?? getLoadablePath());
      return true;
    } catch (error) {
      this.#note(
        `learnings: sqlite-vec did not load (${
          firstLine(error)
        }): searching by keyword only, and deduplicating by text only`,
      );
      return false;
    }
  }

  /**
   * Embed texts; a failure is a note, not an error.
   *
   * @param texts The texts.
   * @param purpose `document` (a learning) or `query`.
   * @returns The vectors, or undefined when vectors are not in use or the embedder failed.
   */
  embed(texts: string[], purpose: EmbeddingPurpose): Float32Array[] | undefined {
    const embedder = this.embedder;
    if (!embedder || texts.length === 0) return undefined;
    try {
      return embedder.embed(texts, purpose);
    } catch (error) {
      this.#note(
        `learnings: embeddings from ${embedder.id} failed (${firstLine(error)}): ${
          purpose === "query" ? "searching by keyword only" : "stored without vectors for now"
        }`,
      );
      return undefined;
    }
  }

  /**
   * Store a learning's vector (replacing the embedder's earlier one); a zero
   * vector (a text without words) is not stored.
   *
   * @param learningId The learning.
   * @param vector Its unit vector.
   */
  put(learningId: number, vector: Float32Array): void {
    const embedder = this.embedder;
    if (!embedder || isZero(vector)) return;
    this.#store.db.prepare(
      `INSERT OR REPLACE INTO learning_vectors (model, learning_id, vector) VALUES (?, ?, ?)`,
    ).run(embedder.id, learningId, blob(vector));
  }

  /**
   * The learnings most similar to a vector, most similar first.
   *
   * @param vector A unit vector from the same embedder.
   * @param options At most `limit`, at least `minSimilarity`, leaving out
   *   learnings no run but `excludeRun` saw.
   * @returns The matches.
   */
  nearest(
    vector: Float32Array,
    options: { limit: number; minSimilarity: number; excludeRun?: string },
  ): VectorMatch[] {
    const embedder = this.embedder;
    if (!embedder || isZero(vector)) return [];
    return this.#store.db.prepare(
      `SELECT v.learning_id AS id, 1 - vec_distance_cosine(v.vector, :query) AS similarity
       FROM learning_vectors v
       WHERE v.model = :model AND length(v.vector) = :bytes AND EXISTS (
         SELECT 1 FROM learning_sightings s
         WHERE s.learning_id = v.learning_id AND (:exclude IS NULL OR s.run_id != :exclude))
       ORDER BY similarity DESC, v.learning_id LIMIT :limit`,
    ).all({
      query: blob(vector),
      model: embedder.id,
      bytes: vector.byteLength,
      exclude: options.excludeRun ?? null,
      limit: options.limit,
    }).map((row) => ({ id: Number(row.id), similarity: Number(row.similarity) }))
      .filter((match) => match.similarity >= options.minSimilarity);
  }

  /**
   * Embed the learnings that have no vector of this embedder yet (stored
   * before vectors were on, or under another embedder), up to 2000 a call.
   * A failure is a note: those learnings are found by keyword until the next try.
   */
  backfill(): void {
    const embedder = this.embedder;
    if (!embedder) return;
    const { db } = this.#store;
    const missing = db.prepare(
      `SELECT l.id, l.text FROM learnings l WHERE NOT EXISTS (
         SELECT 1 FROM learning_vectors v WHERE v.model = ? AND v.learning_id = l.id)
       ORDER BY l.id LIMIT ?`,
    ).all(embedder.id, BACKFILL_LIMIT);
    if (missing.length === 0) return;
    const vectors = this.embed(missing.map((row) => String(row.text)), "document");
    if (!vectors) return;
    try {
      transaction(db, () => {
        missing.forEach((row, index) => this.put(Number(row.id), vectors[index]));
      });
    } catch (error) {
      this.#note(`learnings: could not store vectors (${firstLine(error)})`);
    }
  }

  #note(note: string): void {
    if (this.#notes.has(note)) return;
    this.#notes.add(note);
    this.#options.onNote?.(note);
  }
}

/** A float32 vector as the blob sqlite-vec reads. */
function blob(vector: Float32Array): Uint8Array {
  return new Uint8Array(vector.buffer, vector.byteOffset, vector.byteLength);
}

function isZero(vector: Float32Array): boolean {
  return vector.every((value) => value === 0);
}
