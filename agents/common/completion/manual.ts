/**
 * The `manual` handler: complete when the agent says the completion keyword.
 *
 * @module
 */

import { BaseHandler, type HandlerContext } from "./_base.ts";
import type { CompletionCriteria, CompletionHandler, IterationSummary } from "./types.ts";

/**
 * Completes in the iteration whose responses contain the keyword.
 *
 * @example
 * ```ts
 * import { ManualCompletionHandler } from "./manual.ts";
 * import { PromptResolver } from "../prompt_resolver.ts";
 * import { emptySummary } from "../summary.ts";
 * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
 * const handler = new ManualCompletionHandler({
 *   definition: { name: "demo" } as never, args: {}, resolver, maxIterations: 5,
 * }, "ALL DONE");
 * const summary = { ...emptySummary(2), assistantResponses: ["Tests pass. ALL DONE"] };
 * console.assert(await handler.isComplete(summary));
 * ```
 */
export class ManualCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "manual". */
  readonly type = "manual" as const;
  #keyword: string;

  /**
   * @param context Definition, arguments, resolver and cap.
   * @param keyword The completion keyword.
   */
  constructor(context: HandlerContext, keyword: string) {
    super(context);
    if (keyword.trim() === "") {
      throw new RangeError("The completion keyword must not be empty");
    }
    this.#keyword = keyword;
  }

  /** @inheritdoc */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    return await this.context.resolver.resolve("initial_manual", {
      ...this.variables(1, [], args),
      "uv-completion_keyword": this.#keyword,
    });
  }

  /** @inheritdoc */
  async buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string> {
    return await this.context.resolver.resolve("continuation_manual", {
      ...this.variables(iteration, summaries),
      "uv-completion_keyword": this.#keyword,
    });
  }

  /** @inheritdoc */
  buildCompletionCriteria(): CompletionCriteria {
    return {
      short: `say "${this.#keyword}" when done`,
      detailed:
        `When the task is completely done, say "${this.#keyword}" in your final message. Do not say it before you are certain every part of the task is done.`,
    };
  }

  /** @inheritdoc */
  isComplete(summary: IterationSummary): Promise<boolean> {
    return Promise.resolve(
      summary.assistantResponses.some((response) => response.includes(this.#keyword)),
    );
  }

  /** @inheritdoc */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      `Completion keyword "${this.#keyword}" said in iteration ${summary.iteration}`,
    );
  }
}
