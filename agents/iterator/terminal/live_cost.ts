/**
 * The run's cost while an iteration runs. Claude Code prices a session only
 * in its `result` message; before that its assistant messages carry token
 * counts. Those tokens are priced only when an earlier result gave a cost
 * basis for the same model (its `modelUsage` with a known price table);
 * otherwise the line shows them as tokens, never as `$0.0000`.
 *
 * @module
 */

import type { TokenUsage } from "../../record/iteration.ts";
import { usd } from "../../support/format.ts";
import type { AgentMessage } from "../../record/iteration.ts";
import { TokenPricing, tokensOf } from "../../record/token_pricing.ts";

/** What the live line can say about cost. */
export interface LiveCostView {
  /** Dollars known or estimated; undefined before anything is known. */
  usd?: number;
  /** Whether `usd` includes an estimate from tokens. */
  estimated: boolean;
  /** Tokens of sessions still running that no cost basis prices. */
  unpricedTokens: number;
}

/**
 * Follows the cost of a run from the agent's messages and the finished
 * iterations.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { LiveCost } from "./live_cost.ts";
 * const cost = new LiveCost();
 * const usage = { input_tokens: 1000, output_tokens: 0 };
 * cost.add({ type: "assistant", session_id: "s1", message: { id: "m1", model: "m", usage } });
 * assert.equal(cost.text(), "1.0k tokens");
 * cost.add({ type: "result", session_id: "s1", total_cost_usd: 0.01,
 *   modelUsage: { m: { inputTokens: 1000, outputTokens: 100, cacheReadInputTokens: 0,
 *     cacheCreationInputTokens: 0, costUSD: 0.01, costBasis: "list" } } });
 * cost.finishIteration(0.01);
 * cost.add({ type: "assistant", session_id: "s2", message: { id: "m2", model: "m", usage } });
 * assert.equal(cost.text(), "~$0.0167");
 * ```
 */
export class LiveCost {
  #runUsd = 0;
  #iterationUsd = 0;
  #known = false;
  /** Usage of assistant messages not yet covered by a result, by message id. */
  #pending = new Map<string, { session: string; model: string; tokens: TokenUsage }>();
  /** The models' prices, learned from results. */
  #pricing = new TokenPricing();

  /**
   * Take an agent message into account: an assistant message's usage, a
   * result's cost and cost basis.
   *
   * @param message A backend message.
   */
  add(message: AgentMessage): void {
    const session = typeof message.session_id === "string" ? message.session_id : "";
    if (message.type === "assistant" && isRecord(message.message)) {
      const inner = message.message;
      if (!isRecord(inner.usage)) return;
      const id = typeof inner.id === "string" ? inner.id : `${session}:${this.#pending.size}`;
      const model = typeof inner.model === "string" ? inner.model : "";
      this.#pending.set(id, { session, model, tokens: tokensOf(inner.usage) });
      this.#known = true;
    } else if (message.type === "result") {
      this.#iterationUsd += numberOr(message.total_cost_usd);
      this.#known = true;
      this.#pricing.learn(message.modelUsage);
      for (const [id, entry] of this.#pending) {
        if (entry.session === session) this.#pending.delete(id);
      }
    }
  }

  /**
   * An iteration ended: its summary's cost replaces what its messages said.
   *
   * @param costUsd The iteration's cost.
   */
  finishIteration(costUsd: number): void {
    this.#runUsd += costUsd;
    this.#iterationUsd = 0;
    this.#pending.clear();
    this.#known = true;
  }

  /**
   * The cost so far, with the estimate of what is running.
   *
   * @returns Dollars (when any are known), whether estimated, unpriced tokens.
   */
  view(): LiveCostView {
    let estimate = 0;
    let unpriced = 0;
    for (const { model, tokens } of this.#pending.values()) {
      const price = this.#pricing.price(model, tokens);
      if (price === undefined) unpriced += total(tokens);
      else estimate += price;
    }
    const known = this.#runUsd + this.#iterationUsd;
    const hasUsd = known > 0 || estimate > 0 || (this.#known && unpriced === 0);
    return {
      usd: hasUsd ? known + estimate : undefined,
      estimated: estimate > 0,
      unpricedTokens: unpriced,
    };
  }

  /**
   * The cost as the live line shows it: `$0.0123`, `~$0.0150` (with an
   * estimate), `$0.0123 + 4.1k tokens`, `4.1k tokens`, or empty before
   * anything is known.
   *
   * @returns The text.
   */
  text(): string {
    const view = this.view();
    const money = view.usd === undefined ? "" : `${view.estimated ? "~" : ""}${usd(view.usd)}`;
    if (view.unpricedTokens === 0) return money;
    const tokens = `${count(view.unpricedTokens)} tokens`;
    return money === "" || view.usd === 0 ? tokens : `${money} + ${tokens}`;
  }
}

/**
 * A token count for people: `850`, `12.3k`, `1.2M`.
 *
 * @param tokens The count.
 * @returns The text.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { count } from "./live_cost.ts";
 * assert.equal(count(850), "850");
 * assert.equal(count(12_345), "12.3k");
 * assert.equal(count(1_234_567), "1.2M");
 * ```
 */
export function count(tokens: number): string {
  if (tokens < 1000) return String(Math.round(tokens));
  if (tokens < 999_950) return `${(tokens / 1000).toFixed(1)}k`;
  return `${(tokens / 1_000_000).toFixed(1)}M`;
}

function total(tokens: TokenUsage): number {
  return tokens.input + tokens.output + tokens.cacheRead + tokens.cacheCreation;
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
