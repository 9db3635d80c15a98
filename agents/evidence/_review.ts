/**
 * The review of a claim's declarations: the ones a passing verdict relies
 * on (checks out of scope, test changes, the worker's test or its
 * `no_test`, a dispute of the held-out test, runner signals) go to the
 * run's reviewer with the diff, in the clean copy of the claim, and its
 * verdicts decide whether they stand.
 *
 * @module
 */

import type { CompleteTaskCall } from "../completion/handler_contract.ts";
import type { ChecksEvidence, Declaration, ReviewedDeclaration } from "../record/iteration.ts";
import type { GitReader } from "../git/hardened.ts";
import { nameList } from "./run/check_run.ts";
import { applyVerdicts, cutDiff, reviewFeedback } from "./judge/declarations.ts";
import type { Claim, GateState } from "./_gate_state.ts";
import { proofNote } from "./_proof.ts";
import { signalFinding } from "./judge/runner_signals.ts";
import { judgeAll } from "./_rules.ts";
import type { ClaimRun } from "./_claim_run.ts";
import type { Findings } from "./_findings.ts";

/**
 * Have the declarations a passing verdict relies on reviewed, when the run
 * has a reviewer and nothing else is refused: the reviewer's verdicts join
 * the evidence, and a refused declaration or an upheld held-out test joins
 * the problems. A dispute of the held-out test that no review takes up does
 * not stand.
 */
export async function reviewDeclarations(
  state: GateState,
  run: ClaimRun,
  found: Findings,
): Promise<void> {
  const { context, claim, signal, base, views, declared, testsChanged, settled } = run;
  const { evidence, problems } = run;
  const { heldOutFailure, dispute, signals } = found;
  if (problems.length === 0 && base && claim && state.reviewer && !signal?.aborted) {
    const declarations = [
      ...(dispute ? [dispute] : []),
      ...signals.map(signalFinding),
      ...reliedOn(evidence, {
        // The verdict without the test changes declared: does it need them?
        without: judgeAll(settled, views, declared, {
          undeclared: testsChanged,
          changedCount: testsChanged.length,
        }).problems.length > 0,
        declared: context.completeTask?.tests_changed ?? [],
        summary: context.completeTask?.summary ?? "",
      }),
    ];
    // The reviewer weighs test changes knowing what the tests leave unchecked.
    const proof = evidence.changeProof ? proofNote(evidence).trim() : "";
    if (proof) {
      for (const [index, declaration] of declarations.entries()) {
        declarations[index] = {
          ...declaration,
          facts: `${declaration.facts}\n\nfinishline measured: ${proof}`,
        };
      }
    }
    if (declarations.length > 0) {
      const focus = [
        ...testsChanged.flatMap((entry) => entry.from ? [entry.from, entry.path] : [entry.path]),
        ...(evidence.workerTest?.files ?? []),
      ];
      const reviewed = await reviewClaim(state, claim, base, declarations, {
        focus,
        signal,
      });
      evidence.declarations = reviewed;
      const accepted = (kind: Declaration["kind"]) =>
        reviewed.some((entry) => entry.kind === kind && entry.verdict === "accepted");
      if (dispute && evidence.heldOut) {
        evidence.heldOut.overruled = accepted("held_out_wrong");
        if (!evidence.heldOut.overruled) problems.push(heldOutFailure!);
      }
      const refused = reviewFeedback(reviewed);
      if (refused) problems.push(refused);
      if (evidence.workerTest?.noTest) evidence.workerTest.passed = accepted("no_test");
      else if (evidence.workerTest?.tests.length && evidence.workerTest.files.length) {
        evidence.workerTest.passed = accepted("worker_test");
      }
    }
  } else if (dispute) {
    problems.push(heldOutFailure!);
  }
}

/**
 * The declarations reviewed by the run's reviewer in the clean copy of the
 * claim, which goes back to the commit afterwards. Remembered by commit and
 * declarations; a review that failed is asked again at the next claim.
 */
export async function reviewClaim(
  state: GateState,
  claim: Claim,
  base: string,
  declarations: Declaration[],
  options: { focus: string[]; signal: AbortSignal | undefined },
): Promise<ReviewedDeclaration[]> {
  const { signal } = options;
  const key = JSON.stringify([claim.head, declarations]);
  const known = state.reviews.get(key);
  if (known) return structuredClone(known);
  const copy = state.copy!;
  const diff = await reviewDiff(copy.objects, claim, base, options.focus);
  let reviewed: ReviewedDeclaration[];
  try {
    const moved = await copy.moveTo(claim.head);
    const answer = moved
      ? { failed: `no clean copy to review in (${moved})` }
      : await state.reviewer!({
        dir: copy.dir,
        base,
        head: claim.head,
        diff: cutDiff(diff),
        declarations,
        signal,
      }).catch((error) => ({ failed: `the reviewer failed: ${String(error)}` }));
    reviewed = applyVerdicts(declarations, answer);
  } finally {
    await copy.moveTo(claim.head);
  }
  if (reviewed.every((entry) => entry.verdict !== "unreviewed")) {
    state.reviews.set(key, structuredClone(reviewed));
  }
  state.reviewLog.push({ commit: claim.head, declarations: structuredClone(reviewed) });
  return reviewed;
}

/**
 * The declarations a passing verdict relies on: every check accepted as out
 * of scope; the declared test changes when the verdict would not stand
 * without them (`without`: the rules find problems once no change is
 * declared, or the original versions fail); a `no_test` that stands in for
 * the worker's test.
 */
export function reliedOn(
  evidence: ChecksEvidence,
  options: {
    without: boolean;
    declared: NonNullable<CompleteTaskCall["tests_changed"]>;
    summary: string;
  },
): Declaration[] {
  const declarations: Declaration[] = [];
  for (const entry of evidence.outOfScope) {
    const check = evidence.checks.find((found) => found.name === entry.check);
    declarations.push({
      kind: "out_of_scope",
      subject: entry.check,
      reason: entry.reason,
      facts: `"${entry.check}" failed on the starting commit${
        check?.baselineFailing?.length ? ` (failing: ${nameList(check.baselineFailing)})` : ""
      } and still fails${check?.failing.length ? ` (failing: ${nameList(check.failing)})` : ""}`,
    });
  }
  if (options.without || evidence.originalsPass === false) {
    // A declaration naming a file the commits did not change still made the rules let it pass.
    const changed = new Set(evidence.testsChanged.map((entry) => entry.path));
    for (const entry of options.declared) {
      if (!entry?.reason?.trim() || changed.has(entry.path)) continue;
      declarations.push({
        kind: "tests_changed",
        subject: entry.path,
        reason: entry.reason.trim(),
        facts:
          `"${entry.path}" is not among the test or runner files the worker's commits changed, yet the claim runs fewer tests or sets tests aside, and passes only with a declared change`,
      });
    }
    for (const entry of evidence.testsChanged) {
      if (!entry.reason) continue;
      declarations.push({
        kind: "tests_changed",
        subject: entry.path,
        reason: entry.reason,
        facts: `"${entry.path}" was ${entry.change}${
          entry.from ? ` from "${entry.from}"` : ""
        } (protected: ${entry.why ?? "test file"}); the original versions of the changed files ${
          evidence.originalsPass === false ? "fail" : "pass"
        } against the new code`,
      });
    }
  }
  const worker = evidence.workerTest;
  // A test the repository already had, red at the baseline, is finishline's own evidence.
  if (worker && worker.tests.length > 0 && worker.files.length > 0 && !worker.noTest) {
    declarations.push({
      kind: "worker_test",
      subject: worker.tests.join(", "),
      reason: options.summary.trim() || "(the worker's summary is empty)",
      facts: `the run needs a test that shows the bug (${worker.required}). The worker's ${
        worker.tests.length === 1 ? "test" : "tests"
      } in ${
        worker.files.map((file) => `"${file}"`).join(", ")
      } failed on the starting commit, run there with only its test files${
        worker.failedWith?.length ? ` (${worker.failedWith.join(" ")})` : ""
      }, and pass on the claim. Accept only when that failure at the start is the bug the task describes, not something else the worker's change adds (a file, a module, a field, a setting) or a test that is flaky`,
    });
  }
  if (worker?.noTest) {
    declarations.push({
      kind: "no_test",
      subject: "the task",
      reason: worker.noTest,
      facts: `the run needs a test of the fix (${worker.required}); ${
        worker.files.length === 0
          ? "the worker added or changed no test file"
          : `none of the tests in ${
            worker.files.map((file) => `"${file}"`).join(", ")
          } fails on the starting commit`
      }`,
    });
  }
  return declarations;
}

/**
 * The diff a reviewer reads: its summary, then the test and runner files
 * the claim changed, then the rest, so that padding the change cannot push
 * the files a declaration is about out of what the prompt holds.
 */
async function reviewDiff(
  reader: GitReader,
  claim: Claim,
  base: string,
  focus: string[],
): Promise<string> {
  const diff = async (args: string[]) => {
    const result = await reader.exec(["diff", "--no-color", ...args]);
    return result.code === 0 ? result.stdout : `(git diff failed: ${result.stderr.trim()})`;
  };
  const paths = [...new Set(focus)];
  const parts = [await diff(["--stat", base, claim.head])];
  if (paths.length > 0) {
    parts.push(await diff([base, claim.head, "--", ...paths.map((file) => `:(literal)${file}`)]));
  }
  parts.push(
    await diff([
      base,
      claim.head,
      "--",
      ".",
      ...paths.map((file) => `:(literal,exclude)${file}`),
    ]),
  );
  return parts.filter((part) => part.trim() !== "").join("\n");
}
