/**
 * What the run history asks of an embedder: texts in, unit vectors out, and
 * the two similarities that make a vector match count.
 *
 * @module
 */

/** What a text is embedded for; some providers embed queries and documents differently. */
export type EmbeddingPurpose = "document" | "query";

/**
 * Turns texts into vectors whose cosine similarity says how alike the texts
 * are. Calls are synchronous, so the run history (and `{uv-learnings}`) keep
 * their synchronous API; an embedder that asks a server blocks meanwhile.
 */
export interface Embedder {
  /**
   * Names the vector space (provider, model and size): vectors stored under
   * another id are never compared with this embedder's.
   */
  readonly id: string;
  /**
   * `semantic` when a model's similarity follows meaning; `lexical` when it
   * follows shared words and word pieces only.
   */
  readonly kind: "lexical" | "semantic";
  /** A learning found by its vector alone must be at least this similar to the query. */
  readonly minSimilarity: number;
  /** A new learning at least this similar to a stored one is the same learning, seen again. */
  readonly duplicateSimilarity: number;
  /**
   * Embed texts.
   *
   * @param texts The texts.
   * @param purpose Stored learnings are `document`s, search texts `query`s.
   * @returns One vector per text, of unit length (all zeros for a text with no words).
   * @throws When the provider cannot be reached or answers with an error.
   */
  embed(texts: readonly string[], purpose: EmbeddingPurpose): Float32Array[];
}

/**
 * Scale a vector to unit length in place (a zero vector stays zero).
 *
 * @param vector The vector.
 * @returns The same vector.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { normalize } from "./embedder.ts";
 *
 * assert.deepEqual([...normalize(new Float32Array([3, 4]))], [0.6000000238418579, 0.800000011920929]);
 * ```
 */
export function normalize(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const value of vector) sum += value * value;
  const norm = Math.sqrt(sum);
  if (norm > 0) { for (let index = 0; index < vector.length; index++) vector[index] /= norm; }
  return vector;
}

/**
 * Cosine similarity of two unit vectors (their dot product).
 *
 * @param a A unit vector.
 * @param b A unit vector of the same size.
 * @returns From -1 to 1; 0 when either is all zeros.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cosine } from "./embedder.ts";
 *
 * assert.equal(cosine(new Float32Array([1, 0]), new Float32Array([0, 1])), 0);
 * ```
 */
export function cosine(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let index = 0; index < a.length; index++) sum += a[index] * b[index];
  return sum;
}
