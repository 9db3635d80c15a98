/**
 * The `iterate` handler: complete when the target number of iterations ran.
 *
 * @module
 */

import { BaseHandler, type HandlerContext } from "./_base.ts";
import type { CompletionCriteria, CompletionHandler, IterationSummary } from "./types.ts";

/**
 * Completes when the iteration it is given reaches the target; no hidden
 * counter, so it cannot lag a step behind.
 *
 * @example
 * ```ts
 * import { IterateCompletionHandler } from "./iterate.ts";
 * import { PromptResolver } from "../prompt_resolver.ts";
 * import { emptySummary } from "../summary.ts";
 * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
 * const handler = new IterateCompletionHandler({
 *   definition: { name: "demo" } as never, args: {}, resolver, maxIterations: 3,
 * }, 3);
 * console.assert(!(await handler.isComplete(emptySummary(2))));
 * console.assert(await handler.isComplete(emptySummary(3)));
 * ```
 */
export class IterateCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "iterate". */
  readonly type = "iterate" as const;
  #target: number;

  /**
   * @param context Definition, arguments, resolver and cap.
   * @param target How many iterations make the run complete.
   */
  constructor(context: HandlerContext, target: number) {
    super(context);
    this.#target = target;
  }

  /** @inheritdoc */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    return await this.context.resolver.resolve("initial_iterate", {
      ...this.variables(1, [], args),
      ...this.#own(1),
    });
  }

  /** @inheritdoc */
  async buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string> {
    return await this.context.resolver.resolve("continuation_iterate", {
      ...this.variables(iteration, summaries),
      ...this.#own(iteration),
    });
  }

  /** @inheritdoc */
  buildCompletionCriteria(): CompletionCriteria {
    return {
      short: `${this.#target} iterations`,
      detailed:
        `This task runs for ${this.#target} iterations. Make real, committed progress in each one and end each with a short summary of what you did and what comes next.`,
    };
  }

  /** @inheritdoc */
  isComplete(summary: IterationSummary): Promise<boolean> {
    return Promise.resolve(summary.iteration >= this.#target);
  }

  /** @inheritdoc */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    return Promise.resolve(
      `Completed ${summary.iteration}/${this.#target} iterations`,
    );
  }

  #own(iteration: number): Record<string, number> {
    return {
      "uv-max_iterations": this.#target,
      "uv-remaining": Math.max(0, this.#target - iteration),
    };
  }
}
