/**
 * The `iterate` handler: complete when the target number of iterations ran.
 *
 * @module
 */

import { BaseHandler, type HandlerContext } from "./base_handler.ts";
import type { PromptResolver } from "../prompts/resolver.ts";
import { isSeedShape, seedContext } from "./seed_shapes.ts";
import type { CompletionCriteria, CompletionHandler } from "./handler_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";

/**
 * Completes when the iteration it is given reaches the target; no hidden
 * counter, so it cannot lag a step behind.
 *
 * Built in the design's shape, `new IterateCompletionHandler({ maxIterations,
 * promptResolver })`, it also counts as the design does: a continuation
 * prompt for iteration N means N iterations ran once its summary is in.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   emptySummary,
 *   IterateCompletionHandler,
 *   parseDefinition,
 *   PromptResolver,
 * } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
 *   { displayPath: ".agent/polish/agent.json" },
 * );
 * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
 * const context = { definition, args: {}, resolver, maxIterations: 3 };
 * const handler = new IterateCompletionHandler(context, 3);
 * assert.equal(handler.type, "iterate");
 * assert.equal(await handler.isComplete(emptySummary(2)), false);
 * assert.equal(await handler.isComplete(emptySummary(3)), true);
 * ```
 */
export class IterateCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "iterate". */
  readonly type = "iterate" as const;
  #target: number;
  /** The iteration of the last continuation prompt, counted only in the design's shape. */
  #prompted: number | undefined;

  /**
   * Create the handler in the design's shape: it completes after
   * `maxIterations` iterations.
   *
   * @param options The target and the prompt resolver.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary, IterateCompletionHandler } from "@finishline/agents";
   * import { mockPromptResolver } from "@finishline/agents/testing";
   *
   * const handler = new IterateCompletionHandler({
   *   maxIterations: 2,
   *   promptResolver: mockPromptResolver,
   * });
   * await handler.buildContinuationPrompt(2, []);
   * assert.equal(await handler.isComplete(emptySummary(1)), true);
   * ```
   */
  constructor(options: {
    /** How many iterations make the run complete. */
    maxIterations: number;
    /** Resolves `initial_iterate` and `continuation_iterate`. */
    promptResolver: Pick<PromptResolver, "resolve">;
  });
  /**
   * Create the handler.
   *
   * @param context Definition, arguments, resolver and cap.
   * @param target How many iterations make the run complete.
   */
  constructor(context: HandlerContext, target: number);
  constructor(
    first: HandlerContext | {
      maxIterations: number;
      promptResolver: Pick<PromptResolver, "resolve">;
    },
    target?: number,
  ) {
    const seed = isSeedShape(first) ? first : undefined;
    super(seed ? seedContext(seed.promptResolver, seed.maxIterations) : first as HandlerContext);
    this.#target = seed ? seed.maxIterations : target!;
    if (seed) this.#prompted = 0;
  }

  /**
   * Build the first prompt from the `initial_iterate` template.
   *
   * @param args The run's arguments; `task` becomes `uv-task`.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   IterateCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
   *   { displayPath: ".agent/polish/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 3 };
   * const handler = new IterateCompletionHandler(context, 3);
   * const prompt = await handler.buildInitialPrompt({ task: "Tighten the error messages" });
   * assert.match(prompt, /Tighten the error messages/);
   * assert.match(prompt, /This run has 3 iterations; this is iteration 1/);
   * ```
   */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    return await this.context.resolver.resolve("initial_iterate", {
      ...this.variables(1, [], args),
      ...this.#own(1),
    });
  }

  /**
   * Build the prompt of a later iteration from the `continuation_iterate` template,
   * with a summary of the latest iterations.
   *
   * @param iteration The iteration the prompt is for (2 and later).
   * @param summaries Every earlier iteration, oldest first.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   IterateCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
   *   { displayPath: ".agent/polish/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 3 };
   * const handler = new IterateCompletionHandler(context, 3);
   * const prompt = await handler.buildContinuationPrompt(2, [emptySummary(1)]);
   * assert.match(prompt, /This is iteration 2 of 3 \(1 left after this one\)/);
   * assert.match(prompt, /### Iteration 1/);
   * ```
   */
  async buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string> {
    if (this.#prompted !== undefined) this.#prompted = Math.max(this.#prompted, iteration);
    return await this.context.resolver.resolve("continuation_iterate", {
      ...this.variables(iteration, summaries),
      ...this.#own(iteration),
    });
  }

  /**
   * Say how many iterations the run takes.
   *
   * @returns The short and detailed criteria.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   IterateCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
   *   { displayPath: ".agent/polish/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 3 };
   * const handler = new IterateCompletionHandler(context, 3);
   * assert.equal(handler.buildCompletionCriteria().short, "3 iterations");
   * ```
   */
  buildCompletionCriteria(): CompletionCriteria {
    return {
      short: `${this.#target} iteration${this.#target === 1 ? "" : "s"}`,
      detailed:
        `This task runs for ${this.#target} iterations. Make real, committed progress in each one and end each with a short summary of what you did and what comes next.`,
    };
  }

  /**
   * Whether the iteration reached the target.
   *
   * @param summary The iteration's summary; only its number counts (in the
   * design's shape, so does the last continuation prompt's iteration).
   * @returns True from the target iteration on.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   IterateCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
   *   { displayPath: ".agent/polish/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 3 };
   * const handler = new IterateCompletionHandler(context, 3);
   * assert.equal(await handler.isComplete(emptySummary(1)), false);
   * assert.equal(await handler.isComplete(emptySummary(3)), true);
   * ```
   */
  isComplete(summary: IterationSummary): Promise<boolean> {
    return Promise.resolve(this.#ran(summary) >= this.#target);
  }

  /**
   * Say how many of the iterations ran.
   *
   * @param summary The last iteration's summary.
   * @returns One line for the final report.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   IterateCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   '{ "name": "polish", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
   *   { displayPath: ".agent/polish/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 3 };
   * const handler = new IterateCompletionHandler(context, 3);
   * assert.equal(
   *   await handler.getCompletionDescription(emptySummary(3)),
   *   "Completed 3/3 iterations",
   * );
   * ```
   */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      `Completed ${this.#ran(summary)}/${this.#target} iterations`,
    );
  }

  /** Iterations that ran: the summary's, or in the design's shape the last prompted one when later. */
  #ran(summary: IterationSummary): number {
    return Math.max(summary.iteration, this.#prompted ?? 0);
  }

  #own(iteration: number): Record<string, number> {
    return {
      "uv-max_iterations": this.#target,
      "uv-remaining": Math.max(0, this.#target - iteration),
    };
  }
}
