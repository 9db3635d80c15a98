/**
 * The worker's declarations go to a reviewer: the gate asks it about the
 * declarations a passing verdict relies on, in a clean copy of the claim,
 * with the diff; a declaration counts only once accepted. Real git in temp
 * repositories and real `node --test`; the reviewer is the port the run
 * fills with a session (tested end to end in the reproduction e2e).
 */

import assert from "node:assert/strict";
import {
  applyVerdicts,
  cutDiff,
  parseVerdicts,
  type ReviewAnswer,
  reviewFeedback,
  type ReviewRequest,
} from "../../../agents/evidence/judge/declarations.ts";
import type { Declaration } from "../../../agents/record/iteration.ts";
import { git } from "../../_helpers.ts";
import { commitAll, gateProject, NODE_TEST, PACKAGE_JSON, write } from "../_gate_project.ts";

/** A lint check that fails at the start and whatever the agent does. */
const LINT = { name: "npm run lint", command: "echo 'lint: 3 problems' && exit 1" };
const BROKEN = "exports.add = (a, b) => a - b;\n";
const FIXED = "exports.add = (a, b) => a + b;\n";
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
`;
/** The test weakened until the bug passes. */
const WEAKENED = TEST.replace("assert.equal(add(2, 2), 4)", "assert.ok(add(2, 2) !== undefined)");

/** A node project with a bug its test catches and a lint check red from the start; a reviewer that answers `answer`. */
async function project(answer: (request: ReviewRequest) => ReviewAnswer | Promise<ReviewAnswer>) {
  /** What the reviewer found in its folder at each review: the claim's files. */
  const found: Array<Record<string, string>> = [];
  const gate = await gateProject({
    files: { "package.json": PACKAGE_JSON, "src/math.js": BROKEN, "test/math.test.js": TEST },
    checks: [NODE_TEST, LINT],
    reviewer: async (request) => {
      found.push({ "src/math.js": await Deno.readTextFile(`${request.dir}/src/math.js`) });
      return await answer(request);
    },
  });
  return Object.assign(gate, { found });
}

const OUT_OF_SCOPE = {
  out_of_scope: [{
    check: "npm run lint",
    reason: "The lint problems were there before; not this task.",
  }],
};

Deno.test("declarations count only when an independent reviewer accepts them", async (t) => {
  await t.step("an accepted out_of_scope declaration lets the claim pass", async () => {
    await using run = await project(() => ({
      verdicts: [{ accept: true, why: "Lint is unrelated." }],
    }));
    await write(run.repo.path, { "src/math.js": FIXED });
    const head = await commitAll(run.repo.path, "fix: add");
    const result = await run.claim(OUT_OF_SCOPE);
    assert.equal(result.complete, true, result.feedback);
    assert.equal(run.asked.length, 1);
    const [request] = run.asked;
    assert.equal(request.head, head);
    assert.equal(request.base, run.base);
    assert.deepEqual(request.declarations, [{
      kind: "out_of_scope",
      subject: "npm run lint",
      reason: "The lint problems were there before; not this task.",
      facts: '"npm run lint" failed on the starting commit and still fails',
    }]);
    // The reviewer sees the diff, and a clean copy of the claim to run things in.
    assert.match(
      request.diff,
      /-exports.add = \(a, b\) => a - b;\n\+exports.add = \(a, b\) => a \+ b;/,
    );
    assert.equal(run.found[0]["src/math.js"], FIXED);
    assert.deepEqual(run.gate.evidence?.declarations, [{
      ...request.declarations[0],
      verdict: "accepted",
      why: "Lint is unrelated.",
    }]);
  });

  await t.step("a refused declaration fails the claim with the reviewer's reason", async () => {
    await using run = await project(() => ({
      verdicts: [{ accept: false, why: "The diff adds two of the lint problems." }],
    }));
    await write(run.repo.path, { "src/math.js": FIXED });
    await commitAll(run.repo.path, "fix: add");
    const result = await run.claim(OUT_OF_SCOPE);
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /An independent reviewer, who read your diff and your reasons but not your session, refused a declaration: out_of_scope "npm run lint": The diff adds two of the lint problems\./,
    );
    assert.equal(run.gate.evidence?.passed, false);
    assert.equal(run.gate.evidence?.declarations?.[0].verdict, "refused");
  });

  await t.step(
    "a reviewer that gives no verdict leaves the declaration unreviewed, and asked again",
    async () => {
      let calls = 0;
      await using run = await project(() => {
        calls++;
        return calls === 1
          ? { failed: "the reviewer session failed: overloaded" }
          : { verdicts: [{ accept: true, why: "Lint is unrelated." }] };
      });
      await write(run.repo.path, { "src/math.js": FIXED });
      await commitAll(run.repo.path, "fix: add");
      const first = await run.claim(OUT_OF_SCOPE);
      assert.equal(first.complete, false);
      assert.match(
        first.feedback!,
        /could not be reviewed \(the reviewer session failed: overloaded\)/,
      );
      assert.equal(run.gate.evidence?.declarations?.[0].verdict, "unreviewed");
      const second = await run.claim(OUT_OF_SCOPE);
      assert.equal(second.complete, true, second.feedback);
      assert.equal(calls, 2);
    },
  );

  await t.step("the same claim with the same declarations is reviewed once", async () => {
    await using run = await project(() => ({ verdicts: [{ accept: true, why: "Fine." }] }));
    await write(run.repo.path, { "src/math.js": FIXED });
    await commitAll(run.repo.path, "fix: add");
    assert.equal((await run.claim(OUT_OF_SCOPE)).complete, true);
    assert.equal((await run.claim(OUT_OF_SCOPE)).complete, true);
    assert.equal(run.asked.length, 1);
    assert.equal(run.gate.evidence?.declarations?.[0].verdict, "accepted");
  });

  await t.step("a weakened test declared in tests_changed goes to the reviewer", async () => {
    await using run = await project(() => ({
      verdicts: [
        { accept: true, why: "Lint is unrelated." },
        { accept: false, why: "The test was right: add(2, 2) is 4." },
      ],
    }));
    await write(run.repo.path, { "test/math.test.js": WEAKENED });
    await commitAll(run.repo.path, "test: loosen");
    const result = await run.claim({
      ...OUT_OF_SCOPE,
      tests_changed: [{ path: "test/math.test.js", reason: "The assertion was too strict." }],
    });
    assert.equal(result.complete, false);
    // Red at the start and weakened: the original-tests rule refuses it before any review.
    assert.match(
      result.feedback!,
      /deleting, skipping, loosening or renaming a failing test does not fix it/,
    );
    assert.equal(run.asked.length, 0, "a claim that fails anyway is not reviewed");
  });

  await t.step(
    "a declared test change the verdict relies on is reviewed with its facts",
    async () => {
      await using run = await project(() => ({
        verdicts: [
          { accept: true, why: "Lint is unrelated." },
          { accept: false, why: "The old name was the documented one." },
        ],
      }));
      // The fix, and a green test renamed: its original version passes, so the rules need no declaration...
      await write(run.repo.path, { "src/math.js": FIXED });
      await commitAll(run.repo.path, "fix: add");
      await git(run.repo.path, "mv", "test/math.test.js", "test/add.test.js");
      await commitAll(run.repo.path, "test: rename");
      const plain = await run.claim(OUT_OF_SCOPE);
      assert.equal(plain.complete, true, plain.feedback);
      assert.equal(run.asked.at(-1)?.declarations.length, 1, "only out_of_scope is relied on");
      // ...but a test deleted outright runs fewer tests: the declaration is what lets it pass.
      await Deno.remove(`${run.repo.path}/test/add.test.js`);
      await commitAll(run.repo.path, "test: remove");
      const result = await run.claim({
        ...OUT_OF_SCOPE,
        tests_changed: [{ path: "test/math.test.js", reason: "Nobody needs it." }],
      });
      const asked = run.asked.at(-1)!;
      assert.deepEqual(asked.declarations.map((entry) => [entry.kind, entry.subject]), [
        ["out_of_scope", "npm run lint"],
        ["tests_changed", "test/math.test.js"],
      ]);
      assert.match(
        asked.declarations[1].facts,
        /"test\/math.test.js" was deleted \(protected: test file\)/,
      );
      assert.equal(result.complete, false);
      assert.match(
        result.feedback!,
        /tests_changed "test\/math.test.js": The old name was the documented one/,
      );
    },
  );
});

Deno.test("the reviewer's verdicts are read by id, need a reason each, and name what is missing", () => {
  assert.deepEqual(
    parseVerdicts(
      'Done.\n```json\n{"verdicts": [{"id": 2, "accept": false, "reason": "no"}, {"id": 1, "accept": true, "reason": "yes"}]}\n```',
      2,
    ),
    { verdicts: [{ accept: true, why: "yes" }, { accept: false, why: "no" }] },
  );
  assert.deepEqual(parseVerdicts('{"verdicts": [{"accept": true, "reason": "ok"}]}', 1), {
    verdicts: [{ accept: true, why: "ok" }],
  });
  assert.deepEqual(parseVerdicts('{"verdicts": [{"id": 1, "accept": true}]}', 2), {
    failed: "its answer has no verdict with a reason for declaration 1, 2",
  });
  assert.deepEqual(parseVerdicts('{"verdicts": [{"id": 1, "accept": "yes", "reason": "ok"}]}', 1), {
    failed: "its answer has no verdict with a reason for declaration 1",
  });
  assert.deepEqual(parseVerdicts('{"verdict": "accept"}', 1), {
    failed: 'its answer holds no {"verdicts": [...]} object',
  });
});

Deno.test("review feedback names refusals first, then declarations nobody could review", () => {
  const declaration: Declaration = {
    kind: "tests_changed",
    subject: "test/a.test.js",
    reason: "obsolete",
    facts: "deleted",
  };
  const none = applyVerdicts([declaration], { verdicts: [{ accept: true, why: "ok" }] });
  assert.equal(reviewFeedback(none), undefined);
  const refused = applyVerdicts([declaration, { ...declaration, subject: "test/b.test.js" }], {
    verdicts: [{ accept: true, why: "ok" }, { accept: false, why: "still used" }],
  });
  assert.match(
    reviewFeedback(refused)!,
    /refused a declaration: tests_changed "test\/b.test.js": still used/,
  );
  const failed = applyVerdicts([declaration], { failed: "the reviewer reached its budget ($0.5)" });
  assert.equal(failed[0].verdict, "unreviewed");
  assert.match(reviewFeedback(failed)!, /could not be reviewed \(the reviewer reached its budget/);
  assert.equal(cutDiff("small"), "small");
  assert.match(
    cutDiff("x".repeat(50_000)),
    /\[\.\.\. 10000 more characters: run git diff yourself/,
  );
});
