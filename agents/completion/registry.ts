/**
 * A registry of completion handler factories for types beyond the built-in
 * ones, consulted by the factory before it gives up on an unknown type. A
 * registered name is also a valid `behavior.completionType` in agent.json.
 *
 * @module
 */

import type { CompletionHandlerFactory } from "./handler_contract.ts";
import { noteRegisteredType } from "../definition/completion_types.ts";

const registered = new Map<string, CompletionHandlerFactory>();

/**
 * Register a factory for a completion type, so that definitions whose
 * `behavior.completionType` names it build a handler through it. Register
 * before the definition is parsed: agent.json accepts only built-in and
 * registered names.
 *
 * @param type The completion type name (`^[a-z][a-z0-9-]*$`, not a built-in one).
 * @param factory Builds the handler from the definition and the run's arguments.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   type CompletionHandlerFactory,
 *   getRegisteredHandler,
 *   registerCompletionHandler,
 *   unregisterCompletionHandler,
 * } from "@finishline/agents";
 *
 * // A handler that completes once an iteration commits something.
 * const commits: CompletionHandlerFactory = () => ({
 *   type: "custom",
 *   buildInitialPrompt: () => Promise.resolve("Commit your work."),
 *   buildContinuationPrompt: () => Promise.resolve("Keep going, then commit."),
 *   buildCompletionCriteria: () => ({ short: "a commit", detailed: "Commit your work." }),
 *   isComplete: (summary) => Promise.resolve((summary.git?.newCommits ?? 0) > 0),
 *   getCompletionDescription: () => Promise.resolve("Committed"),
 * });
 * registerCompletionHandler("commits", commits);
 * try {
 *   assert.equal(getRegisteredHandler("commits"), commits);
 *   assert.throws(() => registerCompletionHandler("manual", commits), RangeError);
 * } finally {
 *   unregisterCompletionHandler("commits");
 * }
 * ```
 */
export function registerCompletionHandler(
  type: string,
  factory: CompletionHandlerFactory,
): void {
  if (!/^[a-z][a-z0-9-]*$/.test(type)) {
    throw new RangeError(
      `Invalid completion type "${type}": expected ^[a-z][a-z0-9-]*$`,
    );
  }
  if (["issue", "project", "iterate", "manual", "custom", "task"].includes(type)) {
    throw new RangeError(
      `Cannot register completion type "${type}": it is built in`,
    );
  }
  registered.set(type, factory);
  noteRegisteredType(type, true);
}

/**
 * Remove a registered completion type.
 *
 * @param type The type name.
 * @returns True when it was registered.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registerCompletionHandler, unregisterCompletionHandler } from "@finishline/agents";
 *
 * registerCompletionHandler("review-bot", () => {
 *   throw new Error("not used in this example");
 * });
 * assert.equal(unregisterCompletionHandler("review-bot"), true);
 * assert.equal(unregisterCompletionHandler("review-bot"), false);
 * ```
 */
export function unregisterCompletionHandler(type: string): boolean {
  noteRegisteredType(type, false);
  return registered.delete(type);
}

/**
 * The factory registered for a type, as the completion handlers design's
 * registry answers it.
 *
 * @param type The type name.
 * @returns The factory, or `undefined`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   getRegisteredHandler,
 *   registerCompletionHandler,
 *   unregisterCompletionHandler,
 * } from "@finishline/agents/kit";
 *
 * assert.equal(getRegisteredHandler("review-bot"), undefined);
 * const factory = () => {
 *   throw new Error("not used in this example");
 * };
 * registerCompletionHandler("review-bot", factory);
 * assert.equal(getRegisteredHandler("review-bot"), factory);
 * unregisterCompletionHandler("review-bot");
 * ```
 */
export function getRegisteredHandler(
  type: string,
): CompletionHandlerFactory | undefined {
  return registered.get(type);
}

/**
 * The registered type names, sorted.
 *
 * @returns Names.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registerCompletionHandler, unregisterCompletionHandler } from "@finishline/agents";
 * import { registeredTypes } from "./registry.ts";
 *
 * const factory = () => {
 *   throw new Error("not used in this example");
 * };
 * registerCompletionHandler("zebra", factory);
 * registerCompletionHandler("alpaca", factory);
 * try {
 *   assert.deepEqual(registeredTypes(), ["alpaca", "zebra"]);
 * } finally {
 *   unregisterCompletionHandler("zebra");
 *   unregisterCompletionHandler("alpaca");
 * }
 * ```
 */
export function registeredTypes(): string[] {
  return [...registered.keys()].sort();
}
