/**
 * Embedders for the run history's learnings: the local lexical one (no
 * network, no model) and one for any OpenAI-compatible embeddings endpoint,
 * chosen by `learnings.embeddings` in agent.json.
 *
 * @module
 */

import type { EmbeddingsConfig } from "../definition/definition_types.ts";
import { HttpEmbedder } from "./http.ts";
import { LexicalEmbedder } from "./lexical.ts";
import type { Embedder } from "./embedder.ts";
import { redactorOfProcess } from "../support/redact.ts";

export { cosine, type Embedder, type EmbeddingPurpose, normalize } from "./embedder.ts";
export { LexicalEmbedder, type LexicalOptions, lexicalWords } from "./lexical.ts";
export { HttpEmbedder, type HttpEmbedderOptions, parseEmbeddings } from "./http.ts";

/** The endpoint, model and key variable each hosted provider has by default. */
const PRESETS = {
  openai: {
    url: "https://api.openai.com/v1/embeddings",
    model: "text-embedding-3-small",
    apiKeyEnv: "OPENAI_API_KEY",
    inputType: false,
  },
  voyage: {
    url: "https://api.voyageai.com/v1/embeddings",
    model: "voyage-3.5-lite",
    apiKeyEnv: "VOYAGE_API_KEY",
    inputType: true,
  },
  http: { url: undefined, model: undefined, apiKeyEnv: undefined, inputType: false },
} as const;

/**
 * The embedder `learnings.embeddings` asks for, or none (keyword search only).
 *
 * @param config The agent's `learnings.embeddings`.
 * @returns The embedder, or undefined without a config.
 * @throws When an `http` provider lacks its `url` or `model` (agent.json validation says so first).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createEmbedder } from "./mod.ts";
 *
 * assert.equal(createEmbedder(undefined), undefined);
 * assert.equal(createEmbedder({ provider: "lexical", timeoutSeconds: 30 })?.id, "lexical-v1-512");
 * assert.equal(
 *   createEmbedder({ provider: "voyage", timeoutSeconds: 30 })?.id,
 *   "voyage:voyage-3.5-lite",
 * );
 * ```
 */
export function createEmbedder(config: EmbeddingsConfig | undefined): Embedder | undefined {
  if (!config) return undefined;
  const thresholds = {
    minSimilarity: config.minSimilarity,
    duplicateSimilarity: config.duplicateSimilarity,
  };
  if (config.provider === "lexical") {
    return new LexicalEmbedder({ dimensions: config.dimensions, ...thresholds });
  }
  const preset = PRESETS[config.provider];
  const url = config.url ?? preset.url;
  const model = config.model ?? preset.model;
  if (!url || !model) {
    throw new Error(`learnings.embeddings: provider "${config.provider}" needs "url" and "model"`);
  }
  const apiKeyEnv = config.apiKeyEnv ?? preset.apiKeyEnv;
  // The key is a secret whatever its variable is called: redacted from the start of the run.
  const key = apiKeyEnv ? envValue(apiKeyEnv) : undefined;
  if (key) redactorOfProcess().protect(key);
  return new HttpEmbedder({
    provider: config.provider,
    url,
    model,
    apiKeyEnv,
    dimensions: config.dimensions,
    inputType: preset.inputType,
    timeoutSeconds: config.timeoutSeconds,
    ...thresholds,
  });
}

function envValue(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
}
