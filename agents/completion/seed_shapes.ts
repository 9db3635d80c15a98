/**
 * The constructor shapes of the completion handler design the project
 * started from: `new IterateCompletionHandler({ maxIterations,
 * promptResolver })` and its siblings. The built-in handlers take them
 * alongside their own `(context, ...)` shapes; this module turns one into the
 * context the handlers share.
 *
 * @module
 */

import { parseDefinition } from "../definition/parse.ts";
import type { PromptResolver } from "../prompts/resolver.ts";
import { DEFAULT_MAX_ITERATIONS, type HandlerContext } from "./base_handler.ts";

/** What a handler of the design's shape resolves its prompts with. */
export type SeedResolver = Pick<PromptResolver, "resolve">;

/** Options of the design's shape: a prompt resolver and the handler's own fields. */
export interface SeedShape {
  /** Resolves the prompt keys (`initial_iterate`, `continuation_issue`, ...). */
  promptResolver: SeedResolver;
}

/**
 * Whether constructor options are in the design's shape.
 *
 * @param value The first constructor argument.
 * @returns True when it carries a `promptResolver`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSeedShape } from "./seed_shapes.ts";
 *
 * const promptResolver = { resolve: (key: string) => Promise.resolve(key) };
 * assert.equal(isSeedShape({ maxIterations: 3, promptResolver }), true);
 * assert.equal(isSeedShape({ resolver: promptResolver }), false);
 * ```
 */
export function isSeedShape(value: unknown): value is SeedShape {
  return typeof value === "object" && value !== null && "promptResolver" in value;
}

/**
 * The context a handler built in the design's shape works in: an agent
 * definition with the defaults (and `github.closeIssue: "agent"`, as in the
 * design the issue closing is the completion signal), no arguments, and the
 * given resolver and cap.
 *
 * @param promptResolver The design's `promptResolver`.
 * @param maxIterations The run's cap. @default 10
 * @returns The context.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { seedContext } from "./seed_shapes.ts";
 *
 * const promptResolver = { resolve: (key: string) => Promise.resolve(key) };
 * const context = seedContext(promptResolver, 3);
 * assert.equal(context.maxIterations, 3);
 * assert.equal(context.definition.github.closeIssue, "agent");
 * ```
 */
export function seedContext(
  promptResolver: SeedResolver,
  maxIterations: number = DEFAULT_MAX_ITERATIONS,
): HandlerContext {
  const definition = parseDefinition(
    JSON.stringify({
      name: "agent",
      behavior: { completionConfig: { maxIterations } },
      github: { closeIssue: "agent" },
    }),
    { displayPath: "(the handler's options)" },
  );
  return { definition, args: {}, resolver: promptResolver, maxIterations };
}
