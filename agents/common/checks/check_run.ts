/**
 * One run of one of the repository's checks: its exit, the failing tests its
 * output names, how many tests ran, and the tail of its output.
 *
 * @module
 */

import { runShell } from "../process.ts";
import { parseTestReport, plainLines, type TestRunner, testsRun } from "./test_report.ts";

/** One check of the repository: a shell command that passes when it exits 0. */
export interface RepoCheck {
  /** Its name (usually the command). */
  name: string;
  /** The shell command, run at the repository root. */
  command: string;
  /** The test runner whose output names failing tests, when known. */
  runner?: TestRunner;
}

/** One run of a check. */
export interface CheckRun {
  /** The check's name. */
  name: string;
  /** Whether it exited 0 within its timeout. */
  green: boolean;
  /** Exit code. */
  code: number;
  /** Whether it was stopped at its timeout. */
  timedOut: boolean;
  /** Failing tests named by the output. */
  failing: string[];
  /** Tests that ran, when the output says. */
  testsRun?: number;
  /** Wall time in milliseconds. */
  durationMs: number;
  /** The last lines of its output. */
  tail: string;
}

/** Lines of output kept in a run's tail. */
const TAIL_LINES = 25;

/**
 * Run one check and read its output for failing tests.
 *
 * @param check The check.
 * @param options Folder and timeout.
 * @returns The run.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runRepoCheck } from "@finishline/agents";
 *
 * const run = await runRepoCheck(
 *   { name: "tests", command: "echo 'not ok 1 - adds'; exit 1" },
 *   { cwd: ".", timeoutMs: 10_000 },
 * );
 * assert.equal(run.green, false);
 * assert.equal(run.code, 1);
 * assert.match(run.tail, /not ok 1 - adds/);
 * ```
 */
export async function runRepoCheck(
  check: RepoCheck,
  options: { cwd: string; timeoutMs: number; signal?: AbortSignal },
): Promise<CheckRun> {
  const started = performance.now();
  const result = await runShell(check.command, {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    // Runners colour and animate less without a terminal; CI=true makes jest/vitest print plainly.
    env: { CI: "true", NO_COLOR: "1", FORCE_COLOR: "0" },
  });
  const report = parseTestReport(result.combined, check.runner);
  const green = result.code === 0 && !result.timedOut;
  return {
    name: check.name,
    green,
    code: result.code,
    timedOut: result.timedOut,
    failing: green ? [] : report.failed,
    testsRun: testsRun(report),
    durationMs: Math.round(performance.now() - started),
    tail: tailOf(result.combined),
  };
}

/** The last lines of an output, as plain text (Deno colours its output whenever FORCE_COLOR is set). */
function tailOf(output: string): string {
  return plainLines(output).join("\n").trimEnd().split("\n").slice(-TAIL_LINES).join("\n");
}

/**
 * The exit, the failing tests and the output's last lines of a run, as a
 * clause for feedback.
 *
 * @param run The run.
 * @returns Text starting with "; ".
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeRun } from "@finishline/agents";
 *
 * const text = describeRun({
 *   name: "npm test", green: false, code: 1, timedOut: false,
 *   failing: ["adds"], durationMs: 5, tail: "not ok 1 - adds",
 * });
 * assert.equal(text, '; it exited with code 1; failing tests: "adds". Last lines of its output:\nnot ok 1 - adds');
 * ```
 */
export function describeRun(run: CheckRun): string {
  const parts: string[] = [];
  if (run.timedOut) parts.push(`; it timed out`);
  else parts.push(`; it exited with code ${run.code}`);
  if (run.failing.length > 0) {
    const shown = run.failing.slice(0, 10).map((name) => `"${name}"`).join(", ");
    parts.push(
      `; failing tests: ${shown}${
        run.failing.length > 10 ? ` and ${run.failing.length - 10} more` : ""
      }`,
    );
  }
  const tail = run.tail.split("\n").slice(-12).join("\n");
  parts.push(tail ? `. Last lines of its output:\n${tail}` : ". It printed nothing");
  return parts.join("");
}
