import assert from "node:assert/strict";
import type { CheckRun } from "../../../agents/evidence/run/check_run.ts";
import { judgeReproduction } from "../../../agents/evidence/held_out/reproduction.ts";

const run = (name: string, fields: Partial<CheckRun>): CheckRun => ({
  name,
  green: false,
  code: 1,
  timedOut: false,
  failing: [],
  durationMs: 1,
  tail: "",
  ...fields,
});

Deno.test("a reproduction is kept only when it fails on the start for a named reason", async (t) => {
  const baseline = [
    run("npm test", { green: true, code: 0 }),
    run("npm run lint", { green: true }),
  ];

  await t.step("a new named failure with an assertion is kept, with what it said", () => {
    const judged = judgeReproduction([
      run("npm test", {
        failing: ["subtracts"],
        tail:
          "not ok 2 - subtracts\n  AssertionError: 8 == 2\n  > 4 | assert.equal(subtract(5, 3), 2)",
      }),
      run("npm run lint", { green: true, code: 0 }),
    ], baseline);
    assert.deepEqual(judged, {
      checks: ["npm test"],
      tests: ["subtracts"],
      messages: ["AssertionError: 8 == 2"],
    });
  });

  await t.step("failures that were there before are not the reproduction", () => {
    const judged = judgeReproduction(
      [run("pytest", { failing: ["test_old", "test_new"] })],
      [run("pytest", { failing: ["test_old"] })],
    );
    assert.deepEqual("tests" in judged && judged.tests, ["test_new"]);
  });

  await t.step("syntax, import and load failures are refused", () => {
    for (
      const tail of [
        "SyntaxError: Unexpected token '}'",
        "Error: Cannot find module '../src/nope.js'",
        "ModuleNotFoundError: No module named 'nope'",
        "error[E0425]: cannot find value `x` in this scope",
      ]
    ) {
      const judged = judgeReproduction([run("npm test", { failing: ["x"], tail })], baseline);
      assert.match("why" in judged ? judged.why : "", /fails before any test runs/, tail);
    }
    const unloaded = judgeReproduction(
      [run("npm test", { failing: ["/tmp/w/test/repro.test.js"] })],
      baseline,
    );
    assert.deepEqual(unloaded, {
      why: '"npm test" fails before any test runs (repro.test.js did not load)',
    });
  });

  await t.step("tests that pass already, or a green check red without a name, are refused", () => {
    assert.deepEqual(judgeReproduction([run("npm test", { green: true, code: 0 })], baseline), {
      why: "the tests it wrote pass on the starting commit: they do not reproduce the task",
    });
    assert.deepEqual(
      judgeReproduction([run("make test", {})], [run("make test", { green: true })]),
      {
        why: '"make test" fails without naming a failing test',
      },
    );
  });
});
