/**
 * Pricing tokens before Claude Code prices them. Claude Code gives a
 * session's cost only in its `result` message; before that its assistant
 * messages carry token counts. A result's `modelUsage` gives a cost basis
 * per model: its cost divided by its tokens, weighted as Anthropic's list
 * prices relate them, is the price of one input token. With it, the tokens
 * of a session still running can be priced; without it they cannot, and
 * nothing here guesses a price.
 *
 * Used by the live line (`iterator/terminal/live_cost.ts`) and by the Stop
 * hook's budget bypass (`loop/session.ts`).
 *
 * @module
 */

import type { AgentMessage, TokenUsage } from "./iteration.ts";

/**
 * Token kinds relative to an uncached input token, as Anthropic's list prices
 * relate them (output 5×, cache write 1.25×, cache read 0.1×).
 */
const WEIGHTS: TokenUsage = { input: 1, output: 5, cacheRead: 0.1, cacheCreation: 1.25 };

/**
 * Dollars per input-equivalent token, by model, learned from results.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TokenPricing } from "./token_pricing.ts";
 * const pricing = new TokenPricing();
 * const tokens = { input: 1000, output: 0, cacheRead: 0, cacheCreation: 0 };
 * assert.equal(pricing.price("m", tokens), undefined);
 * pricing.learn({ m: { inputTokens: 1000, outputTokens: 100, cacheReadInputTokens: 0,
 *   cacheCreationInputTokens: 0, costUSD: 0.015, costBasis: "list" } });
 * assert.ok(Math.abs(pricing.price("m", tokens)! - 0.01) < 1e-12);
 * ```
 */
export class TokenPricing {
  #rates = new Map<string, number>();

  /**
   * Learn the models' prices from a result's `modelUsage`.
   *
   * @param modelUsage The result's field (anything else is ignored).
   */
  learn(modelUsage: unknown): void {
    if (!isRecord(modelUsage)) return;
    for (const [model, usage] of Object.entries(modelUsage)) {
      if (!isRecord(usage) || usage.costBasis === "unknown") continue;
      const tokens: TokenUsage = {
        input: numberOr(usage.inputTokens),
        output: numberOr(usage.outputTokens),
        cacheRead: numberOr(usage.cacheReadInputTokens),
        cacheCreation: numberOr(usage.cacheCreationInputTokens),
      };
      const cost = numberOr(usage.costUSD);
      if (cost > 0 && weighted(tokens) > 0) this.#rates.set(model, cost / weighted(tokens));
    }
  }

  /**
   * Learn the prices the results among some messages give.
   *
   * @param messages A session's messages.
   */
  learnFrom(messages: readonly AgentMessage[]): void {
    for (const message of messages) {
      if (message.type === "result") this.learn(message.modelUsage);
    }
  }

  /**
   * The price of some tokens of a model.
   *
   * @param model The model.
   * @param tokens The tokens.
   * @returns Dollars, or undefined when no result priced that model yet.
   */
  price(model: string, tokens: TokenUsage): number | undefined {
    const rate = this.#rates.get(model);
    return rate === undefined ? undefined : weighted(tokens) * rate;
  }
}

/**
 * The cost of the assistant messages no result has priced yet: those after
 * the last `result` of each session, each message counted once.
 *
 * @param messages A session's messages, in order.
 * @param pricing The prices learned so far (results among the messages teach it too).
 * @returns Dollars, or undefined when some tokens have no price.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TokenPricing, unpricedCost } from "./token_pricing.ts";
 * const usage = { input_tokens: 1000, output_tokens: 0 };
 * const pending = { type: "assistant", message: { id: "m2", model: "m", usage } };
 * assert.equal(unpricedCost([pending], new TokenPricing()), undefined);
 * const result = { type: "result", total_cost_usd: 0.01, modelUsage: { m: { inputTokens: 1000,
 *   outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0, costUSD: 0.01 } } };
 * assert.ok(Math.abs(unpricedCost([result, pending], new TokenPricing())! - 0.01) < 1e-12);
 * ```
 */
export function unpricedCost(
  messages: readonly AgentMessage[],
  pricing: TokenPricing,
): number | undefined {
  const pending = new Map<string, { model: string; tokens: TokenUsage }>();
  for (const message of messages) {
    if (message.type === "result") {
      pricing.learn(message.modelUsage);
      pending.clear();
    } else if (message.type === "assistant" && isRecord(message.message)) {
      const inner = message.message;
      if (!isRecord(inner.usage)) continue;
      const id = typeof inner.id === "string" ? inner.id : `#${pending.size}`;
      const model = typeof inner.model === "string" ? inner.model : "";
      pending.set(id, { model, tokens: tokensOf(inner.usage) });
    }
  }
  let total = 0;
  for (const { model, tokens } of pending.values()) {
    const price = pricing.price(model, tokens);
    if (price === undefined) return undefined;
    total += price;
  }
  return total;
}

/**
 * The token counts of an assistant message's `usage`.
 *
 * @param usage The API's usage object.
 * @returns The counts (missing ones are 0).
 */
export function tokensOf(usage: Record<string, unknown>): TokenUsage {
  return {
    input: numberOr(usage.input_tokens),
    output: numberOr(usage.output_tokens),
    cacheRead: numberOr(usage.cache_read_input_tokens),
    cacheCreation: numberOr(usage.cache_creation_input_tokens),
  };
}

function weighted(tokens: TokenUsage): number {
  return tokens.input * WEIGHTS.input + tokens.output * WEIGHTS.output +
    tokens.cacheRead * WEIGHTS.cacheRead + tokens.cacheCreation * WEIGHTS.cacheCreation;
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
