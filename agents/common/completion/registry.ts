/**
 * A registry of completion handler factories for types beyond the built-in
 * ones, consulted by the factory before it gives up on an unknown type.
 *
 * @module
 */

import type { CompletionHandlerFactory } from "./types.ts";

const registered = new Map<string, CompletionHandlerFactory>();

/**
 * Register a factory for a completion type, so that definitions whose
 * `behavior.completionType` names it build a handler through it.
 *
 * @param type The completion type name (`^[a-z][a-z0-9-]*$`, not a built-in one).
 * @param factory Builds the handler from the definition and the run's arguments.
 * @example
 * ```ts
 * import { getRegisteredHandler, registerCompletionHandler, unregisterCompletionHandler } from "./registry.ts";
 * registerCompletionHandler("review-bot", () => { throw new Error("demo only"); });
 * console.assert(getRegisteredHandler("review-bot") !== undefined);
 * unregisterCompletionHandler("review-bot");
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
  if (["issue", "project", "iterate", "manual", "custom"].includes(type)) {
    throw new RangeError(
      `Cannot register completion type "${type}": it is built in`,
    );
  }
  registered.set(type, factory);
}

/**
 * Remove a registered completion type.
 *
 * @param type The type name.
 * @returns True when it was registered.
 * @example
 * ```ts
 * import { unregisterCompletionHandler } from "./registry.ts";
 * console.assert(unregisterCompletionHandler("never-registered") === false);
 * ```
 */
export function unregisterCompletionHandler(type: string): boolean {
  return registered.delete(type);
}

/**
 * The factory registered for a type.
 *
 * @param type The type name.
 * @returns The factory, or `undefined`.
 * @example
 * ```ts
 * import { getRegisteredHandler } from "./registry.ts";
 * console.assert(getRegisteredHandler("nothing-here") === undefined);
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
 * import { registeredTypes } from "./registry.ts";
 * console.assert(Array.isArray(registeredTypes()));
 * ```
 */
export function registeredTypes(): string[] {
  return [...registered.keys()].sort();
}
