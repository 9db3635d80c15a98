/**
 * The `manual` handler: complete when the agent says the completion keyword.
 *
 * @module
 */

import { BaseHandler, type HandlerContext } from "./base_handler.ts";
import type { PromptResolver } from "../prompts/resolver.ts";
import { isSeedShape, seedContext } from "./seed_shapes.ts";
import type { CompletionCriteria, CompletionHandler } from "./handler_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";

/**
 * Completes in the iteration whose responses contain the keyword.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   emptySummary,
 *   ManualCompletionHandler,
 *   parseDefinition,
 *   PromptResolver,
 * } from "@finishline/agents";
 *
 * const definition = parseDefinition(
 *   `{ "name": "docs", "behavior": { "completionType": "manual",
 *      "completionConfig": { "completionKeyword": "ALL DONE" } } }`,
 *   { displayPath: ".agent/docs/agent.json" },
 * );
 * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
 * const context = { definition, args: {}, resolver, maxIterations: 5 };
 * const handler = new ManualCompletionHandler(context, "ALL DONE");
 * assert.equal(handler.type, "manual");
 * const summary = { ...emptySummary(2), assistantResponses: ["Tests pass. ALL DONE"] };
 * assert.equal(await handler.isComplete(summary), true);
 * ```
 */
export class ManualCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "manual". */
  readonly type = "manual" as const;
  #keyword: string;

  /**
   * Create the handler in the design's shape.
   *
   * @param options The completion keyword and the prompt resolver.
   * @throws {RangeError} When the keyword is empty.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary, ManualCompletionHandler } from "@finishline/agents";
   * import { mockPromptResolver } from "@finishline/agents/testing";
   *
   * const handler = new ManualCompletionHandler({
   *   completionKeyword: "ALL DONE",
   *   promptResolver: mockPromptResolver,
   * });
   * const said = { ...emptySummary(1), assistantResponses: ["ALL DONE"] };
   * assert.equal(await handler.isComplete(said), true);
   * ```
   */
  constructor(options: {
    /** The completion keyword. */
    completionKeyword: string;
    /** Resolves `initial_manual` and `continuation_manual`. */
    promptResolver: Pick<PromptResolver, "resolve">;
  });
  /**
   * Create the handler.
   *
   * @param context Definition, arguments, resolver and cap.
   * @param keyword The completion keyword.
   * @throws {RangeError} When the keyword is empty.
   */
  constructor(context: HandlerContext, keyword: string);
  constructor(
    first: HandlerContext | {
      completionKeyword: string;
      promptResolver: Pick<PromptResolver, "resolve">;
    },
    second?: string,
  ) {
    const seed = isSeedShape(first) ? first : undefined;
    super(seed ? seedContext(seed.promptResolver) : first as HandlerContext);
    const keyword = seed ? seed.completionKeyword : second!;
    if (typeof keyword !== "string" || keyword.trim() === "") {
      throw new RangeError("The completion keyword must not be empty");
    }
    this.#keyword = keyword;
  }

  /**
   * Build the first prompt from the `initial_manual` template, which names the keyword.
   *
   * @param args The run's arguments; `task` becomes `uv-task`.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   ManualCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   `{ "name": "docs", "behavior": { "completionType": "manual",
   *      "completionConfig": { "completionKeyword": "ALL DONE" } } }`,
   *   { displayPath: ".agent/docs/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 5 };
   * const handler = new ManualCompletionHandler(context, "ALL DONE");
   * const prompt = await handler.buildInitialPrompt({ task: "Document every flag" });
   * assert.match(prompt, /Document every flag/);
   * assert.match(prompt, /`ALL DONE`/);
   * ```
   */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    return await this.context.resolver.resolve("initial_manual", {
      ...this.variables(1, [], args),
      "uv-completion_keyword": this.#keyword,
    });
  }

  /**
   * Build the prompt of a later iteration from the `continuation_manual` template.
   *
   * @param iteration The iteration the prompt is for (2 and later).
   * @param summaries Every earlier iteration, oldest first.
   * @returns The prompt.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   ManualCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   `{ "name": "docs", "behavior": { "completionType": "manual",
   *      "completionConfig": { "completionKeyword": "ALL DONE" } } }`,
   *   { displayPath: ".agent/docs/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 5 };
   * const handler = new ManualCompletionHandler(context, "ALL DONE");
   * const prompt = await handler.buildContinuationPrompt(2, [emptySummary(1)]);
   * assert.match(prompt, /iteration 2 of at most 5/);
   * assert.match(prompt, /You have not said the completion keyword `ALL DONE` yet/);
   * ```
   */
  async buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string> {
    return await this.context.resolver.resolve("continuation_manual", {
      ...this.variables(iteration, summaries),
      "uv-completion_keyword": this.#keyword,
    });
  }

  /**
   * Tell the agent to say the keyword once, and only when, the task is done.
   *
   * @returns The short and detailed criteria.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   ManualCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   `{ "name": "docs", "behavior": { "completionType": "manual",
   *      "completionConfig": { "completionKeyword": "ALL DONE" } } }`,
   *   { displayPath: ".agent/docs/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 5 };
   * const handler = new ManualCompletionHandler(context, "ALL DONE");
   * assert.equal(handler.buildCompletionCriteria().short, 'say "ALL DONE" when done');
   * ```
   */
  buildCompletionCriteria(): CompletionCriteria {
    return {
      short: `say "${this.#keyword}" when done`,
      detailed:
        `When the task is completely done, say "${this.#keyword}" in your final message. Do not say it before you are certain every part of the task is done.`,
    };
  }

  /**
   * Whether any of the iteration's responses contains the keyword.
   *
   * @param summary The iteration's summary.
   * @returns True when the agent said the keyword.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   ManualCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   `{ "name": "docs", "behavior": { "completionType": "manual",
   *      "completionConfig": { "completionKeyword": "ALL DONE" } } }`,
   *   { displayPath: ".agent/docs/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 5 };
   * const handler = new ManualCompletionHandler(context, "ALL DONE");
   * assert.equal(await handler.isComplete(emptySummary(1)), false);
   * const said = { ...emptySummary(2), assistantResponses: ["Docs written.", "ALL DONE"] };
   * assert.equal(await handler.isComplete(said), true);
   * ```
   */
  isComplete(summary: IterationSummary): Promise<boolean> {
    return Promise.resolve(
      summary.assistantResponses.some((response) => response.includes(this.#keyword)),
    );
  }

  /**
   * Say in which iteration the keyword came.
   *
   * @param summary The last iteration's summary.
   * @returns One line for the final report.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import {
   *   emptySummary,
   *   ManualCompletionHandler,
   *   parseDefinition,
   *   PromptResolver,
   * } from "@finishline/agents";
   *
   * const definition = parseDefinition(
   *   `{ "name": "docs", "behavior": { "completionType": "manual",
   *      "completionConfig": { "completionKeyword": "ALL DONE" } } }`,
   *   { displayPath: ".agent/docs/agent.json" },
   * );
   * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
   * const context = { definition, args: {}, resolver, maxIterations: 5 };
   * const handler = new ManualCompletionHandler(context, "ALL DONE");
   * assert.equal(
   *   await handler.getCompletionDescription(emptySummary(2)),
   *   'Completion keyword "ALL DONE" said in iteration 2',
   * );
   * ```
   */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      `Completion keyword "${this.#keyword}" said in iteration ${summary.iteration}`,
    );
  }
}
