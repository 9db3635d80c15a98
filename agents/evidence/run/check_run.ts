/**
 * One run of one of the repository's checks: its exit, the failing tests its
 * output names, the tests it counts, and the tail of its output.
 *
 * @module
 */

import type { TestCounts } from "../../record/iteration.ts";
import { runShell } from "../../support/process.ts";
import { stopTagged } from "../../support/process_tags.ts";
import { checkEnvironment } from "./check_env.ts";
import type { BuildSystem } from "./build_folder.ts";
import {
  parseTestReport,
  plainLines,
  testCounts,
  type TestRunner,
  testsRun,
} from "./test_report.ts";

/** The variable that tags the processes of one check run (its value: a fresh id per run). */
export const CHECK_TAG = "FINISHLINE_CHECK_RUN";

/** One check of the repository: a shell command that passes when it exits 0. */
export interface RepoCheck {
  /** Its name (usually the command). */
  name: string;
  /** The shell command, run at the repository root. */
  command: string;
  /** The test runner whose output names failing tests, when known. */
  runner?: TestRunner;
  /**
   * The build system whose build folder the command keeps where
   * `FINISHLINE_BUILD_DIR` names one (detected Meson, CMake and autotools
   * checks); elsewhere it builds in a temp folder of its own.
   */
  buildFolder?: BuildSystem;
  /**
   * The command's configure and build steps alone, in the same kept folder
   * (no tests run): what finishline builds the seed of a claim's changed
   * build definitions with (`copy/claim_seed.ts`). Detected with
   * {@linkcode RepoCheck.buildFolder}.
   */
  buildOnly?: string;
}

/** One run of a check. */
export interface CheckRun {
  /** The check's name. */
  name: string;
  /**
   * Whether it passed: it exited 0 within its timeout and its output reports
   * no failed test.
   */
  green: boolean;
  /** Exit code. */
  code: number;
  /** Whether it was stopped at its timeout. */
  timedOut: boolean;
  /** Failing tests named by the output. */
  failing: string[];
  /** Tests that ran (passed + failed), when the output says. */
  testsRun?: number;
  /** Tests run, passed, failed, skipped, ignored and todo, as far as the output says. */
  counts?: TestCounts;
  /** Tests the output names as skipped, ignored or todo. */
  skippedTests?: string[];
  /** Wall time in milliseconds. */
  durationMs: number;
  /** The last lines of its output. */
  tail: string;
}

export { type CheckVariable, describeCheckEnvironment } from "./check_env.ts";

/** Lines of output kept in a run's tail. */
const TAIL_LINES = 25;

/**
 * Run one check and read its output for failing tests.
 *
 * @param check The check.
 * @param options Folder, timeout, the kept build folder (`FINISHLINE_BUILD_DIR`, unset
 * without it), and variables over the check environment's.
 * @returns The run.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runRepoCheck } from "./check_run.ts";
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
  options: {
    cwd: string;
    timeoutMs: number;
    signal?: AbortSignal;
    pycache?: string;
    /** The check's kept build folder ({@linkcode RepoCheck.buildFolder}). */
    buildDir?: string;
    /** More variables, over the check environment's (a coverage probe's). */
    env?: Record<string, string>;
  },
): Promise<CheckRun> {
  const started = performance.now();
  // A fresh home for each run: nothing one run writes there reaches the next.
  const environment = await checkEnvironment({
    pycache: options.pycache,
    cwd: options.cwd,
    buildDir: options.buildDir,
  });
  // Every process the run starts carries its own tag, even one that left the check's process
  // group (a daemon in a session of its own): stopped when the run ends, so that nothing
  // it started writes into the copy while the next check, or the same check again, runs.
  const tag = crypto.randomUUID();
  const result = await runShell(check.command, {
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    env: { ...environment.env, ...options.env, [CHECK_TAG]: tag },
  }).finally(async () => {
    await stopTagged(CHECK_TAG, tag, { graceMs: 500 });
    await environment.dispose();
  });
  const report = parseTestReport(result.combined, check.runner);
  // node --test names a file that fails as a whole by its absolute path: the copy's
  // folder differs at each end, the test does not.
  const roots = [options.cwd, await Deno.realPath(options.cwd).catch(() => options.cwd)];
  const named = (names: string[]) => names.map((name) => withoutRoots(name, roots));
  // An exit code of 0 proves nothing when the runner's own summary counts
  // failures (`jest || true`, a script that forgets its exit code).
  const green = result.code === 0 && !result.timedOut && (report.failedCount ?? 0) === 0;
  const counts = testCounts(report);
  return {
    name: check.name,
    green,
    code: result.code,
    timedOut: result.timedOut,
    failing: green ? [] : named(report.failed),
    testsRun: testsRun(report),
    ...(counts !== undefined ? { counts } : {}),
    ...(report.skippedTests !== undefined ? { skippedTests: named(report.skippedTests) } : {}),
    durationMs: Math.round(performance.now() - started),
    tail: tailOf(result.combined),
  };
}

/** A test name with the folder it ran in made relative: `/tmp/x/tree/a.test.ts` is `a.test.ts`. */
function withoutRoots(name: string, roots: string[]): string {
  let result = name;
  for (const root of roots) {
    const prefix = root.endsWith("/") ? root : `${root}/`;
    if (prefix !== "/" && prefix !== "./") result = result.replaceAll(prefix, "");
  }
  return result;
}

/** The last lines of an output, as plain text (the user's environment may ask for colour). */
function tailOf(output: string): string {
  return plainLines(output).join("\n").trimEnd().split("\n").slice(-TAIL_LINES).join("\n");
}

/** Failing tests named in feedback before "and N more". */
const NAMES_SHOWN = 20;

/**
 * The exit, the failing tests and the output's last lines of a run, as a
 * clause for feedback. Given the run at the baseline, the failing tests are
 * told apart: those that were not failing before the agent's changes, and
 * those that were.
 *
 * @param run The run.
 * @param before The same check's run at the baseline, when there was one.
 * @returns Text starting with "; ".
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { describeRun } from "./check_run.ts";
 *
 * const run = {
 *   name: "npm test", green: false, code: 1, timedOut: false,
 *   failing: ["adds", "divides"], durationMs: 5, tail: "not ok 1 - adds",
 * };
 * assert.equal(
 *   describeRun(run),
 *   '; it exited with code 1; failing tests: "adds", "divides". Last lines of its output:\nnot ok 1 - adds',
 * );
 * assert.equal(
 *   describeRun(run, { ...run, failing: ["divides"] }),
 *   '; it exited with code 1; new failures (not failing before your changes): "adds"; ' +
 *     'failing before your changes too: "divides". Last lines of its output:\nnot ok 1 - adds',
 * );
 * assert.match(
 *   describeRun({ ...run, code: 0, counts: { failed: 4 } }),
 *   /^; it exited 0 but its output reports 4 failed tests;/,
 * );
 * ```
 */
export function describeRun(run: CheckRun, before?: CheckRun): string {
  const parts: string[] = [];
  if (run.timedOut) parts.push(`; it timed out`);
  else if (run.code === 0 && !run.green) {
    const failed = run.counts?.failed;
    parts.push(
      `; it exited 0 but its output reports ${
        failed === undefined
          ? "failed tests"
          : `${failed} failed ${failed === 1 ? "test" : "tests"}`
      }`,
    );
  } else parts.push(`; it exited with code ${run.code}`);
  // Names at the baseline tell old failures from new; a red baseline without names cannot.
  const earlier = before === undefined || (!before.green && before.failing.length === 0)
    ? undefined
    : new Set(before.green ? [] : before.failing);
  if (earlier === undefined) {
    if (run.failing.length > 0) parts.push(`; failing tests: ${nameList(run.failing)}`);
  } else {
    const fresh = run.failing.filter((name) => !earlier.has(name));
    const old = run.failing.filter((name) => earlier.has(name));
    if (fresh.length > 0) {
      parts.push(`; new failures (not failing before your changes): ${nameList(fresh)}`);
    }
    if (old.length > 0) parts.push(`; failing before your changes too: ${nameList(old)}`);
  }
  const tail = run.tail.split("\n").slice(-12).join("\n");
  parts.push(tail ? `. Last lines of its output:\n${tail}` : ". It printed nothing");
  return parts.join("");
}

/**
 * Test names for feedback, quoted, the first twenty and how many more.
 *
 * @param names The names.
 * @returns `"a", "b" and 3 more`.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { nameList } from "./check_run.ts";
 *
 * assert.equal(nameList(["adds"]), '"adds"');
 * const many = Array.from({ length: 23 }, (_, i) => `t${i}`);
 * assert.match(nameList(many), /"t19" and 3 more$/);
 * ```
 */
export function nameList(names: string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).map((name) => `"${name}"`).join(", ");
  return names.length > NAMES_SHOWN ? `${shown} and ${names.length - NAMES_SHOWN} more` : shown;
}
