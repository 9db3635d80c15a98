/**
 * The local embedder: hashed word and character-trigram features, no model
 * and no network. Its similarity is lexical: texts that share words, word
 * stems or word pieces ("timezones" and "time zone", "backing up" and "back
 * up") come out close; synonyms with no letters in common ("flaky" and
 * "intermittent") do not. It is no semantic model.
 *
 * @module
 */

import { type Embedder, type EmbeddingPurpose, normalize } from "./embedder.ts";

const STOP_WORDS = new Set(
  ("a an the and or for with that this these those from into onto your you are was were be been " +
    "being has have had not but all any can will should would could its it our out use using " +
    "used add make when then than what which who how why of to in on at by is as we us my me so " +
    "if do does did done too very also just only there here them they their it's")
    .split(" "),
);

/** Options of {@linkcode LexicalEmbedder}. */
export interface LexicalOptions {
  /** Vector size. @default 512 */
  dimensions?: number;
  /** See {@linkcode Embedder.minSimilarity}. @default 0.15 */
  minSimilarity?: number;
  /** See {@linkcode Embedder.duplicateSimilarity}. @default 0.9 */
  duplicateSimilarity?: number;
}

/**
 * Hashed bag-of-features vectors: each word's stem (weight 1) and the
 * character trigrams of the stem (together weight 1), each hashed with a sign
 * into a fixed-size vector, which is then scaled to unit length.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cosine } from "./embedder.ts";
 * import { LexicalEmbedder } from "./lexical.ts";
 *
 * const embedder = new LexicalEmbedder();
 * const [a, b, c] = embedder.embed(
 *   ["Pin the timezone in tests", "tests break across time zones", "Resize images on the client"],
 *   "document",
 * );
 * assert.ok(cosine(a, b) > cosine(a, c));
 * ```
 */
export class LexicalEmbedder implements Embedder {
  /** `lexical-v1-<dimensions>`. */
  readonly id: string;
  /** Always `lexical`. */
  readonly kind = "lexical" as const;
  /** See {@linkcode Embedder.minSimilarity}. */
  readonly minSimilarity: number;
  /** See {@linkcode Embedder.duplicateSimilarity}. */
  readonly duplicateSimilarity: number;
  #dimensions: number;

  /**
   * A lexical embedder.
   *
   * @param options Size and thresholds.
   */
  constructor(options: LexicalOptions = {}) {
    this.#dimensions = options.dimensions ?? 512;
    this.id = `lexical-v1-${this.#dimensions}`;
    this.minSimilarity = options.minSimilarity ?? 0.15;
    this.duplicateSimilarity = options.duplicateSimilarity ?? 0.9;
  }

  /**
   * Embed texts.
   *
   * @param texts The texts.
   * @param _purpose Makes no difference here.
   * @returns One unit vector per text.
   */
  embed(texts: readonly string[], _purpose?: EmbeddingPurpose): Float32Array[] {
    return texts.map((text) => this.#embedOne(text));
  }

  #embedOne(text: string): Float32Array {
    const vector = new Float32Array(this.#dimensions);
    const add = (feature: string, weight: number) => {
      const hash = fnv1a(feature);
      vector[hash % this.#dimensions] += hash & 0x80000000 ? -weight : weight;
    };
    for (const word of lexicalWords(text)) {
      const stem = stemOf(word);
      add(`w:${stem}`, 1);
      const padded = `<${stem}>`;
      const count = padded.length - 2;
      for (let start = 0; start < count; start++) {
        add(`c:${padded.slice(start, start + 3)}`, 1 / Math.sqrt(count));
      }
    }
    return normalize(vector);
  }
}

/**
 * The words of a text that carry content: lower case, split at anything
 * that is no letter or digit, without stop words and one-letter words.
 *
 * @param text Any text.
 * @returns The words, in order.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { lexicalWords } from "./lexical.ts";
 *
 * assert.deepEqual(lexicalWords("Use AbortSignal.timeout for every call"), [
 *   "abortsignal", "timeout", "every", "call",
 * ]);
 * ```
 */
export function lexicalWords(text: string): string[] {
  const words = text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
  return words.filter((word) => word.length > 1 && !STOP_WORDS.has(word));
}

/** A light English stem: common inflections off, a doubled last letter single. */
function stemOf(word: string): string {
  if (word.length <= 4 || /\d/.test(word)) return word;
  const stem = word
    .replace(/ies$/, "y")
    .replace(/(ss|sh|ch|x|z)es$/, "$1")
    .replace(/([^siu])s$/, "$1")
    .replace(/(?:ing|ed)$/, "")
    .replace(/([^aeiouls])\1$/, "$1");
  return stem.length >= 3 ? stem : word;
}

/** 32-bit FNV-1a over UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}
