/**
 * What the worker is told when a held-out test fails on its claim: which
 * test, and that its assertion failed, never the test's inputs or the
 * values it expected or got. An assertion message ("expected 14, actual 6")
 * would be an oracle: three claims would read the expected value off it.
 * The test's name keeps its words; its literals (numbers, quoted strings,
 * long identifiers of data) are masked too, since a name can carry them
 * ("add(2, 3) returns 5").
 *
 * @module
 */

/** A literal in a test's name: a quoted string, or a number. */
const LITERAL = /"[^"\n]*"|'[^'\n]*'|`[^`\n]*`|-?\b\d+(?:[.,_]\d+)*(?:e[+-]?\d+)?\b/gi;

/** What stands for a masked value. */
export const MASK = "…";

/**
 * A held-out test's name with its literals masked.
 *
 * @param name The test's name.
 * @returns The name, numbers and quoted strings replaced by `…`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { maskedName } from "./held_out_feedback.ts";
 *
 * assert.equal(maskedName("add(2, 3) returns 5"), "add(…, …) returns …");
 * assert.equal(maskedName('greets "Ada"'), "greets …");
 * assert.equal(maskedName("subtract subtracts"), "subtract subtracts");
 * ```
 */
export function maskedName(name: string): string {
  return name.replace(LITERAL, MASK);
}

/**
 * The worker's feedback about the held-out tests that fail on its claim:
 * their masked names and that each asserts the behaviour the task asks for.
 * The same whatever values the run printed, so nothing is learned by claiming again.
 *
 * @param failing The failing held-out tests' names.
 * @returns One line per test, joined with "; ".
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { heldOutFailures } from "./held_out_feedback.ts";
 *
 * assert.equal(
 *   heldOutFailures(["subtract(5, 3) is 2"]),
 *   '"subtract(…, …) is …" (its assertion about the behaviour the task describes fails; its values are held out)',
 * );
 * ```
 */
export function heldOutFailures(failing: string[]): string {
  const names = [...new Set(failing.map(maskedName))];
  const shown = names.slice(0, 5).map((name) => `"${name}"`).join(", ");
  const more = names.length > 5 ? ` and ${names.length - 5} more` : "";
  return `${shown}${more} (its assertion about the behaviour the task describes fails; its values are held out)`;
}
