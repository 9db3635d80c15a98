/**
 * What a fleet shows while it works: on a terminal, one live row per run
 * going (issue, iteration, status, cost, time), each fitted to the width,
 * and a summary row, redrawn in place with printed lines going above them;
 * elsewhere, plain lines as things happen (a run starts, an iteration ends,
 * a run ends).
 *
 * @module
 */

import { stripControls } from "../../support/controls.ts";
import { displayWidth, type Field, fitRow, fitRows, joinFields } from "../terminal/fit.ts";
import { clock } from "../terminal/progress.ts";

/** One run going, as its live row shows it. */
export interface RunRow {
  /** Issue number. */
  number: number;
  /** Issue title. */
  title: string;
  /** The iteration working now (0 before the first). */
  iteration: number;
  /** The iteration cap, once known. */
  maxIterations?: number;
  /** `starting`, `running`, `finishing`, `waiting for run X`. */
  status: string;
  /** Cost so far in USD. */
  costUsd: number;
  /** Milliseconds since its process started. */
  elapsedMs: number;
}

/** The fleet as its summary row shows it. */
export interface FleetSummary {
  /** The fleet's short id. */
  id: string;
  /** Issues going, done, waiting. */
  going: number;
  /** Issues finished (any outcome). */
  done: number;
  /** Issues not started yet. */
  queued: number;
  /** Cost so far in USD. */
  costUsd: number;
  /** Milliseconds since the fleet started. */
  elapsedMs: number;
}

/**
 * A run's live row, fitted to the width: the title shrinks first, then the
 * time, the cost and the status; the issue number and the iteration stay.
 *
 * @param row The run.
 * @param width The columns available (none: not fitted).
 * @returns One row.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runRowText } from "./view.ts";
 * const row = { number: 12, title: "Fix the flaky login test", iteration: 2, maxIterations: 10,
 *   status: "running", costUsd: 0.0123, elapsedMs: 65_000 };
 * assert.equal(runRowText(row), "#12 Fix the flaky login test · iteration 2/10 · running · $0.0123 · 1:05");
 * assert.equal(runRowText(row, 55), "#12 Fix the fla… · iteration 2/10 · running · $0.0123");
 * assert.equal(runRowText(row, 40), "#12 Fix the fla… · 2/10 · running");
 * ```
 */
export function runRowText(row: RunRow, width?: number): string {
  const of = row.iteration === 0
    ? ""
    : `${row.iteration}${row.maxIterations ? `/${row.maxIterations}` : ""}`;
  const fields: Field[] = [
    { text: `#${row.number}` },
    { text: row.title, join: " ", elide: 12, shorter: [], rank: 5 },
    { text: of ? `iteration ${of}` : "", shorter: [of] },
    { text: row.status, elide: 10, rank: 2 },
    { text: `$${row.costUsd.toFixed(4)}`, shorter: [""], rank: 3 },
    { text: clock(row.elapsedMs), shorter: [""], rank: 4 },
  ];
  return width === undefined ? joinFields(fields) : fitRow(fields, width);
}

/**
 * The fleet's summary row.
 *
 * @param summary The fleet.
 * @param width The columns available (none: not fitted).
 * @returns One row.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { summaryRowText } from "./view.ts";
 * const summary = { id: "1a2b3c4d", going: 2, done: 1, queued: 3, costUsd: 0.05, elapsedMs: 83_000 };
 * assert.equal(summaryRowText(summary), "fleet 1a2b3c4d · 2 going · 1 done · 3 queued · $0.0500 · 1:23");
 * ```
 */
export function summaryRowText(summary: FleetSummary, width?: number): string {
  const fields: Field[] = [
    { text: `fleet ${summary.id}`, shorter: ["fleet"], rank: 3 },
    { text: `${summary.going} going` },
    { text: `${summary.done} done` },
    { text: `${summary.queued} queued`, shorter: [`${summary.queued}q`], rank: 1 },
    { text: `$${summary.costUsd.toFixed(4)}`, shorter: [""], rank: 2 },
    { text: clock(summary.elapsedMs), shorter: [""], rank: 4 },
  ];
  return width === undefined ? joinFields(fields) : fitRow(fields, width);
}

/**
 * The fields of a printed line about an issue: `[finishline] #N Title:`
 * then the rest; the title shrinks first.
 *
 * @param number Issue number.
 * @param title Issue title.
 * @param rest The line's other fields.
 * @returns The fields, for {@linkcode FleetView.line}.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { joinFields } from "../terminal/fit.ts";
 * import { issueFields } from "./view.ts";
 * const fields = issueFields(7, "Fix the login test", { text: "started", join: " " });
 * assert.equal(joinFields(fields), "[finishline] #7 Fix the login test: started");
 * ```
 */
export function issueFields(number: number, title: string, ...rest: Field[]): Field[] {
  return [
    { text: `[finishline] #${number}` },
    { text: `${title}:`, join: " ", elide: 12, rank: 5 },
    ...rest,
  ];
}

/** Where the view draws. */
export interface ViewOptions {
  /** `live` (a terminal), `plain` (lines only) or `quiet` (nothing but errors). */
  mode: "live" | "plain" | "quiet";
  /** Writes to stderr. */
  write: (text: string) => void;
  /** The terminal's columns, when known. */
  columns: () => number | undefined;
}

const ERASE_LINE = "\x1b[2K";
const UP = "\x1b[1A";

/** The fleet's live rows and printed lines. */
export class FleetView {
  #options: ViewOptions;
  /** Widths of the rows on screen, top first. */
  #drawn: number[] = [];
  #rows: () => string[] = () => [];

  /**
   * A view that draws nothing until {@linkcode FleetView.show}.
   *
   * @param options The mode, where to write, the width.
   */
  constructor(options: ViewOptions) {
    this.#options = options;
  }

  /**
   * Whether live rows are drawn (a terminal).
   *
   * @returns True in live mode.
   */
  get live(): boolean {
    return this.#options.mode === "live";
  }

  /**
   * Print a line (above the live rows, which are redrawn under it). Given as
   * fields, it is fitted to the terminal's width in live mode, flowing onto
   * indented rows rather than cutting a field that cannot shrink.
   *
   * @param line One line without its newline, or its fields.
   * @param important Printed in quiet mode too.
   */
  line(line: string | Field[], important = false): void {
    const { mode } = this.#options;
    if (mode === "quiet" && !important) return;
    const text = stripControls(
      typeof line === "string"
        ? line
        : mode === "live"
        ? fitRows(line, this.#width() + 1).join("\n")
        : joinFields(line),
    );
    this.#options.write(`${this.#clear()}${text}\n${this.#draw()}`);
  }

  /**
   * Show the live rows (live mode only); `rows` is called again on every redraw.
   *
   * @param rows The rows' texts for a width.
   */
  show(rows: (width: number) => string[]): void {
    if (this.#options.mode !== "live") return;
    this.#rows = () => rows(this.#width());
    this.#options.write(this.#clear() + this.#draw());
  }

  /** Remove the live rows for good. */
  finish(): void {
    if (this.#drawn.length > 0) this.#options.write(this.#clear());
    this.#rows = () => [];
  }

  /** Erase the rows drawn, bottom up, ending at the first one's start. */
  #clear(): string {
    const columns = this.#width() + 1;
    const rows = this.#drawn.reduce(
      (sum, width) => sum + Math.max(1, Math.ceil(width / columns)),
      0,
    );
    this.#drawn = [];
    if (rows === 0) return "";
    return `\r${ERASE_LINE}${`${UP}${ERASE_LINE}`.repeat(rows - 1)}`;
  }

  /** The rows, one column short of the width, the last without a newline. */
  #draw(): string {
    const rows = this.#rows().map((row) => stripControls(row).replace(/[\r\n\t]/g, " "));
    this.#drawn = rows.map((row) => displayWidth(row));
    return rows.join("\n");
  }

  #width(): number {
    const columns = this.#options.columns();
    return Math.max(1, (columns && columns > 0 ? columns : 80) - 1);
  }
}
