/**
 * Progress on stderr: one line per iteration, lines for probes, rescues and
 * retries, a final line with the outcome in a sentence for people, and on a
 * terminal a live status line. On a terminal every line fits its width: the fields that matter
 * least shrink first, and the verdict is never cut.
 *
 * @module
 */

import { toolCallsOf } from "./tool_detail.ts";
import { COMPLETE_TASK_TOOL } from "../../record/complete_task_tool.ts";
import { countTools, seconds, shortToolName, usd } from "../../support/format.ts";
import { displayWidth, type Field, fitRow, fitRows, joinFields } from "./fit.ts";
import { outcomeSentence } from "../../loop/outcome_text.ts";
import { LiveCost } from "./live_cost.ts";
import { apiRetryCause } from "../../loop/faults.ts";
import type { LiveLine } from "./live_line.ts";
import type { RunEvent, RunResult } from "../../loop/runner.ts";

export type { LiveLine } from "./live_line.ts";

const PREFIX: Field = { text: "[finishline]" };

/**
 * The tools field: short names counted (`tools: Bash×3, complete_task`),
 * shrinking to the first ones and how many more, then dropped. When it
 * shrinks, `complete_task` (the agent's claim that finishline judges) is
 * the last one left out.
 *
 * @param names Tool names with repeats.
 * @param empty The text when there are none; `""` leaves the field out.
 * @param dropRank The rank of dropping the field, when it differs from
 * that of shortening it (5): the live line drops the tools after its label.
 * @returns The field.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolsField } from "./progress.ts";
 * const field = toolsField(["Bash", "Read", "Bash", "mcp__finishline__complete_task"], "none");
 * assert.equal(field.text, "tools: Bash×2, Read, complete_task");
 * assert.deepEqual(field.shorter, [
 *   "tools: complete_task, Bash×2 +1",
 *   "tools: complete_task +2",
 *   "",
 * ]);
 * assert.deepEqual(toolsField(["Bash", "Read"], "", 3.5).ranks, [5, 3.5]);
 * ```
 */
export function toolsField(names: string[], empty: string, dropRank = TOOLS_RANK): Field {
  const counted = countTools(names);
  if (counted === "") {
    return { text: empty === "" ? "" : `tools: ${empty}`, shorter: [""], rank: TOOLS_RANK };
  }
  const tools = counted.split(", ");
  const claim = shortToolName(COMPLETE_TASK_TOOL);
  const kept = [
    ...tools.filter((tool) => tool.split("×")[0] === claim),
    ...tools.filter((tool) => tool.split("×")[0] !== claim),
  ];
  const shorter: string[] = [];
  for (let shown = tools.length - 1; shown >= 1; shown--) {
    shorter.push(`tools: ${kept.slice(0, shown).join(", ")} +${tools.length - shown}`);
  }
  return {
    text: `tools: ${counted}`,
    shorter: [...shorter, ""],
    rank: TOOLS_RANK,
    ...(dropRank === TOOLS_RANK ? {} : { ranks: [...shorter.map(() => TOOLS_RANK), dropRank] }),
  };
}

/** The tools shorten before any other field of a line. */
const TOOLS_RANK = 5;

/** Fit fields to a width when one is known; else join them as they are. */
function fit(fields: Field[], width?: number): string {
  return width === undefined ? joinFields(fields) : fitRows(fields, width).join("\n");
}

/**
 * The line printed after an iteration: number, duration, cost, tools and
 * verdict. Given a width, the tools shrink first, then the duration, the
 * cost and the word "iteration"; the verdict stays whole (the line flows
 * onto a second row rather than cut it).
 *
 * @param event The iteration_finished event.
 * @param width The terminal's columns, when known.
 * @returns The line (rows joined by newlines when it flows).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { iterationLine } from "./progress.ts";
 * import type { RunEvent } from "../../loop/runner.ts";
 * import { emptySummary } from "../../record/iteration.ts";
 * const event: Extract<RunEvent, { type: "iteration_finished" }> = {
 *   type: "iteration_finished", iteration: 1, maxIterations: 3,
 *   summary: { ...emptySummary(1), toolsUsed: ["Bash", "Bash", "mcp__finishline__complete_task"],
 *     durationMs: 2100, costUsd: 0.0012 },
 *   verdict: "continue" };
 * assert.equal(iterationLine(event),
 *   "[finishline] iteration 1/3 · 2.1s · $0.0012 · tools: Bash×2, complete_task · continue");
 * assert.equal(iterationLine(event, 60), "[finishline] iteration 1/3 · 2.1s · $0.0012 · continue");
 * assert.equal(iterationLine(event, 72), "iteration 1/3 · 2.1s · $0.0012 · tools: Bash×2, complete_task · continue");
 * ```
 */
export function iterationLine(
  event: Extract<RunEvent, { type: "iteration_finished" }>,
  width?: number,
): string {
  const { summary } = event;
  const of = `${event.iteration}/${event.maxIterations}`;
  // As the live line: the tools shorten first, then the label goes (at 80 columns the
  // short tools stay), then the tools, the duration and the cost.
  return fit([
    { ...PREFIX, shorter: [""], rank: 4 },
    { text: `iteration ${of}`, join: " ", shorter: [of], rank: 1 },
    { text: seconds(summary.durationMs), shorter: [""], rank: 3 },
    { text: usd(summary.costUsd), shorter: [""], rank: 2 },
    toolsField(summary.toolsUsed, "none", 3.5),
    { text: event.verdict },
  ], width);
}

/** Where a run's details are, and how to go on with it, for its final line. */
export interface FinalLineFacts {
  /** The Markdown report, when it was written. */
  report?: string;
  /** The JSONL log: named when there is no report. */
  log?: string;
  /** The command that resumes the run (said when it was interrupted). */
  resume?: string;
}

/**
 * The final line of a run: one sentence for people (how it ended and what
 * failed: never the feedback written for the agent), its iterations, time
 * and cost, and where the details are. Given a width, it wraps at spaces
 * onto indented rows; the report's path is never cut (it moves to a row of
 * its own and the terminal wraps it).
 *
 * @param result The run's result.
 * @param width The terminal's columns, when known.
 * @param facts The report, the log and the resume command.
 * @returns The line (rows joined by newlines when it flows).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { finalLine } from "./progress.ts";
 * const result = { status: "max_iterations", iterations: 3, costUsd: 0.5, durationMs: 9000,
 *   summaries: [], completionReason: "Reached the cap of 3 iterations; `npm test` still fails (1 failing test: adds)" };
 * assert.equal(finalLine(result as never, undefined, { report: "/r/run.md" }),
 *   "[finishline] Stopped at the iteration cap (3): `npm test` still fails (1 failing test: adds); " +
 *     "3 iterations in 9.0s for $0.5000; details in the report: /r/run.md");
 * assert.equal(finalLine(result as never, 60, { report: "/r/run.md" }), [
 *   "[finishline] Stopped at the iteration cap (3): `npm test`",
 *   "  still fails (1 failing test: adds); 3 iterations in 9.0s",
 *   "  for $0.5000; details in the report: /r/run.md",
 * ].join("\n"));
 * ```
 */
export function finalLine(result: RunResult, width?: number, facts: FinalLineFacts = {}): string {
  const iterations = `${result.iterations} iteration${result.iterations === 1 ? "" : "s"}`;
  const details = facts.report
    ? `details in the report: ${facts.report}`
    : facts.log
    ? `no report was written; the log: ${facts.log}`
    : "";
  // One text that wraps at spaces: the sentence starts on the first row.
  const line = `${PREFIX.text} ${outcomeSentence(result, facts.resume)}; ${iterations} in ${
    seconds(result.durationMs)
  } for ${usd(result.costUsd)}`;
  if (width === undefined) return details === "" ? line : `${line}; ${details}`;
  const rows = fitRows([{ text: line }], width);
  if (details === "") return rows.join("\n");
  // Paths are copied: never cut, on the last row when it fits, else on a row of their own.
  const last = `${rows.at(-1)}; ${details}`;
  if (displayWidth(last) <= Math.max(width, 8)) rows[rows.length - 1] = last;
  else rows[rows.length - 1] += ";", rows.push(`  ${details}`);
  return rows.join("\n");
}

/**
 * A line about one iteration's event: `[finishline] iteration N: ...`, the
 * iteration shrinking to `it N:` and then dropped.
 */
function eventLine(iteration: number, fields: Field[], width?: number): string {
  return fit([
    PREFIX,
    { text: `iteration ${iteration}:`, join: " ", shorter: [`it ${iteration}:`, ""], rank: 1 },
    ...fields.map((field) => ({ join: " ", ...field })),
  ], width);
}

/** The printed line for an event, or undefined when the event prints none. */
function eventText(event: RunEvent, width?: number): string | undefined {
  switch (event.type) {
    case "iteration_finished":
      return iterationLine(event, width);
    case "probe":
      return fit([
        PREFIX,
        { text: "status probe:", join: " " },
        { text: event.status.status, join: " " },
        event.status.message
          ? { text: `(${event.status.message})`, join: " ", elide: 12, rank: 2 }
          : { text: "" },
      ], width);
    case "probe_skipped":
      return fit([
        PREFIX,
        { text: "status probe:", join: " " },
        {
          text: `stopped, ${event.newCommits} new commit${event.newCommits === 1 ? "" : "s"}`,
          join: " ",
        },
      ], width);
    case "rescue":
      return fit([
        PREFIX,
        { text: `commit rescue by the ${event.by}:`, join: " " },
        { text: event.clean ? "work committed" : "changes still uncommitted", join: " " },
      ], width);
    case "final_rescue":
      return fit([
        PREFIX,
        {
          text: event.by === "none"
            ? `final rescue (${event.status}):`
            : `final rescue (${event.status}) by the ${event.by}:`,
          join: " ",
        },
        {
          text: event.left.length === 0
            ? `work committed${event.commit ? ` (${event.commit.slice(0, 7)})` : ""}`
            : `left uncommitted: ${event.left.join(", ")}`,
          join: " ",
          elide: 20,
          rank: 2,
        },
      ], width);
    case "retry":
      return eventLine(event.iteration, [
        { text: `retrying in ${seconds(event.waitMs)}` },
        { text: `(attempt ${event.attempt} failed: ${event.reason})`, elide: 20, rank: 2 },
      ], width);
    case "api_retry":
      return eventLine(event.iteration, [{
        text: `API retry ${event.attempt}/${event.maxRetries} (${
          apiRetryCause(event, event.cause)
        }), next in ${seconds(event.waitMs)}`,
      }], width);
    default:
      return undefined;
  }
}

/** How progress is shown. */
export type ProgressMode = "live" | "plain" | "quiet" | "verbose";

/**
 * The progress mode: `--quiet` and `--verbose` win; otherwise a live status
 * line on a terminal, plain lines on a pipe or with `CI=true`.
 *
 * @param flags `quiet` and `verbose`.
 * @param environment Whether stderr is a terminal, whether `CI` is set to a true value.
 * @returns The mode.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { progressMode } from "./progress.ts";
 * assert.equal(progressMode({ quiet: false, verbose: false }, { terminal: true, ci: false }), "live");
 * assert.equal(progressMode({ quiet: false, verbose: false }, { terminal: true, ci: true }), "plain");
 * assert.equal(progressMode({ quiet: true, verbose: false }, { terminal: true, ci: false }), "quiet");
 * ```
 */
export function progressMode(
  flags: { quiet: boolean; verbose: boolean },
  environment: { terminal: boolean; ci: boolean },
): ProgressMode {
  if (flags.quiet) return "quiet";
  if (flags.verbose) return "verbose";
  return environment.terminal && !environment.ci ? "live" : "plain";
}

/** The live status line's state. */
export interface StatusLine {
  /** Current iteration. */
  iteration: number;
  /** Iteration cap. */
  maxIterations: number;
  /** Milliseconds since the current iteration started. */
  iterationMs: number;
  /** Milliseconds since the run started. */
  runMs: number;
  /** The cost so far (`$0.0123`, `~$0.0150`, `4.1k tokens`); `""` when unknown. */
  cost: string;
  /** The tools the agent used in this iteration, with repeats. */
  tools: string[];
  /** The check running now (the gate's `npm test`), and for how long. */
  check?: { name: string; ms: number };
}

/**
 * A clock for people: `0:07`, `1:40`, `1:02:03`.
 *
 * @param ms Milliseconds.
 * @returns The text.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { clock } from "./progress.ts";
 * assert.equal(clock(7_400), "0:07");
 * assert.equal(clock(100_000), "1:40");
 * assert.equal(clock(3_723_000), "1:02:03");
 * ```
 */
export function clock(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const pad = (n: number) => String(n).padStart(2, "0");
  const [h, m, s] = [Math.floor(total / 3600), Math.floor(total / 60) % 60, total % 60];
  return h > 0 ? `${h}:${pad(m)}:${pad(s)}` : `${m}:${pad(s)}`;
}

/**
 * The text of the live status line: the iteration, its time and the run's
 * (both labelled), the check running now, the cost so far and the
 * iteration's tools. Given a width, the tools shorten first, then the
 * `finishline` label goes, then the tools, a long check's name is cut, then
 * the run's time goes, the cost, the word "iteration"; a label dropped
 * early comes back when a later drop made room for it.
 *
 * @param state The run's state.
 * @param width The columns the line may take, when known.
 * @returns One row.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { statusLine } from "./progress.ts";
 * const state = { iteration: 2, maxIterations: 5, iterationMs: 12_000, runMs: 100_000,
 *   cost: "~$0.0150", tools: ["Bash", "Bash", "Read", "mcp__finishline__complete_task"] };
 * assert.equal(statusLine(state),
 *   "finishline iteration 2/5 · it 0:12 · run 1:40 · ~$0.0150 · tools: Bash×2, Read, complete_task");
 * assert.equal(statusLine(state, 79),
 *   "iteration 2/5 · it 0:12 · run 1:40 · ~$0.0150 · tools: complete_task, Bash×2 +1");
 * assert.equal(statusLine(state, 59), "finishline iteration 2/5 · it 0:12 · run 1:40 · ~$0.0150");
 * const checking = { ...state, check: { name: "npm test", ms: 4_000 } };
 * assert.equal(statusLine(checking, 79),
 *   "iteration 2/5 · it 0:12 · checking npm test 0:04 · run 1:40 · ~$0.0150");
 * ```
 */
export function statusLine(state: StatusLine, width?: number): string {
  const of = `${state.iteration}/${state.maxIterations}`;
  const check: Field[] = state.check
    ? [
      // A long command is cut before the run's time goes, never below "checking " and 11 columns.
      { text: `checking ${state.check.name}`, elide: 20, rank: 3.2 },
      { text: clock(state.check.ms), join: " " },
    ]
    : [];
  const fields: Field[] = [
    { text: "finishline", shorter: [""], rank: 4 },
    { text: `iteration ${of}`, join: " ", shorter: [of], rank: 1 },
    { text: `it ${clock(state.iterationMs)}` },
    ...check,
    { text: `run ${clock(state.runMs)}`, shorter: [""], rank: 3 },
    { text: state.cost, shorter: [""], rank: 2 },
    toolsField(state.tools, "", 3.5),
  ];
  return width === undefined ? joinFields(fields) : fitRow(fields, width, { regrow: true });
}

/** Shows a run's progress on stderr. */
export interface ProgressReporter {
  /** Handle a runner event. */
  onEvent(event: RunEvent): void;
  /**
   * Write other text to stderr (whole lines) without breaking the live line.
   *
   * @param text Lines, each ending in a newline.
   */
  stderr(text: string): void;
  /** Stop the live line (before the final lines). */
  stop(): void;
}

/** Options of {@linkcode createReporter}. */
export interface ReporterOptions {
  /** Writes one line (without its newline) to stderr. */
  write: (line: string) => void;
  /** Opens the live status line (live mode). */
  live?: () => LiveLine;
  /** The terminal's columns; lines are fitted to them when known. @default unknown */
  columns?: () => number | undefined;
  /** The clock. @default performance.now */
  now?: () => number;
}

/**
 * Build the reporter for a mode: plain lines (one per iteration, plus
 * probes, rescues, the runner's retries and Claude Code's API retries), the
 * same with the agent's text, tool calls and checks (verbose), nothing but
 * errors and the final line (quiet), or those lines above a live status
 * line that is redrawn every second and shows the check running (live).
 *
 * @param mode The mode.
 * @param options Where lines go, the live line, the width, the clock.
 * @returns The reporter.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { createReporter } from "./progress.ts";
 * const lines: string[] = [];
 * const reporter = createReporter("plain", { write: (line) => lines.push(line) });
 * reporter.onEvent({ type: "retry", iteration: 1, attempt: 1, reason: "API error: overloaded", waitMs: 2000 });
 * assert.equal(lines[0], "[finishline] iteration 1: retrying in 2.0s (attempt 1 failed: API error: overloaded)");
 * reporter.onEvent({ type: "api_retry", iteration: 1, attempt: 3, maxRetries: 10, status: 529,
 *   error: "overloaded", waitMs: 4800 });
 * assert.equal(lines[1], "[finishline] iteration 1: API retry 3/10 (529 overloaded), next in 4.8s");
 * ```
 */
export function createReporter(mode: ProgressMode, options: ReporterOptions): ProgressReporter {
  const now = options.now ?? (() => performance.now());
  const width = () => options.columns?.();
  const run = { started: now(), iterationStarted: now(), iteration: 0, maxIterations: 0 };
  const tools: string[] = [];
  const cost = new LiveCost();
  let check: { name: string; started: number } | undefined;
  let line: LiveLine | undefined;
  let timer: ReturnType<typeof setInterval> | undefined;
  /** Tool calls seen in the agent's messages and not yet reported (--verbose). */
  const details: Array<{ name: string; detail?: string }> = [];
  const render = (columns: number) =>
    statusLine({
      ...run,
      iterationMs: now() - run.iterationStarted,
      runMs: now() - run.started,
      cost: cost.text(),
      tools,
      ...(check ? { check: { name: check.name, ms: now() - check.started } } : {}),
    }, columns);
  const print = (text: string) => {
    if (line) line.print(`${text}\n`);
    else options.write(text);
  };
  const handlers: Partial<
    { [T in RunEvent["type"]]: (event: Extract<RunEvent, { type: T }>) => void }
  > = {
    iteration_started: (event) => {
      const { iteration, maxIterations } = event;
      Object.assign(run, { iteration, maxIterations, iterationStarted: now() });
      tools.length = 0;
      check = undefined;
      if (mode === "live" && options.live && !line) {
        line = options.live();
        timer = setInterval(() => line?.show(render), 1000);
      }
    },
    message: (event) => {
      cost.add(event.message);
      if (mode === "verbose") details.push(...toolCallsOf(event.message));
    },
    tool: (event) => {
      tools.push(event.name);
      if (mode !== "verbose") return;
      // The call's detail, from the message the tool event came from.
      const at = details.findIndex((call) => call.name === event.name);
      const detail = at === -1 ? undefined : details.splice(0, at + 1).at(-1)?.detail;
      print(`  [tool] ${event.name}${detail ? `: ${detail}` : ""}`);
    },
    text: (event) => {
      if (mode === "verbose") {
        print(`  [agent] ${event.text.trim().replace(/\n/g, "\n          ")}`);
      }
    },
    check: (event) => {
      if (event.running) check = { name: event.name, started: now() };
      else if (check?.name === event.name) check = undefined;
      if (mode === "verbose" && event.running) print(`  [check] ${event.name}`);
    },
    iteration_finished: (event) => {
      cost.finishIteration(event.summary.costUsd);
      check = undefined;
    },
  };
  return {
    onEvent(event: RunEvent): void {
      (handlers[event.type] as ((event: RunEvent) => void) | undefined)?.(event);
      const text = mode === "quiet" ? undefined : eventText(event, width());
      if (text !== undefined) print(text);
      else line?.show(render);
    },
    stderr(text: string): void {
      if (line) line.print(text);
      else options.write(text.replace(/\n$/, ""));
    },
    stop(): void {
      if (timer !== undefined) clearInterval(timer);
      line?.finish();
      line = undefined;
    },
  };
}
