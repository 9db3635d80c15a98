/**
 * The live status line on a terminal: one row at the bottom, redrawn in
 * place, with printed lines going above it. It erases every row it took
 * before drawing or printing (a terminal that narrowed since the last draw
 * has wrapped it onto more rows), so no fragment of it stays in the
 * scrollback, and it is redrawn at the new width when the terminal resizes.
 *
 * @module
 */

import { stripControls } from "../../support/controls.ts";
import { displayWidth } from "./fit.ts";

/** What a live status line does; the terminal's and the tests' fakes. */
export interface LiveLine {
  /**
   * Draw the line; `render` gets the columns it may use and is called again
   * on every redraw (a resize, a printed line).
   */
  show(render: (width: number) => string): void;
  /** Print text (whole lines, each ending in a newline) above the line. */
  print(text: string): void;
  /** Remove the line for good. */
  finish(): void;
}

/** Where a {@linkcode TerminalLine} draws. */
export interface TerminalLineOptions {
  /** Writes to the terminal. */
  write: (text: string) => void;
  /** The terminal's columns now; undefined when unknown (then 80). */
  columns: () => number | undefined;
}

const ERASE_LINE = "\x1b[2K";
const UP = "\x1b[1A";

/**
 * A live line drawn with carriage returns and erase sequences.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { TerminalLine } from "./live_line.ts";
 * let out = "";
 * let columns = 40;
 * const line = new TerminalLine({ write: (text) => out += text, columns: () => columns });
 * line.show((width) => "x".repeat(width));
 * assert.equal(out, "\r\x1b[2K" + "x".repeat(39));
 * out = "";
 * columns = 20; // the 39 columns drawn now take two rows
 * line.print("done\n");
 * assert.equal(out, "\r\x1b[2K\x1b[1A\x1b[2K" + "done\n" + "x".repeat(19));
 * ```
 */
export class TerminalLine implements LiveLine {
  #options: TerminalLineOptions;
  #render: ((width: number) => string) | undefined;
  /** Columns of the text on screen; 0 when none. */
  #drawn = 0;

  /**
   * A line that draws nothing until {@linkcode TerminalLine.show}.
   *
   * @param options Where to write, and the terminal's columns.
   */
  constructor(options: TerminalLineOptions) {
    this.#options = options;
  }

  /**
   * Draw (or redraw) the line.
   *
   * @param render The line's text for a width.
   */
  show(render: (width: number) => string): void {
    this.#render = render;
    this.#options.write(this.#clear() + this.#draw());
  }

  /**
   * Print whole lines above the line, then redraw it, in one write.
   *
   * @param text Lines, each ending in a newline.
   */
  print(text: string): void {
    // The text may be anyone's; the escapes around it are the line's own.
    this.#options.write(this.#clear() + stripControls(text) + this.#draw());
  }

  /** Redraw at the terminal's current width (after a resize). */
  redraw(): void {
    if (this.#render) this.show(this.#render);
  }

  /** Remove the line; printing still works and draws nothing after it. */
  finish(): void {
    if (this.#drawn > 0) this.#options.write(this.#clear());
    this.#drawn = 0;
    this.#render = undefined;
  }

  /**
   * Erase every row the line took, bottom up, ending at the first one. Rows
   * are erased one by one: erasing "to the end of the screen" from the top
   * row clears the whole screen, which tmux (`scroll-on-clear`) and some
   * terminals first copy into the scrollback.
   */
  #clear(): string {
    const rows = Math.max(1, Math.ceil(this.#drawn / this.#columns()));
    this.#drawn = 0;
    return `\r${ERASE_LINE}${`${UP}${ERASE_LINE}`.repeat(rows - 1)}`;
  }

  /** The line's text, one column short of the width: no terminal wraps it. */
  #draw(): string {
    if (!this.#render) return "";
    const text = stripControls(this.#render(Math.max(1, this.#columns() - 1))).replace(
      /[\r\n\t]/g,
      " ",
    );
    this.#drawn = displayWidth(text);
    return text;
  }

  #columns(): number {
    const columns = this.#options.columns();
    return columns && columns > 0 ? columns : 80;
  }
}

/**
 * The live line on this process's stderr, redrawn when the terminal
 * resizes, and removed when the process exits (a second Ctrl-C) without
 * finishing it.
 *
 * @param write Writes to stderr.
 * @returns The line; `finish()` also stops listening for resizes and the exit.
 */
export function stderrLine(write: (text: string) => void): LiveLine {
  const line = new TerminalLine({ write, columns: stderrColumns });
  const onResize = () => line.redraw();
  const onExit = () => line.finish();
  const resizes = Deno.build.os !== "windows";
  if (resizes) Deno.addSignalListener("SIGWINCH", onResize);
  globalThis.addEventListener("unload", onExit);
  return {
    show: (render) => line.show(render),
    print: (text) => line.print(text),
    finish: () => {
      if (resizes) Deno.removeSignalListener("SIGWINCH", onResize);
      globalThis.removeEventListener("unload", onExit);
      line.finish();
    },
  };
}

/**
 * The terminal's columns, or undefined when no terminal answers.
 *
 * @returns The columns.
 */
export function stderrColumns(): number | undefined {
  try {
    return Deno.consoleSize().columns;
  } catch {
    return undefined;
  }
}
