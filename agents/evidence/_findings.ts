/**
 * What a claim's checks alone do not show, looked for once the rules leave
 * nothing to refuse: code that special-cases the values the tests use, a
 * runner that passes finishline's canaries, the held-out test, the original
 * versions of the changed tests, the worker's own test, and code that reads a
 * test runner's signals.
 *
 * @module
 */

import type { Declaration } from "../record/iteration.ts";
import type { TaskCompletionResult } from "../checks/checker_contract.ts";
import { type CheckRun, describeRun } from "./run/check_run.ts";
import { canaryProblem, runCanaries } from "./run/canary.ts";
import { findSpecialCases } from "./judge/special_cases.ts";
import { fixedRedTests } from "./judge/fail_to_pass.ts";
import { type RunnerSignal, runnerSignals } from "./judge/runner_signals.ts";
import { type RedTestChange, writeSplices } from "./judge/red_tests.ts";
import { greenedByTests, stillFailing } from "./_rules.ts";
import { listChanges } from "./_feedback.ts";
import type { Claim, GateState } from "./_gate_state.ts";
import { heldOutDispute, runHeldOut } from "./_held_out.ts";
import { workerTest } from "./_worker_test.ts";
import type { ClaimRun } from "./_claim_run.ts";

/** What the findings leave to the review. */
export interface Findings {
  /** What the agent is told when the held-out test fails and no review overrules it. */
  heldOutFailure: string | undefined;
  /** The worker's dispute of a failing held-out test, for the reviewer. */
  dispute: Declaration | undefined;
  /** Where the claim's code reads a test runner's signals. */
  signals: RunnerSignal[];
}

/**
 * Look for what the checks alone do not show, each only while nothing else
 * is refused; the problems found join the claim's. Refuses the claim when
 * the dependency folders cannot be put back after a run of checks.
 */
export async function findings(
  state: GateState,
  run: ClaimRun,
): Promise<Findings | { refused: TaskCompletionResult }> {
  const { context, claim, copy, signal, base, views, testsChanged, splices, undeclared } = run;
  const { settled, outOfScope, evidence, problems, facts } = run;
  const git = context.git;
  if (problems.length === 0 && git && base && claim) {
    const isTest = (file: string) => state.isTest(file);
    const held = await state.reproduction?.catch(() => undefined);
    const cases = await findSpecialCases(
      state.copy?.objects ?? git.repo,
      base,
      claim.head,
      isTest,
      held?.kept ? held.test.files : [],
    );
    if (cases.length > 0) {
      evidence.specialCases = cases;
      problems.push(
        `Your code special-cases the values the tests use: ${
          cases.slice(0, 5).map((found) =>
            `${found.file}:${found.line} \`${found.text}\` compares against values that appear together in ${found.test}`
          ).join("; ")
        }. Tests check examples of the behaviour; write the general logic, not the tested cases`,
      );
    }
  }
  // finishline's own tests, that must fail, in each runner: a runner that passes them was tampered with.
  if (problems.length === 0 && claim && copy) {
    // The canary goes where the claim's changes are: their folder's conftest, Go package, jest project.
    const diff = base
      ? await copy.objects.exec(["diff", "--name-only", "--no-renames", "-z", base, claim.head])
      : undefined;
    const changed = diff?.code === 0 ? diff.stdout.split("\0").filter((file) => file !== "") : [];
    evidence.canary = await runCanaries(copy.dir, state.checks, {
      timeoutMs: state.timeoutMs,
      signal,
      changed,
    });
    const tampered = canaryProblem(evidence.canary);
    if (tampered) problems.push(tampered);
  }
  const reproduction = problems.length === 0 && claim
    ? await state.reproduction?.catch(() => undefined)
    : undefined;
  let heldOutFailure: string | undefined;
  let dispute: Declaration | undefined;
  if (reproduction?.kept && claim && state.copy) {
    const heldOut = await runHeldOut(state, reproduction.test, claim, signal);
    const planted = await state.undoWrites(facts);
    if (planted) return { refused: planted };
    evidence.heldOut = { tests: reproduction.test.tests, passed: heldOut.length === 0 };
    const disputed = context.completeTask?.held_out_wrong?.trim() || undefined;
    if (heldOut.length > 0) {
      heldOutFailure =
        `A held-out acceptance test, written from the task before you started and never shown to you, fails against your code: ${
          heldOut.join("; ")
        }. It checks the behaviour the task asks for: change the code so that it does what the task says, for every input, not only the ones your own tests use${
          state.reviewer
            ? ". If you are sure the test contradicts the task, say why in complete_task held_out_wrong: a reviewer who sees the test decides"
            : ""
        }`;
      if (disputed && state.reviewer) {
        evidence.heldOut.disputed = disputed;
        dispute = heldOutDispute(reproduction.test, heldOut, disputed);
      } else {
        problems.push(heldOutFailure);
      }
    }
  }
  // The claim's code with the tests in their original form: its own runs unless it changed some.
  let original: CheckRun[] = settled.map((entry) => entry.run);
  if (problems.length === 0 && git && base && claim && testsChanged.length > 0) {
    // Only the checks accepted as out of scope are left out: a declaration on a green check is not.
    const excused = new Map(outOfScope.map((entry) => [entry.check, entry.reason]));
    const originals = await runOriginals(state, claim, base, testsChanged, excused, {
      signal,
      splices,
    });
    evidence.originalsPass = originals.passed;
    original = originals.runs.filter((run) => !excused.has(run.name));
    const planted = await state.undoWrites(facts);
    if (planted) return { refused: planted };
    const unfixed = [
      ...stillFailing(original, views),
      ...greenedByTests(
        originals.runs.filter((run) => excused.has(run.name)),
        settled.map((entry) => entry.run),
        views,
      ),
    ];
    if (unfixed.length > 0) {
      problems.push(
        `${
          unfixed.join("; ")
        }: in their original versions, against your code, tests that failed before your changes still fail. You changed ${
          listChanges(testsChanged)
        }; deleting, skipping, loosening or renaming a failing test does not fix it, declared or not: restore the test and fix the code`,
      );
    } else if (!originals.passed && undeclared.length > 0) {
      problems.push(
        `You changed ${
          listChanges(undeclared)
        }, which define when the task is done, and the original versions fail against your code${originals.detail}. Restore them and fix the code, or declare each change in complete_task tests_changed with a reason`,
      );
    }
  }
  const noTest = context.completeTask?.no_test?.trim() || undefined;
  if (problems.length === 0 && base && claim && state.workerTestWhy) {
    const worker = await workerTest(
      state,
      claim,
      base,
      testsChanged,
      settled,
      noTest,
      signal,
      {
        redFixed: fixedRedTests([...views.values()], original),
      },
    );
    const planted = await state.undoWrites(facts);
    if (planted) return { refused: planted };
    evidence.workerTest = worker.evidence;
    if (worker.problem) problems.push(worker.problem);
  }
  // Code that reads a test runner's signals behaves differently under test: the reviewer sees it.
  const signals = problems.length === 0 && base && claim
    ? await runnerSignals(
      claim.repo,
      { base, head: claim.head },
      (file) => state.isTest(file),
    )
    : [];
  if (signals.length > 0) evidence.runnerSignals = signals;
  return { heldOutFailure, dispute, signals };
}

/** Run the checks on the clean copy with the original test files put back. */
async function runOriginals(
  state: GateState,
  claim: Claim,
  base: string,
  changed: Array<{ path: string; from?: string }>,
  outOfScope: Map<string, string>,
  options: { signal: AbortSignal | undefined; splices: RedTestChange[] },
): Promise<{ passed: boolean; detail: string; runs: CheckRun[] }> {
  const { signal, splices } = options;
  const copy = state.copy!;
  // An inline red test is put back alone, its file's other changes (the fix) kept.
  const spliced = new Map(
    splices.flatMap((edit) => edit.spliced === undefined ? [] : [[edit.change.path, edit]]),
  );
  // A fresh copy of the commit: what the first runs wrote is gone.
  const error = await copy.moveTo(claim.head) ??
    // A rename is undone by putting back the old path and removing the new one.
    await copy.restore(
      base,
      changed.flatMap((entry) =>
        entry.from ? [entry.from, entry.path] : spliced.has(entry.path) ? [] : [entry.path]
      ),
    ) ?? await writeSplices(copy.dir, [...spliced.values()]);
  if (error) return { passed: false, detail: ` (${error})`, runs: [] };
  // The checks declared out of scope run too: their failures there are excused, but a test
  // the claim's own test changes turned from red to green is not (greenedByTests).
  const runs = await copy.run(state.checks, {
    timeoutMs: state.timeoutMs,
    signal,
    onCheck: state.onCheck,
  });
  const failed = runs.find((run) => !run.green && !outOfScope.has(run.name));
  return failed
    ? { passed: false, detail: `: "${failed.name}"${describeRun(failed)}`, runs }
    : { passed: true, detail: "", runs };
}
