/**
 * The test of a bug fix: at least one of the worker's new or changed test
 * files must hold a test that fails on the starting commit (run there with
 * the worker's versions of the test files and nothing else of its change)
 * and passes on the claim; or a test the repository already had, red at the
 * baseline, passes on the claim in its original form (it is the repository's
 * own reproduction of the bug). A fix whose tests pass without it shows
 * nothing about the bug.
 *
 * @module
 */

import type { ChecksEvidence } from "../../record/iteration.ts";
import type { CheckRun } from "../run/check_run.ts";
import { isLoadFailure, setupError } from "../held_out/reproduction.ts";

/**
 * The worker's test files worth running on the starting commit: added,
 * modified or renamed files protected as test files. Runner configuration
 * and sources with inline tests are not (the source would carry the fix).
 *
 * @param changes The protected files the worker changed.
 * @returns Their paths.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { workerTestFiles } from "./fail_to_pass.ts";
 *
 * assert.deepEqual(
 *   workerTestFiles([
 *     { path: "test/math.test.js", change: "modified", why: "test file" },
 *     { path: "test/old.test.js", change: "deleted", why: "test file" },
 *     { path: "package.json", change: "modified", why: "runner configuration" },
 *     { path: "src/lib.rs", change: "modified", why: "adds #[test]" },
 *   ]),
 *   ["test/math.test.js"],
 * );
 * ```
 */
export function workerTestFiles(changes: ChecksEvidence["testsChanged"]): string[] {
  return changes
    .filter((entry) =>
      entry.change !== "deleted" && (entry.why ?? "").split("; ").includes("test file")
    )
    .map((entry) => entry.path);
}

/**
 * The tests that flipped: named failing in a check's run on the starting
 * commit with the worker's test files, and passing in the same check on the
 * claim (the check green, or the test no longer among its failures). A
 * runner that names no tests counts as one test, named by its check, when
 * it was red at the start and is green on the claim. A failure to parse,
 * import or build, or a test file that did not load, does not count: it
 * says nothing about the bug.
 *
 * @param atStart The checks on the starting commit with the worker's test files.
 * @param final The same checks on the claim.
 * @returns The flipped tests, without repeats.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { flippedTests } from "./fail_to_pass.ts";
 *
 * const run = (green: boolean, failing: string[]) =>
 *   ({ name: "npm test", green, code: green ? 0 : 1, timedOut: false, failing, durationMs: 1, tail: "" });
 * assert.deepEqual(flippedTests([run(false, ["subtract subtracts"])], [run(true, [])]), [
 *   "subtract subtracts",
 * ]);
 * assert.deepEqual(flippedTests([run(true, [])], [run(true, [])]), []);
 * ```
 */
export function flippedTests(atStart: CheckRun[], final: CheckRun[]): string[] {
  const flipped: string[] = [];
  for (const run of atStart) {
    // A test that does not parse, import or build at the start shows nothing about the bug.
    if (run.green || setupError(run.tail)) continue;
    const now = final.find((entry) => entry.name === run.name);
    if (!now) continue;
    if (run.failing.length === 0) {
      if (now.green) flipped.push(`the check "${run.name}" (its runner names no tests)`);
      continue;
    }
    const still = new Set(now.green ? [] : now.failing);
    for (const name of run.failing) {
      if (isLoadFailure(name)) continue;
      if (!still.has(name) && !flipped.includes(name)) flipped.push(name);
    }
  }
  return flipped;
}

/**
 * The tests the repository already had that failed at the baseline and pass
 * on the claim in their original form: each is a fail-to-pass test of the
 * fix that nobody had to write. Tests that were flaky at the baseline (they
 * passed when run again) do not count, nor do load failures.
 *
 * @param baseline Each check at the baseline, with the tests that were flaky there.
 * @param original The same checks on the claim, with every protected file
 *   the worker changed put back as it was (the claim's own runs when it
 *   changed none).
 * @returns The tests, without repeats.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fixedRedTests } from "./fail_to_pass.ts";
 *
 * const run = (green: boolean, failing: string[]) =>
 *   ({ name: "cargo test", green, code: green ? 0 : 101, timedOut: false, failing, durationMs: 1, tail: "" });
 * assert.deepEqual(
 *   fixedRedTests([{ run: run(false, ["tests::adds", "tests::flaky"]), flakyTests: ["tests::flaky"] }], [run(true, [])]),
 *   ["tests::adds"],
 * );
 * ```
 */
export function fixedRedTests(
  baseline: Array<{ run: CheckRun; flakyTests?: string[] }>,
  original: CheckRun[],
): string[] {
  const atStart = baseline.flatMap(({ run, flakyTests }) => {
    const flaky = new Set(flakyTests ?? []);
    const failing = run.failing.filter((name) => !flaky.has(name));
    // Every named failure was flaky: nothing failed for the bug.
    if (run.green || (run.failing.length > 0 && failing.length === 0)) return [];
    return [{ ...run, failing }];
  });
  return flippedTests(atStart, original);
}
