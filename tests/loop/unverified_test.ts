/**
 * No evidence is not success: which claims nothing verified, and what the
 * worker is told then.
 */

import assert from "node:assert/strict";
import { CommandChecker } from "../../agents/checks/command.ts";
import { GitChecker } from "../../agents/checks/git_checker.ts";
import { emptySummary, type IterationSummary } from "../../agents/record/iteration.ts";
import { CompletionGuard } from "../../agents/loop/complete_task_guard.ts";
import { commitGate, missingEvidence } from "../../agents/loop/unverified.ts";

function withChecks(checks: NonNullable<IterationSummary["checks"]>): IterationSummary {
  return { ...emptySummary(1), checks };
}

const green = {
  name: "make test",
  baseline: "red" as const,
  now: "green" as const,
  failing: [],
  durationMs: 10,
};
const red = { ...green, now: "red" as const, failing: ["t1"] };

Deno.test("what counts as evidence of a claim, and the reason when nothing does", async (t) => {
  await t.step("no check found: the commit gate alone is no evidence", () => {
    const sources = { checkers: [commitGate()], detect: true, gate: false };
    assert.equal(missingEvidence(sources, emptySummary(1)), "no checks found");
  });
  await t.step("detection off and nothing configured says so", () => {
    const sources = { checkers: [], detect: false, gate: false };
    assert.equal(
      missingEvidence(sources, emptySummary(1)),
      'no check is configured and "verify.detect" is off',
    );
  });
  await t.step("a checker the user configured is evidence, even a git checker", () => {
    const command = new CommandChecker({ command: "true", name: "ok" });
    assert.equal(
      missingEvidence({ checkers: [command], detect: true, gate: false }, emptySummary(1)),
      undefined,
    );
    const git = new GitChecker({ minCommits: 1, name: "commits" });
    assert.equal(
      missingEvidence({ checkers: [git], detect: true, gate: false }, emptySummary(1)),
      undefined,
      "only the gate finishline adds by itself is a mere precondition",
    );
  });
  await t.step(
    "a custom handler decides done by the user's own code: its verdict is evidence",
    () => {
      const sources = { handler: "custom", checkers: [], detect: true, gate: false };
      assert.equal(missingEvidence(sources, emptySummary(1)), undefined);
      assert.equal(
        missingEvidence({ ...sources, handler: "issue" }, emptySummary(1)),
        "no checks found",
      );
    },
  );
  await t.step("a repository check green on the claim is evidence", () => {
    const summary = withChecks({ passed: true, checks: [green], outOfScope: [], testsChanged: [] });
    assert.equal(missingEvidence({ checkers: [], detect: true, gate: true }, summary), undefined);
  });
  await t.step("every check red and declared out of scope: no check passed", () => {
    const summary = withChecks({
      passed: true,
      checks: [red],
      outOfScope: [{ check: "make test", reason: "broken upstream" }],
      testsChanged: [],
    });
    assert.equal(
      missingEvidence({ checkers: [], detect: true, gate: true }, summary),
      "no check passed (`make test` declared out of scope)",
    );
  });
  await t.step("a red check declared out of scope whose other tests passed is evidence", () => {
    const summary = withChecks({
      passed: true,
      checks: [{ ...red, failing: ["legacy"], baselineFailing: ["legacy"], testsRun: 4 }],
      outOfScope: [{ check: "make test", reason: "needs a service" }],
      testsChanged: [],
    });
    assert.equal(missingEvidence({ checkers: [], detect: true, gate: true }, summary), undefined);
  });
  await t.step("a held-out test that passed is evidence; one that failed is not", () => {
    const base = { passed: true, checks: [red], outOfScope: [], testsChanged: [] };
    const passed = withChecks({ ...base, heldOut: { tests: ["adds"], passed: true } });
    assert.equal(missingEvidence({ checkers: [], detect: true, gate: true }, passed), undefined);
    const overruled = withChecks({
      ...base,
      heldOut: { tests: ["adds"], passed: false, overruled: true },
    });
    assert.equal(
      missingEvidence({ checkers: [], detect: true, gate: true }, overruled),
      "no check passed",
    );
  });
});

Deno.test("a success call that nothing could check is never told the checks passed", async (t) => {
  const call = { status: "success" as const, original_request_summary: "x", summary: "done" };
  await t.step("a pass of the commit gate alone", async () => {
    const guard = new CompletionGuard({
      require: true,
      maxAttempts: 2,
      verify: () =>
        Promise.resolve({
          passed: true,
          checker: "commits",
          feedback: "[commits] 1 new commit",
          trigger: "complete_task" as const,
          unverified: "no checks found",
        }),
    });
    const answer = await guard.onCompleteTask(call);
    assert.match(
      answer,
      /^Recorded: success, but nothing could check it \(unverified: no checks found\)/,
    );
    assert.doesNotMatch(answer, /checks passed/);
  });
  await t.step("no checker at all", async () => {
    const guard = new CompletionGuard({
      require: true,
      maxAttempts: 2,
      verify: () => Promise.resolve(undefined),
      unverified: () => "no checks found",
    });
    assert.match(await guard.onCompleteTask(call), /unverified: no checks found/);
  });
  await t.step("a real pass still says so", async () => {
    const guard = new CompletionGuard({
      require: true,
      maxAttempts: 2,
      verify: () =>
        Promise.resolve({
          passed: true,
          checker: "checks",
          feedback: "",
          trigger: "complete_task" as const,
        }),
    });
    assert.match(await guard.onCompleteTask(call), /^Recorded: success, and the checks passed/);
  });
});
