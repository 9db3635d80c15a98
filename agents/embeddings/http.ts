/**
 * Embeddings from a server: any endpoint that speaks the OpenAI embeddings
 * API (`POST {model, input}` answered by `{data: [{index, embedding}]}`),
 * which OpenAI, Voyage AI, Ollama, LM Studio, vLLM and llama.cpp's server
 * all do. The API key is read from an environment variable when a request is
 * made; it is sent in the Authorization header only, never stored, logged or
 * put into an error.
 *
 * @module
 */

import { REDACTED, redactorOfProcess } from "../support/redact.ts";
import { postSync } from "./_sync_fetch.ts";
import { type Embedder, type EmbeddingPurpose, normalize } from "./embedder.ts";

/** Options of {@linkcode HttpEmbedder}. */
export interface HttpEmbedderOptions {
  /** Names the provider in the vector space id (`openai`, `voyage`, `http`). */
  provider: string;
  /** The embeddings endpoint. */
  url: string;
  /** The model asked for. */
  model: string;
  /** Environment variable holding the API key; none sends no Authorization header. */
  apiKeyEnv?: string;
  /** Asked-for vector size, for models that can shorten theirs (sent as `dimensions`). */
  dimensions?: number;
  /** Send `input_type` (`document` or `query`), as Voyage AI takes it. @default false */
  inputType?: boolean;
  /** See {@linkcode Embedder.minSimilarity}. @default 0.3 */
  minSimilarity?: number;
  /** See {@linkcode Embedder.duplicateSimilarity}. @default 0.92 */
  duplicateSimilarity?: number;
  /** Time limit of one request in seconds. @default 30 */
  timeoutSeconds?: number;
  /** Texts per request at most. @default 64 */
  batchSize?: number;
  /** Where the API key is read from. @default Deno.env */
  env?: { get(name: string): string | undefined };
}

/**
 * A semantic embedder backed by an OpenAI-compatible embeddings endpoint.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { HttpEmbedder } from "./http.ts";
 *
 * const embedder = new HttpEmbedder({
 *   provider: "openai",
 *   url: "https://api.openai.com/v1/embeddings",
 *   model: "text-embedding-3-small",
 *   apiKeyEnv: "OPENAI_API_KEY",
 * });
 * assert.equal(embedder.id, "openai:text-embedding-3-small");
 * ```
 */
export class HttpEmbedder implements Embedder {
  /** `<provider>:<model>`, with `:<dimensions>` when a size is asked for. */
  readonly id: string;
  /** Always `semantic`. */
  readonly kind = "semantic" as const;
  /** See {@linkcode Embedder.minSimilarity}. */
  readonly minSimilarity: number;
  /** See {@linkcode Embedder.duplicateSimilarity}. */
  readonly duplicateSimilarity: number;
  #options: HttpEmbedderOptions;

  /**
   * An embedder for one endpoint and model.
   *
   * @param options Endpoint, model, key variable and limits.
   */
  constructor(options: HttpEmbedderOptions) {
    this.#options = options;
    this.id = `${options.provider}:${options.model}${
      options.dimensions ? `:${options.dimensions}` : ""
    }`;
    this.minSimilarity = options.minSimilarity ?? 0.3;
    this.duplicateSimilarity = options.duplicateSimilarity ?? 0.92;
  }

  /**
   * Embed texts, in requests of at most `batchSize` texts.
   *
   * @param texts The texts.
   * @param purpose `document` or `query`.
   * @returns One unit vector per text.
   * @throws When the key is missing, the endpoint cannot be reached or answers with an error.
   */
  embed(texts: readonly string[], purpose: EmbeddingPurpose): Float32Array[] {
    const batchSize = this.#options.batchSize ?? 64;
    const vectors: Float32Array[] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      vectors.push(...this.#request(texts.slice(start, start + batchSize), purpose));
    }
    return vectors;
  }

  #request(texts: readonly string[], purpose: EmbeddingPurpose): Float32Array[] {
    const { url, model, dimensions, inputType } = this.#options;
    const key = this.#apiKey();
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (key) headers.authorization = `Bearer ${key}`;
    const body = JSON.stringify({
      model,
      // An empty input is refused by some servers; a space embeds as "nothing".
      // The texts are an output too: learnings and queries go to the provider redacted.
      input: texts.map((text) => redactorOfProcess().redact(text).trim() || " "),
      ...(dimensions ? { dimensions } : {}),
      ...(inputType ? { input_type: purpose } : {}),
    });
    const timeoutMs = (this.#options.timeoutSeconds ?? 30) * 1000;
    const response = postSync(url, { headers, body, timeoutMs });
    const hide = (text: string) =>
      redactorOfProcess().redact(key ? text.replaceAll(key, REDACTED) : text);
    if (response.status === -1) {
      throw new Error(`Embeddings endpoint ${url} did not answer: ${hide(response.text)}`);
    }
    if (response.status < 200 || response.status > 299) {
      const detail = hide(response.text).replace(/\s+/g, " ").trim().slice(0, 200);
      throw new Error(`Embeddings endpoint ${url} answered ${response.status}: ${detail}`);
    }
    return parseEmbeddings(response.text, texts.length, url);
  }

  #apiKey(): string | undefined {
    const { apiKeyEnv } = this.#options;
    if (!apiKeyEnv) return undefined;
    const key = (this.#options.env ?? Deno.env).get(apiKeyEnv);
    // Whatever the variable's name, its value is a secret from now on.
    if (key) redactorOfProcess().protect(key);
    if (!key) {
      throw new Error(
        `The embeddings API key variable ${apiKeyEnv} is not set (learnings.embeddings.apiKeyEnv)`,
      );
    }
    return key;
  }
}

/**
 * Read an OpenAI-style embeddings answer: `data[i].embedding` in `index` order.
 *
 * @param text The answer's body.
 * @param count How many vectors were asked for.
 * @param url The endpoint, for errors.
 * @returns Unit vectors, in the order of the input.
 * @throws When the answer is no such list, or has another count or mixed sizes.
 */
export function parseEmbeddings(text: string, count: number, url: string): Float32Array[] {
  let data: unknown;
  try {
    data = (JSON.parse(text) as { data?: unknown }).data;
  } catch {
    data = undefined;
  }
  if (!Array.isArray(data) || data.length !== count) {
    throw new Error(
      `Embeddings endpoint ${url} answered no list of ${count} embeddings under "data"`,
    );
  }
  const entries = data.map((entry, position) => ({
    index: typeof entry?.index === "number" ? entry.index : position,
    embedding: entry?.embedding,
  })).sort((a, b) => a.index - b.index);
  const size = Array.isArray(entries[0]?.embedding) ? entries[0].embedding.length : 0;
  return entries.map(({ embedding }) => {
    if (
      !Array.isArray(embedding) || embedding.length !== size || size === 0 ||
      !embedding.every((value) => typeof value === "number" && Number.isFinite(value))
    ) {
      throw new Error(`Embeddings endpoint ${url} answered embeddings that are no number lists`);
    }
    return normalize(Float32Array.from(embedding));
  });
}
