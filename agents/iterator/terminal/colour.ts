/**
 * Colour for the CLI's own words (outcomes, verdicts), through `node:util`'s
 * `styleText`: only on a terminal, never with `NO_COLOR`, and with
 * `FORCE_COLOR` even into a pipe.
 *
 * @module
 */

import process from "node:process";
import { styleText } from "node:util";

/** Paints a text in a colour, or leaves it as it is. */
export type Paint = (colour: Colour, text: string) => string;

/** The colours the CLI uses. */
export type Colour = "green" | "red" | "yellow" | "cyan" | "dim" | "bold";

/** Leaves every text as it is: for output that is not a terminal of this process. */
export const noColour: Paint = (_colour: Colour, text: string): string => text;

/**
 * A painter for one of this process's streams: it colours when that stream
 * is a terminal and `NO_COLOR` is not set, or when `FORCE_COLOR` is set.
 *
 * @param stream The stream the text goes to.
 * @returns The painter.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { painterFor } from "./colour.ts";
 *
 * // A test's stdout is no terminal: no colour unless FORCE_COLOR is set.
 * if (!Deno.stdout.isTerminal() && !Deno.env.get("FORCE_COLOR")) {
 *   assert.equal(painterFor("stdout")("green", "completed"), "completed");
 * }
 * ```
 */
export function painterFor(stream: "stdout" | "stderr"): Paint {
  const target = stream === "stdout" ? process.stdout : process.stderr;
  return (colour, text) => styleText(colour, text, { stream: target });
}

/**
 * The colour of a run's outcome: green done, yellow stopped at a limit, red
 * failed or stuck.
 *
 * @param status The run's status.
 * @returns The colour.
 */
export function outcomeColour(status: string): Colour {
  if (status === "completed") return "green";
  if (["max_iterations", "budget_exhausted", "interrupted", "running"].includes(status)) {
    return "yellow";
  }
  return "red";
}
