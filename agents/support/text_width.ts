/**
 * How wide text is on a terminal, in columns, and cutting it to a width.
 * Shared by the live line and the outcome's words for people.
 *
 * @module
 */

/**
 * How many terminal columns a text takes: wide (East Asian, emoji) characters
 * take two, combining marks none.
 *
 * @param text Plain text (no escape sequences).
 * @returns The columns.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { displayWidth } from "./text_width.ts";
 * assert.equal(displayWidth("Bash×2 · ok"), 11);
 * assert.equal(displayWidth("日本"), 4);
 * ```
 */
export function displayWidth(text: string): number {
  let width = 0;
  for (const char of text) width += charWidth(char.codePointAt(0)!);
  return width;
}

/**
 * The columns one character takes: 2 for wide East Asian characters and
 * emoji, 0 for combining marks and zero-width characters, else 1.
 *
 * @param code The character's code point.
 * @returns Its width in columns.
 */
export function charWidth(code: number): number {
  if (code < 0x20 || (code >= 0x7f && code < 0xa0)) return 0;
  if ((code >= 0x300 && code <= 0x36f) || (code >= 0x200b && code <= 0x200f)) return 0;
  if (
    (code >= 0x1100 && code <= 0x115f) || (code >= 0x2e80 && code <= 0xa4cf) ||
    (code >= 0xac00 && code <= 0xd7a3) || (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) || (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) || (code >= 0x1f300 && code <= 0x1faff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  ) return 2;
  return 1;
}

/**
 * Cut a text to at most `width` columns, ending it with `…` when cut.
 *
 * @param text The text.
 * @param width The columns available.
 * @returns The text, whole or cut.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { elide } from "./text_width.ts";
 * assert.equal(elide("tests still red", 10), "tests sti…");
 * assert.equal(elide("short", 10), "short");
 * ```
 */
export function elide(text: string, width: number): string {
  if (displayWidth(text) <= width) return text;
  if (width <= 0) return "";
  let out = "";
  let used = 0;
  for (const char of text) {
    const w = charWidth(char.codePointAt(0)!);
    if (used + w > width - 1) break;
    out += char;
    used += w;
  }
  return `${out.trimEnd()}…`;
}
