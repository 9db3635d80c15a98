/**
 * Colour for the CLI's own words (outcomes, verdicts), in ANSI codes: only on
 * a terminal, never with `NO_COLOR` or `TERM=dumb`, and with `FORCE_COLOR`
 * (but "0" or "false") even into a pipe. Deno's own APIs, not `node:util`'s
 * `styleText`: any `node:` module loads Node's compatibility layer, tens of
 * milliseconds of the CLI's start.
 *
 * @module
 */

/** Paints a text in a colour, or leaves it as it is. */
export type Paint = (colour: Colour, text: string) => string;

/** The colours the CLI uses. */
export type Colour = "green" | "red" | "yellow" | "cyan" | "dim" | "bold";

/** Each colour's SGR codes, opening and closing (bold and dim share their close). */
const CODES: Record<Colour, readonly [number, number]> = {
  green: [32, 39],
  red: [31, 39],
  yellow: [33, 39],
  cyan: [36, 39],
  dim: [2, 22],
  bold: [1, 22],
};

/** Leaves every text as it is: for output that is not a terminal of this process. */
export const noColour: Paint = (_colour: Colour, text: string): string => text;

/**
 * A painter for one of this process's streams: it colours when that stream
 * is a terminal and neither `NO_COLOR` nor `TERM=dumb` is set, or when
 * `FORCE_COLOR` is set (but to "0" or "false").
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
  const on = colours(stream === "stdout" ? Deno.stdout : Deno.stderr);
  // Not noColour itself, even when off: the painter says the stream is this process's.
  return (colour, text) => on ? painted(colour, text) : text;
}

/** Whether to colour a stream, as Node's `styleText` decides (but for terminals it does not know). */
function colours(stream: { isTerminal(): boolean }): boolean {
  const force = variable("FORCE_COLOR");
  if (force !== undefined) return force !== "0" && force !== "false";
  return stream.isTerminal() && !Deno.noColor && variable("TERM") !== "dumb";
}

/** The text in a colour; where the text closes that colour itself, it opens again. */
function painted(colour: Colour, text: string): string {
  const [open, close] = CODES[colour].map((code) => `\x1b[${code}m`);
  const reopen = CODES[colour][1] === 22 ? `${close}${open}` : open;
  return `${open}${text.replaceAll(close, reopen)}${close}`;
}

/** An environment variable, or undefined where the permission is refused. */
function variable(name: string): string | undefined {
  try {
    return Deno.env.get(name);
  } catch {
    return undefined;
  }
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
