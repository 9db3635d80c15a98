/**
 * The worker's own test of a bug fix (`verify.reproduce` "worker" or
 * "both"): one of its new or changed test files, run on the starting commit
 * without the rest of its change, must hold a test that fails there and
 * passes on the claim. Real git in temp repositories, real `node --test`.
 */

import assert from "node:assert/strict";
import { flippedTests, workerTestFiles } from "../../../agents/evidence/judge/fail_to_pass.ts";
import type { CheckRun } from "../../../agents/evidence/run/check_run.ts";
import { commitAll, gateProject, type GateSetup, PACKAGE_JSON, write } from "../_gate_project.ts";
const BROKEN = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a + b;\n";
const FIXED = "exports.add = (a, b) => a + b;\nexports.subtract = (a, b) => a - b;\n";
/** The suite tests add only: green at the start, blind to the bug. */
const SUITE = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;
const SUBTRACT_TEST = `const test = require("node:test");
const assert = require("node:assert");
const { subtract } = require("../src/math.js");
test("subtracts", () => assert.equal(subtract(5, 3), 2));
`;
const ANOTHER_ADD_TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds negatives", () => assert.equal(add(-2, -2), -4));
`;

/** A node project whose suite is green and blind to the subtract bug; the gate needs the worker's test. */
async function bugFix(reviewer?: GateSetup["reviewer"]) {
  // Each run of the check adds a line here, outside the repository.
  const runs = await Deno.makeTempFile({ prefix: "finishline-runs-" });
  const project = await gateProject({
    files: { "package.json": PACKAGE_JSON, "src/math.js": BROKEN, "test/math.test.js": SUITE },
    checks: [{ name: "npm test", command: `echo run >> "${runs}"; npm test`, runner: "node" }],
    workerTest: 'issue #7 is labelled "bug"',
    reviewer,
  });
  const dispose = project[Symbol.asyncDispose].bind(project);
  return Object.assign(project, {
    runs: async () => (await Deno.readTextFile(runs)).split("\n").filter(Boolean).length,
    async [Symbol.asyncDispose]() {
      await dispose();
      await Deno.remove(runs).catch(() => {});
    },
  });
}

Deno.test("the worker's test of a bug fix must fail on the starting commit and pass on the claim", async (t) => {
  await t.step("a fix without a test is refused, and the worker is told what counts", async () => {
    await using run = await bugFix();
    await write(run.repo.path, { "src/math.js": FIXED });
    await commitAll(run.repo.path, "fix: subtract");
    const result = await run.claim();
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /This run needs a test of the fix \(issue #7 is labelled "bug"\)/,
    );
    assert.match(result.feedback!, /your commits add or change no test file/);
    assert.match(result.feedback!, /fails on the starting commit \([0-9a-f]{12}\) and passes/);
    assert.deepEqual(run.gate.evidence?.workerTest, {
      required: 'issue #7 is labelled "bug"',
      files: [],
      tests: [],
      passed: false,
    });
  });

  await t.step("a new test that fails on the starting commit and passes now counts", async () => {
    await using run = await bugFix();
    await write(run.repo.path, { "src/math.js": FIXED, "test/subtract.test.js": SUBTRACT_TEST });
    const head = await commitAll(run.repo.path, "fix: subtract, with its test");
    const result = await run.claim();
    assert.equal(result.complete, true, result.feedback);
    assert.deepEqual(run.gate.evidence?.workerTest, {
      required: 'issue #7 is labelled "bug"',
      files: ["test/subtract.test.js"],
      tests: ["subtracts"],
      // What it said at the start, for the reviewer: the bug, subtract(5, 3) was 8.
      failedWith: ["name: 'AssertionError'", "expected: 2", "actual: 8"],
      passed: true,
    });
    // The clean copy went back to the claim: the starting commit's run leaves nothing behind.
    assert.equal(run.gate.evidence?.commit, head);
  });

  await t.step("a new test that passes on the starting commit too shows nothing", async () => {
    await using run = await bugFix();
    await write(run.repo.path, { "src/math.js": FIXED, "test/more.test.js": ANOTHER_ADD_TEST });
    await commitAll(run.repo.path, "fix: subtract, and a test of add");
    const result = await run.claim();
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /ran your new or changed test files \("test\/more.test.js"\) on the starting commit, without the rest of your change, and none of their tests failed there/,
    );
    assert.equal(run.gate.evidence?.workerTest?.passed, false);
  });

  await t.step("a test that fails at the start and still fails is not a fix", async () => {
    await using run = await bugFix();
    // The test is right, the fix is not: the claim fails on the suite itself.
    await write(run.repo.path, { "test/subtract.test.js": SUBTRACT_TEST });
    await commitAll(run.repo.path, "test: subtract");
    const result = await run.claim();
    assert.equal(result.complete, false);
    assert.match(result.feedback!, /"npm test" passed before your changes and fails now/);
  });

  await t.step("no_test stands in for a test only when the reviewer accepts it", async () => {
    await using refused = await bugFix(() =>
      Promise.resolve({ verdicts: [{ accept: false, why: "subtract(5, 3) is easy to test." }] })
    );
    await write(refused.repo.path, { "src/math.js": FIXED });
    await commitAll(refused.repo.path, "fix: subtract");
    const no = await refused.claim({ no_test: "The bug cannot be observed by a test." });
    assert.equal(no.complete, false);
    assert.match(no.feedback!, /refused a declaration: no_test: subtract\(5, 3\) is easy to test/);
    assert.equal(refused.asked.length, 1);
    assert.equal(refused.asked[0].declarations[0].kind, "no_test");
    assert.match(refused.asked[0].declarations[0].facts, /added or changed no test file/);
    assert.equal(refused.gate.evidence?.workerTest?.passed, false);

    await using accepted = await bugFix(() =>
      Promise.resolve({ verdicts: [{ accept: true, why: "A timing bug." }] })
    );
    await write(accepted.repo.path, { "src/math.js": FIXED });
    await commitAll(accepted.repo.path, "fix: subtract");
    const yes = await accepted.claim({ no_test: "The bug cannot be observed by a test." });
    assert.equal(yes.complete, true, yes.feedback);
    assert.equal(
      accepted.gate.evidence?.workerTest?.noTest,
      "The bug cannot be observed by a test.",
    );
    assert.equal(accepted.gate.evidence?.declarations?.[0].verdict, "accepted");
  });

  await t.step("the same test files are run on the starting commit once", async () => {
    await using run = await bugFix();
    await write(run.repo.path, { "src/math.js": FIXED, "test/more.test.js": ANOTHER_ADD_TEST });
    await commitAll(run.repo.path, "fix: subtract, and a test of add");
    assert.equal((await run.claim()).complete, false);
    // The baseline; the claim's clean copy, its original tests, its test files on the starting commit.
    assert.equal(await run.runs(), 4);
    // Another commit that leaves the test files as they were: the same verdict, no new run.
    await write(run.repo.path, { "README.md": "# math\n" });
    await commitAll(run.repo.path, "docs");
    const again = await run.claim();
    assert.equal(again.complete, false);
    assert.match(again.feedback!, /none of their tests failed there/);
    assert.equal(await run.runs(), 6, "the test files did not run on the starting commit again");
  });
});

Deno.test("the worker's test files are its added, modified and renamed test files", () => {
  assert.deepEqual(
    workerTestFiles([
      { path: "test/a.test.js", change: "added", why: "test file" },
      { path: "test/b.test.js", change: "renamed", from: "test/c.test.js", why: "test file" },
      { path: "test/d.test.js", change: "deleted", why: "test file" },
      { path: "jest.config.js", change: "modified", why: "runner configuration" },
      { path: "tests/conftest.py", change: "added", why: "runner configuration" },
      { path: "src/lib.rs", change: "modified", why: "adds #[test]" },
    ]),
    ["test/a.test.js", "test/b.test.js"],
  );
});

Deno.test("flipped tests: red at the start, gone from the failures on the claim", () => {
  const run = (green: boolean, failing: string[], name = "npm test"): CheckRun => ({
    name,
    green,
    code: green ? 0 : 1,
    timedOut: false,
    failing,
    durationMs: 1,
    tail: "",
  });
  assert.deepEqual(flippedTests([run(false, ["a", "b"])], [run(false, ["b"])]), ["a"]);
  assert.deepEqual(flippedTests([run(false, ["a"])], [run(false, ["a"])]), []);
  assert.deepEqual(flippedTests([run(false, [], "make test")], [run(true, [], "make test")]), [
    'the check "make test" (its runner names no tests)',
  ]);
  assert.deepEqual(flippedTests([run(false, [], "make test")], [run(false, [], "make test")]), []);
  // A check the claim did not run proves nothing.
  assert.deepEqual(flippedTests([run(false, ["a"])], []), []);
});
