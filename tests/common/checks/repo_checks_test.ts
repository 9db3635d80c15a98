import assert from "node:assert/strict";
import {
  changedProtectedFiles,
  DEFAULT_PROTECTED_GLOBS,
  RepoChecksChecker,
  runInWorktree,
  runRepoCheck,
  snapshotCommit,
} from "../../../agents/mod.ts";
import { GitRepo } from "../../../agents/common/git.ts";
import type { CompleteTaskCall } from "../../../agents/common/completion/types.ts";
import { git, tempRepo } from "../../_helpers.ts";

const NODE_TEST = { name: "npm test", command: "node --test", runner: "node" as const };

const CODE = "exports.add = (a, b) => a + b;\n";
const BROKEN = "exports.add = (a, b) => a - b;\n";
const TEST = `const test = require("node:test");
const assert = require("node:assert");
const { add } = require("../src/math.js");
test("adds", () => assert.equal(add(2, 2), 4));
test("adds zero", () => assert.equal(add(2, 0), 2));
`;
async function project(files: Record<string, string>) {
  const repo = await tempRepo();
  for (const [file, text] of Object.entries(files)) {
    await Deno.mkdir(`${repo.path}/${file}`.replace(/\/[^/]+$/, ""), { recursive: true });
    await Deno.writeTextFile(`${repo.path}/${file}`, text);
  }
  await git(repo.path, "add", "-A");
  await git(repo.path, "commit", "-qm", "start");
  const gitRepo = (await GitRepo.open(repo.path))!;
  const base = (await gitRepo.head())!;
  return { repo, gitRepo, base };
}

function gate(): RepoChecksChecker {
  return new RepoChecksChecker({
    checks: [NODE_TEST],
    timeoutMs: 60_000,
    protect: [...DEFAULT_PROTECTED_GLOBS],
    configFiles: ["package.json"],
  });
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

Deno.test("the gate compares the final state with the baseline", async (t) => {
  await t.step("a check green at the baseline that turns red fails, naming the test", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": CODE,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    const baseline = await checker.startBaseline(gitRepo, base);
    assert.equal(baseline.runs[0].green, true);
    assert.equal(baseline.runs[0].testsRun, 2);
    await Deno.writeTextFile(`${repo.path}/src/math.js`, BROKEN);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(result.feedback!, /"npm test" passed before your changes and fails now/);
    assert.match(result.feedback!, /failing tests: "adds"/);
    assert.equal(checker.evidence?.checks[0].baseline, "green");
    assert.equal(checker.evidence?.checks[0].now, "red");
    assert.equal(checker.evidence?.passed, false);
  });

  await t.step("a check red at the baseline must turn green", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": BROKEN,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    const still = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(still.complete, false);
    assert.match(still.feedback!, /it failed before your changes too/);
    assert.match(still.feedback!, /out_of_scope/);

    await Deno.writeTextFile(`${repo.path}/src/math.js`, CODE);
    const fixed = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(fixed.complete, true, fixed.feedback);
    assert.deepEqual(
      checker.evidence?.checks.map((check) => [check.baseline, check.now]),
      [["red", "green"]],
    );
  });

  await t.step(
    "a red check declared out of scope with a reason passes and is recorded",
    async () => {
      const { repo, gitRepo, base } = await project({
        "src/math.js": BROKEN,
        "test/math.test.js": TEST,
      });
      await using _ = repo;
      const checker = gate();
      await checker.startBaseline(gitRepo, base);
      const noReason = await checker.check(
        context(repo.path, gitRepo, base, { out_of_scope: [{ check: "npm test", reason: " " }] }),
      );
      assert.equal(noReason.complete, false);
      const declared = await checker.check(
        context(repo.path, gitRepo, base, {
          out_of_scope: [{ check: "npm test", reason: "math is another team's issue #12" }],
        }),
      );
      assert.equal(declared.complete, true, declared.feedback);
      assert.deepEqual(checker.evidence?.outOfScope, [
        { check: "npm test", reason: "math is another team's issue #12" },
      ]);
      assert.equal(
        declared.feedback,
        `"npm test" still fails, declared out of scope: math is another team's issue #12`,
      );
    },
  );

  await t.step(
    "out of scope covers the old failures, not a new one in the same check",
    async () => {
      const { repo, gitRepo, base } = await project({
        "src/math.js": BROKEN,
        "test/math.test.js": TEST,
        "test/other.test.js": `require("node:test")("other", () => {});\n`,
      });
      await using _ = repo;
      const checker = gate();
      await checker.startBaseline(gitRepo, base);
      await Deno.writeTextFile(
        `${repo.path}/test/other.test.js`,
        `require("node:test")("other", () => { throw new Error("new"); });\n`,
      );
      const result = await checker.check(
        context(repo.path, gitRepo, base, {
          out_of_scope: [{ check: "npm test", reason: "math was red already" }],
          tests_changed: [{ path: "test/other.test.js", reason: "new behaviour" }],
        }),
      );
      assert.equal(result.complete, false);
      assert.match(result.feedback!, /now also fails in "other", which was not failing before/);
    },
  );

  await t.step("a green-at-baseline check cannot be declared out of scope", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": CODE,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.writeTextFile(`${repo.path}/src/math.js`, BROKEN);
    const result = await checker.check(
      context(repo.path, gitRepo, base, { out_of_scope: [{ check: "npm test", reason: "later" }] }),
    );
    assert.equal(result.complete, false);
  });
});

Deno.test("the gate protects the tests that define done", async (t) => {
  await t.step("a weakened test whose original fails against the code is refused", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": BROKEN,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    // The agent "fixes" the red test by changing its expectation, not the code.
    await Deno.writeTextFile(
      `${repo.path}/test/math.test.js`,
      TEST.replace("add(2, 2), 4", "add(2, 2), 0"),
    );
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false, "the weakened test passes, but the original does not");
    assert.match(result.feedback!, /You changed "test\/math.test.js" \(modified, test file\)/);
    assert.match(result.feedback!, /tests_changed/);
    assert.deepEqual(checker.evidence?.testsChanged, [
      { path: "test/math.test.js", change: "modified", why: "test file" },
    ]);
    assert.equal(checker.evidence?.originalsPass, false);

    const declared = await checker.check(
      context(repo.path, gitRepo, base, {
        tests_changed: [{ path: "test/math.test.js", reason: "the spec now says 2+2 is 0" }],
      }),
    );
    assert.equal(declared.complete, true, declared.feedback);
    assert.deepEqual(checker.evidence?.testsChanged, [
      {
        path: "test/math.test.js",
        change: "modified",
        why: "test file",
        reason: "the spec now says 2+2 is 0",
      },
    ]);
  });

  await t.step("a changed test whose original still passes is accepted", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": CODE,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.writeTextFile(
      `${repo.path}/test/math.test.js`,
      `${TEST}test("adds negatives", () => assert.equal(add(-1, -1), -2));\n`,
    );
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, true, result.feedback);
    assert.equal(checker.evidence?.originalsPass, true);
    assert.equal(checker.evidence?.checks[0].testsRun, 3);
  });

  await t.step("a deleted test is never silent", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": BROKEN,
      "test/math.test.js": TEST,
      "test/other.test.js": `require("node:test")("other", () => {});\n`,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.remove(`${repo.path}/test/math.test.js`);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /ran 1 tests, fewer than the 3 before your changes; you changed "test\/math.test.js" \(deleted, test file\): restore it/,
    );
  });
});

Deno.test("a check that fails once and passes again counts as flaky, not red", async () => {
  const counter = await Deno.makeTempFile();
  try {
    const { repo, gitRepo, base } = await project({ "ok.txt": "x" });
    await using _ = repo;
    // Fails on its second run only: the baseline passes, the gate's first try fails.
    const command =
      `n=$(cat ${counter} 2>/dev/null || echo 0); n=$((n+1)); echo $n > ${counter}; [ "$n" != 2 ]`;
    const checker = new RepoChecksChecker({ checks: [{ name: "flaky", command }] });
    await checker.startBaseline(gitRepo, base);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, true, result.feedback);
    assert.equal(checker.evidence?.checks[0].flaky, true);
  } finally {
    await Deno.remove(counter);
  }
});

Deno.test("a check's output reaches the agent and the report as plain text", async () => {
  const { repo } = await project({
    "deno.json": '{ "tasks": { "test": "deno test" }, "lock": false }\n',
    "greet_test.ts": 'Deno.test("greets", () => {\n  throw new Error("no greeting");\n});\n',
  });
  await using _ = repo;
  // The check's environment sets FORCE_COLOR, which makes Deno colour its output.
  const run = await runRepoCheck(
    { name: "deno task test", command: "deno task test", runner: "deno" },
    { cwd: repo.path, timeoutMs: 60_000 },
  );
  assert.equal(run.green, false);
  assert.deepEqual(run.failing, ["greets"]);
  assert.match(run.tail, /greet_test\.ts:2:\d+/);
  assert.ok(!run.tail.includes("\x1b"), run.tail);
});

Deno.test("worktree runs link the checkout's dependencies and leave no worktree behind", async () => {
  const { repo, gitRepo, base } = await project({ "README.md": "x" });
  await using _ = repo;
  await Deno.mkdir(`${repo.path}/node_modules/dep`, { recursive: true });
  await Deno.writeTextFile(`${repo.path}/node_modules/dep/index.js`, "");
  const result = await runInWorktree(gitRepo, base, {
    checks: [{ name: "dep", command: "test -f node_modules/dep/index.js" }],
    timeoutMs: 10_000,
  });
  assert.equal(result.error, undefined);
  assert.equal(result.runs[0].green, true);
  const worktrees = await git(repo.path, "worktree", "list");
  assert.equal(worktrees.split("\n").length, 1);
});

Deno.test("a snapshot commit holds untracked work and leaves the index alone", async () => {
  const { repo, gitRepo, base } = await project({ "a.txt": "a" });
  await using _ = repo;
  await Deno.writeTextFile(`${repo.path}/a.txt`, "changed");
  await Deno.writeTextFile(`${repo.path}/new.txt`, "new");
  const commit = await snapshotCommit(gitRepo);
  assert.match(commit ?? "", /^[0-9a-f]{40}$/);
  assert.equal(await git(repo.path, "show", `${commit}:new.txt`), "new");
  assert.equal(await git(repo.path, "show", `${commit}:a.txt`), "changed");
  assert.equal(await git(repo.path, "status", "--porcelain"), "M a.txt\n?? new.txt".trim());
  assert.deepEqual(
    await changedProtectedFiles(gitRepo, base, { protect: ["*.txt"], configFiles: [] }),
    [
      { path: "a.txt", change: "modified", why: "test file" },
      { path: "new.txt", change: "added", why: "test file" },
    ],
  );
});

Deno.test("the same files and declarations are not checked twice", async () => {
  const counter = await Deno.makeTempFile();
  try {
    const { repo, gitRepo, base } = await project({ "a.txt": "a" });
    await using _ = repo;
    const checker = new RepoChecksChecker({
      checks: [{ name: "count", command: `echo x >> ${counter}` }],
    });
    const runs = async () => (await Deno.readTextFile(counter)).split("\n").length - 1;
    await checker.check(context(repo.path, gitRepo, base));
    await checker.check(context(repo.path, gitRepo, base));
    assert.equal(await runs(), 1, "the second check reuses the first");
    await Deno.writeTextFile(`${repo.path}/a.txt`, "changed");
    await checker.check(context(repo.path, gitRepo, base));
    assert.equal(await runs(), 2, "a changed file runs the checks again");
    await checker.check(
      context(repo.path, gitRepo, base, { out_of_scope: [{ check: "count", reason: "r" }] }),
    );
    assert.equal(await runs(), 3, "a new declaration runs them again");
  } finally {
    await Deno.remove(counter);
  }
});
