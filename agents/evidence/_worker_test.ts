/**
 * The worker's own fail-to-pass test, when the run requires one: its new or
 * changed test files run on a clean copy of the starting commit, and the
 * tests that fail there and pass on the claim; else a test the repository
 * already had that was red at the baseline and passes now, or the worker's
 * `no_test` declaration, for the reviewer to judge.
 *
 * @module
 */

import type { ChecksEvidence, WorkerTestEvidence } from "../record/iteration.ts";
import type { CheckRun } from "./run/check_run.ts";
import { flippedTests, workerTestFiles } from "./judge/fail_to_pass.ts";
import { assertionLines } from "./held_out/reproduction.ts";
import type { Claim, GateState } from "./_gate_state.ts";

/**
 * The worker's own fail-to-pass test: its new or changed test files on a
 * clean copy of the starting commit, the checks run there, and the tests
 * that fail there and pass on the claim. Remembered by the files' content.
 */
export async function workerTest(
  state: GateState,
  claim: Claim,
  base: string,
  changes: ChecksEvidence["testsChanged"],
  settled: Array<{ run: CheckRun }>,
  noTest: string | undefined,
  signal: AbortSignal | undefined,
  known: { redFixed: string[] },
): Promise<{ evidence: WorkerTestEvidence; problem?: string }> {
  const required = state.workerTestWhy!;
  const files = workerTestFiles(changes);
  const evidence: WorkerTestEvidence = { required, files, tests: [], passed: false };
  // The repository's own tests, red at the baseline and passing unchanged: the fix's evidence.
  const existing = () => ({
    evidence: { required, files: [], tests: known.redFixed, passed: true },
  });
  const ask = `add or change a test that fails on the starting commit (${
    base.slice(0, 12)
  }) and passes with your fix, and commit it`;
  const waived = () => {
    // The reviewer decides whether the reason stands.
    evidence.noTest = noTest;
    evidence.passed = true;
    return { evidence };
  };
  if (files.length === 0) {
    if (known.redFixed.length > 0) return existing();
    if (noTest) return waived();
    return {
      evidence,
      problem:
        `This run needs a test of the fix (${required}), and your commits add or change no test file: ${ask}. If no test can show the bug, say why in complete_task no_test; a reviewer decides whether the reason stands`,
    };
  }
  const listed = await state.copy!.objects.exec(["ls-tree", claim.head, "--", ...files]);
  const key = `${base}\n${listed.stdout}`;
  let atStart = state.workerTests.get(key);
  if (!atStart) {
    const ran = await runAtStart(state, claim, base, files, signal);
    if (typeof ran === "string") {
      return { evidence, problem: `Your tests could not be run on the starting commit: ${ran}` };
    }
    atStart = ran;
    if (!signal?.aborted) state.workerTests.set(key, atStart);
  }
  // Against this claim's runs: another commit with the same test files may pass other tests.
  evidence.tests = flippedTests(atStart, settled.map((entry) => entry.run));
  if (evidence.tests.length > 0) {
    // The reviewer decides whether what failed at the start is the bug.
    const said = atStart.flatMap((run) => run.green ? [] : assertionLines(run.tail, 3));
    if (said.length > 0) evidence.failedWith = said;
    evidence.passed = true;
    return { evidence };
  }
  if (known.redFixed.length > 0) return existing();
  if (noTest) return waived();
  return {
    evidence,
    problem:
      `This run needs a test of the fix (${required}). finishline ran your new or changed test files (${
        files.slice(0, 5).map((file) => `"${file}"`).join(", ")
      }) on the starting commit, without the rest of your change, and none of their tests failed there: they do not show the bug. ${
        ask[0].toUpperCase()
      }${
        ask.slice(1)
      }. If no test can show the bug, say why in complete_task no_test; a reviewer decides whether the reason stands`,
  };
}

/** The checks on a clean copy of `base` with the claim's versions of `files`; the copy goes back to the claim after. */
async function runAtStart(
  state: GateState,
  claim: Claim,
  base: string,
  files: string[],
  signal: AbortSignal | undefined,
): Promise<CheckRun[] | string> {
  const copy = state.copy!;
  try {
    const error = await copy.moveTo(base) ?? await copy.restore(claim.head, files);
    if (error) return error;
    return await copy.run(state.checks, {
      timeoutMs: state.timeoutMs,
      signal,
      onCheck: state.onCheck,
    });
  } finally {
    await copy.moveTo(claim.head);
  }
}
