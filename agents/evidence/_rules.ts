/**
 * The gate's rules on each check's run against the baseline, and the
 * evidence they give: green at the baseline stays green, red turns green or
 * is declared out of scope, no test is set aside in silence, and the
 * original versions of changed tests still pass. No I/O: the rules can run
 * twice on the same runs.
 *
 * @module
 */

import type { CompleteTaskCall } from "../completion/handler_contract.ts";
import type { CheckEvidence, ChecksEvidence, TestCounts } from "../record/iteration.ts";
import { type CheckRun, describeRun, nameList } from "./run/check_run.ts";
import { listChanges } from "./_feedback.ts";

/** A baseline run as the gate compares with it: confirmed by a second run when it was red. */
export interface BaselineView {
  run: CheckRun;
  /** Tests that failed at the first run and passed at the second. */
  flakyTests?: string[];
}

/** The gate's rules on every check, from the settled runs and the baseline: no I/O, so it can run twice. */
export function judgeAll(
  settled: Array<{ run: CheckRun; flaky: boolean }>,
  views: Map<string, BaselineView>,
  declared: Map<string, string>,
  changes: {
    undeclared: ChecksEvidence["testsChanged"];
    changedCount: number;
    declarations?: CompleteTaskCall["tests_changed"];
  },
): { checks: CheckEvidence[]; outOfScope: ChecksEvidence["outOfScope"]; problems: string[] } {
  const { undeclared, changedCount, declarations } = changes;
  const checks: CheckEvidence[] = [];
  const outOfScope: ChecksEvidence["outOfScope"] = [];
  const problems: string[] = [];
  for (const { run, flaky } of settled) {
    const view = views.get(run.name);
    const before = view?.run;
    checks.push({
      ...checkEvidence(run, before, flaky),
      ...(view?.flakyTests ? { baselineFlaky: view.flakyTests } : {}),
    });
    const judged = judgeRun(run, before, declared.get(run.name));
    if (judged.problem) problems.push(judged.problem);
    if (judged.outOfScope) outOfScope.push(judged.outOfScope);
    const fewer = fewerTests(run, before, undeclared, changedCount, declarations);
    if (fewer) problems.push(fewer);
  }
  return { checks, outOfScope, problems };
}

/**
 * The checks whose tests failed at the baseline and still fail in the
 * original versions of the changed tests, against the agent's code: red was
 * turned green by changing tests, not code. A check whose runner does not
 * name its tests counts when it was red at the baseline and is red again.
 */
export function stillFailing(originals: CheckRun[], views: Map<string, BaselineView>): string[] {
  const found: string[] = [];
  for (const run of originals) {
    const before = views.get(run.name)?.run;
    if (run.green || !before || before.green) continue;
    if (before.failing.length === 0 || run.failing.length === 0) {
      found.push(`"${run.name}" failed before your changes and still fails`);
      continue;
    }
    const earlier = new Set(before.failing);
    const still = run.failing.filter((name) => earlier.has(name));
    if (still.length > 0) found.push(`"${run.name}": ${nameList(still)}`);
  }
  return found;
}

/** The checks the claim declared out of scope, each with its reason (one without a reason is not declared). */
export function declaredOutOfScope(call: CompleteTaskCall | undefined): Map<string, string> {
  const declared = new Map<string, string>();
  for (const entry of call?.out_of_scope ?? []) {
    if (entry?.check && entry.reason?.trim()) declared.set(entry.check, entry.reason.trim());
  }
  return declared;
}

/** Tests failing now that were not failing at the baseline (none known without a baseline). */
function newFailures(run: CheckRun, before: CheckRun | undefined): string[] {
  if (!before) return [];
  const earlier = new Set(before.failing);
  return run.failing.filter((name) => !earlier.has(name));
}

/** A check's run now, against its run at the baseline. */
export function checkEvidence(
  run: CheckRun,
  before: CheckRun | undefined,
  flaky: boolean,
): CheckEvidence {
  return {
    name: run.name,
    baseline: before ? (before.green ? "green" : "red") : "unknown",
    now: run.green ? "green" : "red",
    failing: run.failing,
    ...(before && !before.green ? { baselineFailing: before.failing } : {}),
    ...(run.testsRun !== undefined ? { testsRun: run.testsRun } : {}),
    ...(before?.testsRun !== undefined ? { baselineTestsRun: before.testsRun } : {}),
    ...(run.counts !== undefined ? { counts: run.counts } : {}),
    ...(before?.counts !== undefined ? { baselineCounts: before.counts } : {}),
    durationMs: run.durationMs,
    ...(flaky ? { flaky } : {}),
  };
}

/**
 * The gate's rules for one red check: green at the baseline must stay green;
 * red must turn green unless declared out of scope, and the declaration
 * covers only the failures that were there before. The feedback tells the
 * failures the agent's changes caused from those that were there before.
 */
function judgeRun(
  run: CheckRun,
  before: CheckRun | undefined,
  declaredReason: string | undefined,
): { problem?: string; outOfScope?: { check: string; reason: string } } {
  if (run.green) return {};
  const name = run.name;
  if (before?.green) {
    return {
      problem: `"${name}" passed before your changes and fails now${describeRun(run, before)}`,
    };
  }
  const fresh = newFailures(run, before);
  if (declaredReason && fresh.length > 0) {
    return {
      problem: `"${name}" was declared out of scope, but it now also fails in ${
        nameList(fresh)
      }, which ${fresh.length === 1 ? "was" : "were"} not failing before your changes: fix ${
        fresh.length === 1 ? "it" : "them"
      }${describeRun(run, before)}`,
    };
  }
  if (declaredReason) return { outOfScope: { check: name, reason: declaredReason } };
  return {
    problem: `"${name}" fails${
      before
        ? " (it failed before your changes too: fix it, or, if it is outside this task, declare it in complete_task out_of_scope with a reason)"
        : ""
    }${describeRun(run, before)}`,
  };
}

/** The kinds of tests set aside, as the feedback names them. */
const SET_ASIDE = ["skipped", "ignored", "todo"] as const;

/**
 * Fewer tests run, or more skipped, ignored or todo, than at the baseline is
 * never silent, whatever the exit code and the baseline's colour: turning a
 * failing test into a skipped one is how a suite is made to pass without a fix.
 * It stands only when every changed protected file is declared in
 * tests_changed and the agent declared a change (protected or not: inline
 * tests live in source files), and never when the tests set aside are ones
 * that failed at the baseline.
 */
function fewerTests(
  run: CheckRun,
  before: CheckRun | undefined,
  undeclared: ChecksEvidence["testsChanged"],
  changedCount: number,
  declarations: CompleteTaskCall["tests_changed"] = [],
): string | undefined {
  // Runs recorded before counts existed carry only testsRun.
  const now: TestCounts = run.counts ?? { run: run.testsRun };
  const then: TestCounts = before?.counts ?? { run: before?.testsRun };
  const changes: string[] = [];
  if (now.run !== undefined && then.run !== undefined && now.run < then.run) {
    changes.push(
      `ran ${now.run} ${
        now.run === 1 ? "test" : "tests"
      }, fewer than the ${then.run} before your changes`,
    );
  }
  for (const kind of SET_ASIDE) {
    const count = now[kind];
    const earlier = then[kind];
    if (count === undefined || earlier === undefined || count <= earlier) continue;
    changes.push(
      `reports ${count - earlier} more ${kind} than before your changes (${count}, not ${earlier})`,
    );
  }
  if (changes.length === 0) return undefined;
  const earlierSet = new Set(before?.skippedTests ?? []);
  const newlySet = (run.skippedTests ?? []).filter((name) => !earlierSet.has(name));
  const wereFailing = new Set(before?.failing ?? []);
  const failedBefore = newlySet.filter((name) => wereFailing.has(name));
  const declared = declarations.some((entry) => entry?.reason?.trim());
  // A failing test set aside is not fixed: no declaration makes it so.
  if (failedBefore.length > 0 && undeclared.length === 0) {
    return `"${run.name}" ${changes.join(", and ")}: ${
      nameList(failedBefore)
    } failed before your changes and ${
      failedBefore.length === 1 ? "is" : "are"
    } now set aside. Skipping or ignoring a failing test does not fix it, declared or not: remove the skip and fix the code`;
  }
  if (undeclared.length === 0 && (changedCount > 0 || declared)) return undefined;
  const named = newlySet.length === 0
    ? ""
    : `. Newly set aside: ${nameList(newlySet)}${
      failedBefore.length === 0
        ? ""
        : failedBefore.length === newlySet.length
        ? `, all failing before your changes`
        : `; of these, ${nameList(failedBefore)} failed before your changes`
    }`;
  const head = `"${run.name}" ${changes.join(", and ")}${named}`;
  if (undeclared.length > 0) {
    return `${head}; you changed ${listChanges(undeclared)}: restore ${
      undeclared.length === 1 ? "it" : "them"
    }, or declare each change in complete_task tests_changed with a reason`;
  }
  return `${head}. Tests that ran before your changes must run and pass now: fix the code rather than setting tests aside; if a test really has to go, declare the change in complete_task tests_changed (the file and a reason)`;
}

/**
 * In the checks declared out of scope (red at the baseline, and excused for
 * the failures that were there), the tests that failed at the baseline,
 * pass in the claim, and fail again in their original versions against the
 * claim's code: the claim's test changes, not its code, turned them green.
 * The declaration excuses tests left failing, never tests made to pass by
 * weakening them. A check whose runner does not name its tests counts when
 * it is green in the claim and red in the original versions.
 *
 * @param originals The excused checks' runs with the tests in their original versions.
 * @param claimed The claim's own runs.
 * @param views The baseline's runs, by check.
 * @returns One line per check, for feedback.
 */
export function greenedByTests(
  originals: CheckRun[],
  claimed: CheckRun[],
  views: Map<string, BaselineView>,
): string[] {
  const found: string[] = [];
  for (const run of originals) {
    const before = views.get(run.name)?.run;
    const now = claimed.find((entry) => entry.name === run.name);
    if (run.green || !before || before.green || !now) continue;
    if (before.failing.length === 0 || run.failing.length === 0) {
      if (now.green) found.push(`"${run.name}" failed before your changes and still fails`);
      continue;
    }
    const earlier = new Set(before.failing);
    const failingNow = new Set(now.failing);
    const greened = run.failing.filter((name) => earlier.has(name) && !failingNow.has(name));
    if (greened.length > 0) found.push(`"${run.name}": ${nameList(greened)}`);
  }
  return found;
}
