/**
 * The completion type names a definition may use: the built-in ones and the
 * ones registered in code. The names live here, below both the definition
 * parser and the completion registry, so that parsing accepts a registered
 * name without the definition folder importing the handlers.
 *
 * @module
 */

import { COMPLETION_TYPES } from "./definition_types.ts";
import { oneOf } from "./_wording.ts";

const registeredNames = new Set<string>();

/**
 * Record that a completion type was registered in code, or unregistered.
 *
 * @param type The type name.
 * @param registered Whether it is registered now.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isCompletionType, noteRegisteredType } from "./completion_types.ts";
 *
 * noteRegisteredType("review-bot", true);
 * assert.equal(isCompletionType("review-bot"), true);
 * noteRegisteredType("review-bot", false);
 * assert.equal(isCompletionType("review-bot"), false);
 * ```
 */
export function noteRegisteredType(type: string, registered: boolean): void {
  if (registered) registeredNames.add(type);
  else registeredNames.delete(type);
}

/**
 * The registered type names, sorted.
 *
 * @returns Names.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { registeredTypeNames } from "./completion_types.ts";
 *
 * assert.deepEqual(registeredTypeNames(), []);
 * ```
 */
export function registeredTypeNames(): string[] {
  return [...registeredNames].sort();
}

/**
 * Whether a value names a built-in or registered completion type.
 *
 * @param value The value of `behavior.completionType`.
 * @returns True for a known name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isCompletionType } from "./completion_types.ts";
 *
 * assert.equal(isCompletionType("manual"), true);
 * assert.equal(isCompletionType("done"), false);
 * ```
 */
export function isCompletionType(value: unknown): boolean {
  return typeof value === "string" &&
    ((COMPLETION_TYPES as readonly string[]).includes(value) || registeredNames.has(value));
}

/**
 * What `behavior.completionType` expects: the built-in names, then the
 * registered ones.
 *
 * @returns `expected one of "issue", ...`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { expectedCompletionType } from "./completion_types.ts";
 *
 * assert.equal(
 *   expectedCompletionType(),
 *   'expected one of "issue", "project", "iterate", "manual", "custom", "task"',
 * );
 * ```
 */
export function expectedCompletionType(): string {
  return `expected ${oneOf([...COMPLETION_TYPES, ...registeredTypeNames()])}`;
}
