/**
 * What failed last, in words for people: the red checks and their failing
 * tests, or the first sentence of a checker's feedback, never the output
 * and the instructions written for the agent.
 */

import assert from "node:assert/strict";
import type { CheckEvidence, IterationSummary } from "../../agents/record/iteration.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { failureSentence } from "../../agents/loop/outcome_text.ts";

const INSTRUCTIONS =
  "fix it, or, if it is outside this task, declare it in complete_task out_of_scope with a reason";

function check(name: string, extra: Partial<CheckEvidence> = {}): CheckEvidence {
  return { name, baseline: "red", now: "red", failing: [], durationMs: 500, ...extra };
}

function refused(checks: CheckEvidence[], extra: Partial<IterationSummary> = {}): IterationSummary {
  return {
    ...emptySummary(2),
    verification: {
      passed: false,
      checker: "checks",
      trigger: "complete_task",
      feedback: `[checks] "${
        checks[0]?.name ?? "x"
      }" fails (${INSTRUCTIONS}); it exited with code 1. Last lines of its output:\nnot ok 1`,
    },
    checks: { passed: false, outOfScope: [], testsChanged: [], checks },
    ...extra,
  };
}

function feedback(checker: string, text: string, faulted = false): IterationSummary {
  return {
    ...emptySummary(1),
    verification: { passed: false, checker, trigger: "handler", feedback: text, faulted },
  };
}

Deno.test("the repository's checks: each red check with its failing tests", async (t) => {
  await t.step("red before the run and still", () => {
    assert.equal(
      failureSentence(refused([check("npm test", { failing: ["adds", "divides"] })])),
      "`npm test` still fails (2 failing tests: adds, divides)",
    );
  });
  await t.step("green before the run", () => {
    assert.equal(
      failureSentence(refused([check("npm test", { baseline: "green", failing: ["adds"] })])),
      "`npm test` fails (it passed before the run) (1 failing test: adds)",
    );
  });
  await t.step("no baseline, no names, only a count", () => {
    assert.equal(
      failureSentence(refused([check("pytest", { baseline: "unknown", counts: { failed: 4 } })])),
      "`pytest` fails (4 failing tests)",
    );
  });
  await t.step("many tests, many checks: the first ones and how many more", () => {
    const names = ["a", "b", "c", "d", "e"];
    assert.equal(
      failureSentence(
        refused([
          check("npm test", { failing: names }),
          check("npm run lint"),
          check("tsc"),
          check("green one", { now: "green" }),
        ]),
      ),
      "`npm test` still fails (5 failing tests: a, b, c and 2 more); `npm run lint` still fails; and 1 more check fails",
    );
  });
  await t.step("a check declared out of scope is not what failed", () => {
    const summary = refused([check("npm run e2e"), check("npm test", { failing: ["adds"] })]);
    summary.checks!.outOfScope = [{ check: "npm run e2e", reason: "needs a browser" }];
    assert.equal(failureSentence(summary), "`npm test` still fails (1 failing test: adds)");
  });
  await t.step("uncommitted work: the checks did not run", () => {
    const summary = refused([]);
    summary.checks!.uncommitted = ["a.ts", "b.ts"];
    assert.equal(failureSentence(summary), "the work is not committed (2 files left out)");
  });
  await t.step(
    "no red check (tests changed, a held-out test): the feedback's first sentence",
    () => {
      const summary = refused([]);
      summary.verification!.feedback =
        '[checks] You changed "test/math.test.js", which defines done, without declaring it in complete_task tests_changed. Declare each change with a reason';
      assert.equal(
        failureSentence(summary),
        'the repository\'s checks: You changed "test/math.test.js", which defines done, without declaring it in complete_task tests_changed',
      );
    },
  );
});

Deno.test("other checkers: the first sentence of their feedback, without the output", async (t) => {
  await t.step("a command", () => {
    assert.equal(
      failureSentence(
        feedback("command", "`make lint` exited with code 2.\nLast lines of its output:\nE501"),
      ),
      "`make lint` exited with code 2",
    );
  });
  await t.step("a judge or a custom checker, prefixed by its name", () => {
    assert.equal(
      failureSentence(
        feedback("judge", "[judge] The README does not list --limit. Add it to the flag table."),
      ),
      "judge: The README does not list --limit",
    );
  });
  await t.step("a checker that threw", () => {
    assert.equal(
      failureSentence(feedback("custom", "[custom] the checker failed: disk on fire", true)),
      "the custom checker failed: disk on fire",
    );
  });
  await t.step("a long sentence is cut to a line", () => {
    const said = failureSentence(feedback("judge", "x".repeat(500)))!;
    assert.ok(said.length <= 210 && said.endsWith("…"), said);
  });
  await t.step("nothing failed", () => {
    assert.equal(failureSentence(emptySummary(1)), undefined);
    assert.equal(
      failureSentence({
        ...emptySummary(1),
        verification: { passed: true, checker: "checks", feedback: "", trigger: "handler" },
      }),
      undefined,
    );
    assert.equal(failureSentence(undefined), undefined);
  });
});
