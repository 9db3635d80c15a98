import assert from "node:assert/strict";
import { DEFAULT_PROTECTED_GLOBS } from "../../../agents/definition/mod.ts";
import { RepoChecksChecker } from "../../../agents/evidence/repo_checks.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import type { CompleteTaskCall } from "../../../agents/completion/handler_contract.ts";
import { git, tempRepo } from "../../_helpers.ts";
import { copiesOf } from "../copy/_copies.ts";

const MATH = (add: string, sub: string) =>
  `exports.add = (a, b) => ${add};\nexports.sub = (a, b) => ${sub};\n`;
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add, sub } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
test("adds zero", () => assert.equal(add(2, 0), 2));
test("subtracts", () => assert.equal(sub(3, 1), 2));
test("subtracts zero", () => assert.equal(sub(3, 0), 3));
`;

async function project() {
  const repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/src`);
  await Deno.mkdir(`${repo.path}/test`);
  await Deno.writeTextFile(`${repo.path}/src/math.js`, MATH("a + b", "a - b"));
  await Deno.writeTextFile(`${repo.path}/test/math.test.js`, TEST);
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  return { repo, gitRepo, base: (await gitRepo.head())! };
}

async function commit(path: string, math: string, message = "work"): Promise<void> {
  await Deno.writeTextFile(`${path}/src/math.js`, math);
  await git(path, "add", "-A");
  await git(path, "commit", "-qm", message, "--allow-empty");
}

function context(path: string, repo: GitRepo, base: string, call?: Partial<CompleteTaskCall>) {
  return {
    cwd: path,
    git: { repo, baseline: base },
    completeTask: call
      ? { status: "success", original_request_summary: "", summary: "", ...call }
      : undefined,
  } as never;
}

function gate(command = "node --test"): RepoChecksChecker {
  return new RepoChecksChecker({
    checks: [{ name: "npm test", command, runner: "node" }],
    timeoutMs: 60_000,
    protect: [...DEFAULT_PROTECTED_GLOBS],
  });
}

/** The checkout and finishline's copies of its starting commit (never in `git worktree list`). */
async function worktrees(path: string, base: string): Promise<number> {
  assert.equal((await git(path, "worktree", "list")).trim().split("\n").length, 1);
  return 1 + (await copiesOf(base)).length;
}

Deno.test("after a failed claim, the tests that failed run first and the full suite decides", async (t) => {
  const { repo, gitRepo, base } = await project();
  await using _ = repo;
  const checker = gate();
  try {
    await checker.startBaseline(gitRepo, base);

    await t.step("claim 1: the full suite names the two failing tests", async () => {
      await commit(repo.path, MATH("a * b + 1", "a - b"));
      const result = await checker.check(context(repo.path, gitRepo, base));
      assert.equal(result.complete, false);
      assert.match(result.feedback!, /"adds", "adds zero"/);
      assert.equal(checker.evidence?.rerun, undefined);
      assert.equal(checker.evidence?.checks[0].testsRun, 4);
    });

    await t.step(
      "claim 2, still broken: only those two ran, and the answer names them",
      async () => {
        await commit(repo.path, MATH("a * b + 7", "a - b"));
        const result = await checker.check(context(repo.path, gitRepo, base));
        assert.equal(result.complete, false);
        assert.match(result.feedback!, /"npm test" still fails in "adds", "adds zero"/);
        assert.match(result.feedback!, /re-ran first only the tests that failed/);
        const [rerun] = checker.evidence!.rerun!;
        assert.equal(rerun.outcome, "still failing");
        assert.deepEqual(rerun.stillFailing, ["adds", "adds zero"]);
        assert.match(rerun.command!, /^node --test '--test-name-pattern=/);
        // The full suite did not run: the one run holds the two tests.
        assert.equal(checker.evidence?.checks[0].testsRun, 2);
        assert.equal(
          await worktrees(repo.path, base),
          2,
          "the one clean copy, moved to the new commit",
        );
      },
    );

    await t.step(
      "claim 3: the two pass again, but the full suite finds another broken test",
      async () => {
        await commit(repo.path, MATH("a + b", "a + b"));
        const result = await checker.check(context(repo.path, gitRepo, base));
        assert.equal(result.complete, false);
        assert.match(result.feedback!, /"subtracts"/);
        assert.equal(checker.evidence?.rerun?.[0].outcome, "passed");
        assert.equal(checker.evidence?.checks[0].testsRun, 4);
      },
    );

    await t.step("claim 4: the newly failing test passes alone, then the whole suite", async () => {
      await commit(repo.path, MATH("a + b", "a - b"));
      const result = await checker.check(context(repo.path, gitRepo, base));
      assert.equal(result.complete, true, result.feedback);
      assert.deepEqual(checker.evidence?.rerun?.[0].tests, ["subtracts"]);
      assert.equal(checker.evidence?.rerun?.[0].outcome, "passed");
      assert.equal(checker.evidence?.checks[0].testsRun, 4);
      assert.equal(await worktrees(repo.path, base), 2);
    });
  } finally {
    await checker.close();
  }
  assert.equal(await worktrees(repo.path, base), 1, "the clean copy is gone at the end");
});

Deno.test("a re-run that cannot prove anything leaves the verdict to the full suite", async (t) => {
  await t.step("a filter that matches no test is no pass: the full suite runs", async () => {
    const { repo, gitRepo, base } = await project();
    await using _ = repo;
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    await commit(repo.path, MATH("a * b + 1", "a - b"));
    assert.equal((await checker.check(context(repo.path, gitRepo, base))).complete, false);
    // The failing tests renamed: their names match nothing now.
    await Deno.writeTextFile(
      `${repo.path}/test/math.test.js`,
      TEST.replace('"adds"', '"sums"').replace('"adds zero"', '"sums zero"'),
    );
    await commit(repo.path, MATH("a * b + 1", "a - b"));
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.equal(checker.evidence?.rerun?.[0].outcome, "matched none");
    assert.equal(checker.evidence?.checks[0].testsRun, 4, "the full suite ran");
    assert.match(result.feedback!, /"sums", "sums zero"/);
  });

  await t.step("a check declared out of scope is not answered early", async () => {
    const { repo, gitRepo, base } = await project();
    await using _ = repo;
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    await commit(repo.path, MATH("a * b + 1", "a - b"));
    await checker.check(context(repo.path, gitRepo, base));
    await commit(repo.path, MATH("a * b + 1", "a - b"), "again");
    const result = await checker.check(
      context(repo.path, gitRepo, base, {
        out_of_scope: [{ check: "npm test", reason: "not mine" }],
      }),
    );
    assert.equal(result.complete, false);
    assert.deepEqual(checker.evidence?.rerun?.[0], {
      check: "npm test",
      tests: ["adds", "adds zero"],
      outcome: "not run",
      why: "declared out of scope",
    });
    // The full gate's rule: green at the baseline, red now; a declaration does not excuse it.
    assert.match(result.feedback!, /passed before your changes and fails now/);
  });

  await t.step("a check whose command cannot be narrowed runs whole", async () => {
    const { repo, gitRepo, base } = await project();
    await using _ = repo;
    await using checker = gate("node --test && true");
    await checker.startBaseline(gitRepo, base);
    await commit(repo.path, MATH("a * b + 1", "a - b"));
    await checker.check(context(repo.path, gitRepo, base));
    await commit(repo.path, MATH("a * b + 1", "a - b"), "again");
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.equal(checker.evidence?.rerun?.[0].outcome, "not run");
    assert.equal(checker.evidence?.checks[0].testsRun, 4);
  });
});
