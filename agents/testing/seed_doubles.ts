/**
 * The two free names of the completion handler design's test: a prompt
 * resolver that answers every key without templates, and an iteration
 * summary with nothing in it. With them the design's "Testing Handlers"
 * example runs as written.
 *
 * @module
 */

import type { PromptVariables } from "../prompts/resolver.ts";
import { emptySummary, type IterationSummary } from "../record/iteration.ts";

/**
 * A prompt resolver for handler tests: it fills no template, it answers the
 * key on the first line and the variables as JSON on the second, so a test
 * sees what the handler asked for.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mockPromptResolver } from "@finishline/agents/testing";
 *
 * assert.equal(
 *   await mockPromptResolver.resolve("continuation_iterate", { "uv-iteration": 2 }),
 *   'continuation_iterate\n{"uv-iteration":2}',
 * );
 * ```
 */
export const mockPromptResolver: {
  /**
   * Answer a key with itself and the variables.
   *
   * @param key The prompt key.
   * @param variables The template variables.
   * @returns `key`, a newline, the variables as JSON.
   */
  resolve(key: string, variables: PromptVariables): Promise<string>;
} = {
  resolve: (key, variables) => Promise.resolve(`${key}\n${JSON.stringify(variables)}`),
};

/**
 * The summary of an iteration 1 in which nothing happened, for handlers that
 * decide from their own state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { mockSummary } from "@finishline/agents/testing";
 *
 * assert.equal(mockSummary.iteration, 1);
 * assert.deepEqual(mockSummary.assistantResponses, []);
 * ```
 */
export const mockSummary: IterationSummary = emptySummary(1);
