/**
 * Terminal control sequences and control characters removed from text that
 * comes from outside (the agent, a task, an issue, check output) before it
 * reaches a terminal, a report or GitHub. An agent that prints
 * `ESC ] 52 ; c ; ...` writes the user's clipboard, `ESC ] 0 ; ...` sets the
 * window title, `ESC [ 2 J` clears the screen; C1 controls (U+0080 to
 * U+009F) act as escapes in some terminals too.
 *
 * @module
 */

/**
 * Whole escape sequences: CSI (`ESC [` or U+009B, parameters, a final
 * byte), OSC, DCS, SOS, PM and APC strings (up to BEL or ST, or the end of
 * the text), and the two-byte escapes.
 */
const SEQUENCES =
  // deno-lint-ignore no-control-regex
  /(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[ -/]*[0-~]?/g;

/** What is left: C0 controls but tab and line breaks, DEL and C1 controls. */
// deno-lint-ignore no-control-regex
const CONTROLS = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/g;

/**
 * Remove terminal escape sequences and control characters from text, keeping
 * tabs and line breaks.
 *
 * @param text Text from outside.
 * @returns The text without them; printable text is untouched.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stripControls } from "./controls.ts";
 *
 * assert.equal(stripControls("ok\x1b]52;c;ZWNobyBoaQ==\x07 done"), "ok done");
 * assert.equal(stripControls("\x1b[2Jcleared\x1b]0;title\x1b\\ \x9b31mred"), "cleared red");
 * assert.equal(stripControls("tab\tand\nline\r\n"), "tab\tand\nline\r\n");
 * ```
 */
export function stripControls(text: string): string {
  // deno-lint-ignore no-control-regex
  if (!/[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]/.test(text)) return text;
  return text.replace(SEQUENCES, "").replace(CONTROLS, "");
}

/**
 * Colour and weight alone (SGR: reset, bold, dim, normal, the 16 foreground
 * colours and the default one): what finishline's own painter draws with.
 * Nothing here moves the cursor, hides text, or talks to the terminal.
 */
// deno-lint-ignore no-control-regex
const COLOUR = /\x1b\[(?:(?:0|1|2|22|3[0-79]|9[0-7])(?:;(?:0|1|2|22|3[0-79]|9[0-7]))*)?m/g;

/**
 * {@linkcode stripControls}, keeping colour sequences: for a terminal whose
 * lines finishline colours (`NO_COLOR` and `FORCE_COLOR` decide that, in the
 * painter). Text from outside may colour itself too, and can do no more.
 *
 * @param text Text for a terminal.
 * @returns The text without controls but colour.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { stripControlsButColour } from "./controls.ts";
 *
 * assert.equal(stripControlsButColour("\x1b[32mok\x1b[39m\x1b[2J\x1b[8m"), "\x1b[32mok\x1b[39m");
 * ```
 */
export function stripControlsButColour(text: string): string {
  if (!text.includes("\x1b")) return stripControls(text);
  const kept = text.match(COLOUR) ?? [];
  const pieces = text.split(COLOUR).map(stripControls);
  return pieces.map((piece, index) => `${piece}${kept[index] ?? ""}`).join("");
}
