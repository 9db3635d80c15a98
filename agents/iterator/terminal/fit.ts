/**
 * Fitting progress lines to the terminal's width. A line is a list of
 * fields; the ones that matter least shrink first (shorter forms, then
 * elided, then dropped), and a field that must stay whole (the verdict) is
 * never cut: a printed line that still does not fit flows onto indented
 * rows instead.
 *
 * @module
 */

import { displayWidth, elide } from "../../support/text_width.ts";

export { displayWidth, elide };

/** One field of a progress line. */
export interface Field {
  /** The field's text. */
  text: string;
  /** Shorter forms, longest first; `""` drops the field. */
  shorter?: string[];
  /**
   * Once the shorter forms are used up, the field may be cut with `…` down to
   * this many columns (and no further).
   */
  elide?: number;
  /** Shrink order: the highest rank shrinks first; on a tie, the later field. @default 0 */
  rank?: number;
  /**
   * The rank of each step to a shorter form, when they differ: `ranks[i]` is
   * the rank of the step to `shorter[i]` (so a field can shorten early and
   * be dropped late). @default `rank` for each
   */
  ranks?: number[];
  /** The text before the field when another field precedes it. @default " · " */
  join?: string;
}

const INDENT = "  ";
const MIN_WIDTH = 8;

/**
 * The fields joined as one line, without any fitting.
 *
 * @param fields The fields.
 * @returns The line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinFields } from "./fit.ts";
 * assert.equal(joinFields([{ text: "a" }, { text: "" }, { text: "b" }]), "a · b");
 * ```
 */
export function joinFields(fields: Field[]): string {
  let line = "";
  for (const field of fields) {
    if (field.text === "") continue;
    line += line === "" ? field.text : `${field.join ?? " · "}${field.text}`;
  }
  return line;
}

/**
 * Shrink fields, the highest rank first, until their line fits the width or
 * nothing can shrink any more. With `regrow`, the steps are then undone
 * where the line still fits, the last one first: a field shrunk early (a
 * label) comes back when one shrunk later (the tools, dropped) made room.
 */
function shrink(fields: Field[], width: number, regrow = false): Field[] {
  const out = fields.map((field) => ({ ...field }));
  const steps = fields.map(() => 0);
  const elided = fields.map(() => false);
  const taken: Array<{ field: number; before: string }> = [];
  const fits = () => displayWidth(joinFields(out)) <= width;
  const canShrink = (i: number) =>
    steps[i] < (fields[i].shorter?.length ?? 0) ||
    (fields[i].elide !== undefined && !elided[i] && out[i].text !== "" &&
      displayWidth(out[i].text) > fields[i].elide!);
  const rankOf = (i: number) =>
    (steps[i] < (fields[i].shorter?.length ?? 0) ? fields[i].ranks?.[steps[i]] : undefined) ??
      fields[i].rank ?? 0;
  for (let over = displayWidth(joinFields(out)) - width; over > 0;) {
    let pick = -1;
    for (let i = 0; i < out.length; i++) {
      if (canShrink(i) && (pick < 0 || rankOf(i) >= rankOf(pick))) pick = i;
    }
    if (pick < 0) break;
    taken.push({ field: pick, before: out[pick].text });
    if (steps[pick] < (fields[pick].shorter?.length ?? 0)) {
      out[pick].text = fields[pick].shorter![steps[pick]++];
    } else {
      elided[pick] = true;
      const target = Math.max(fields[pick].elide!, displayWidth(out[pick].text) - over);
      out[pick].text = elide(out[pick].text, target);
    }
    over = displayWidth(joinFields(out)) - width;
  }
  if (!regrow || !fits()) return out;
  // Undo a step only while its field has taken no later one (undone in order, so it is the latest).
  const latest = new Map<number, number>();
  taken.forEach((step, index) => latest.set(step.field, index));
  for (let index = taken.length - 2; index >= 0; index--) {
    const { field, before } = taken[index];
    if (latest.get(field) !== index) continue;
    const now = out[field].text;
    out[field].text = before;
    if (!fits()) {
      out[field].text = now;
      continue;
    }
    const earlier = taken.slice(0, index).findLastIndex((step) => step.field === field);
    if (earlier < 0) latest.delete(field);
    else latest.set(field, earlier);
  }
  return out;
}

/**
 * Fit fields on one row: shrink them, and as a last resort cut the line
 * with `…`. For the live status line, which must stay one row.
 *
 * @param fields The fields, in order.
 * @param width The columns available.
 * @param options `regrow`: once the row fits, give back the shorter forms
 * taken early that still fit, the latest first (a label dropped early comes
 * back when dropping a wide field later made room). @default false
 * @returns One row of at most `width` columns.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fitRow } from "./fit.ts";
 * const fields = [
 *   { text: "iteration 2/3", shorter: ["2/3"], rank: 1 },
 *   { text: "tools: Bash×2, Read", shorter: ["tools: Bash×2 +1", ""], rank: 2 },
 *   { text: "it 0:12" },
 * ];
 * assert.equal(fitRow(fields, 80), "iteration 2/3 · tools: Bash×2, Read · it 0:12");
 * assert.equal(fitRow(fields, 43), "iteration 2/3 · tools: Bash×2 +1 · it 0:12");
 * assert.equal(fitRow(fields, 24), "iteration 2/3 · it 0:12");
 * assert.equal(fitRow(fields, 12), "2/3 · it 0:…");
 * // The label goes first; the tools shorten first and are dropped last.
 * const live = [
 *   { text: "finishline", shorter: [""], rank: 4 },
 *   { text: "it 0:12" },
 *   { text: "tools: Bash×2, Read", shorter: ["tools: Bash×2 +1", ""], ranks: [5, 3] },
 * ];
 * assert.equal(fitRow(live, 32), "it 0:12 · tools: Bash×2 +1");
 * assert.equal(fitRow(live, 20, { regrow: true }), "finishline · it 0:12");
 * ```
 */
export function fitRow(
  fields: Field[],
  width: number,
  options: { regrow?: boolean } = {},
): string {
  width = Math.max(MIN_WIDTH, width);
  return elide(joinFields(shrink(fields, width, options.regrow)), width);
}

/**
 * Fit fields to the width for a printed line: shrink them; when the line
 * still does not fit (the fields that cannot shrink are too long), it flows
 * onto rows indented by two spaces, a field moving whole to the next row and
 * wrapping at spaces only when it is wider than a row. No field without
 * `shorter` or `elide` is ever cut.
 *
 * @param fields The fields, in order.
 * @param width The columns available.
 * @returns Rows of at most `width` columns.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fitRows } from "./fit.ts";
 * const fields = [
 *   { text: "[finishline]" },
 *   { text: "iteration 1/3", join: " ", shorter: ["1/3"] },
 *   { text: "2.1s", shorter: [""], rank: 2 },
 *   { text: "continue (verification failed: command)" },
 * ];
 * assert.deepEqual(fitRows(fields, 80), [
 *   "[finishline] iteration 1/3 · 2.1s · continue (verification failed: command)",
 * ]);
 * assert.deepEqual(fitRows(fields, 70), [
 *   "[finishline] iteration 1/3 · continue (verification failed: command)",
 * ]);
 * assert.deepEqual(fitRows(fields, 60), ["[finishline] 1/3 · continue (verification failed: command)"]);
 * assert.deepEqual(fitRows(fields, 40), [
 *   "[finishline] 1/3",
 *   "  continue (verification failed:",
 *   "  command)",
 * ]);
 * ```
 */
export function fitRows(fields: Field[], width: number): string[] {
  width = Math.max(MIN_WIDTH, width);
  // A field shrunk early (the label) comes back when one shrunk later made room.
  const shrunk = shrink(fields, width, true).filter((field) => field.text !== "");
  const line = joinFields(shrunk);
  if (displayWidth(line) <= width) return [line];
  const rows: string[] = [];
  let row = "";
  for (const field of shrunk) {
    const joined = row === "" ? field.text : `${row}${field.join ?? " · "}${field.text}`;
    if (displayWidth(joined) <= width) {
      row = joined;
      continue;
    }
    if (row !== "") rows.push(row);
    const lead = rows.length === 0 ? "" : INDENT;
    const pieces = wrapWords(field.text, width - lead.length, width - INDENT.length);
    rows.push(...pieces.slice(0, -1).map((piece, i) => (i === 0 ? lead : INDENT) + piece));
    row = (pieces.length === 1 ? lead : INDENT) + pieces.at(-1)!;
  }
  if (row !== "") rows.push(row);
  return rows;
}

/**
 * Wrap a text at spaces: the first piece fits `first` columns, the others
 * `rest`; a word wider than a row is split.
 */
function wrapWords(text: string, first: number, rest: number): string[] {
  const pieces: string[] = [];
  let piece = "";
  const room = () => pieces.length === 0 ? first : rest;
  for (const word of text.split(" ")) {
    const joined = piece === "" ? word : `${piece} ${word}`;
    if (displayWidth(joined) <= room()) {
      piece = joined;
      continue;
    }
    if (piece !== "") pieces.push(piece);
    piece = word;
    while (displayWidth(piece) > room()) {
      const head = splitAt(piece, room());
      pieces.push(head);
      piece = piece.slice(head.length);
    }
  }
  pieces.push(piece);
  return pieces;
}

/** The longest start of a text that fits the columns (at least one character). */
function splitAt(text: string, width: number): string {
  let out = "";
  for (const char of text) {
    if (out !== "" && displayWidth(out + char) > width) break;
    out += char;
  }
  return out;
}
