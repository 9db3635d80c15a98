import assert from "node:assert/strict";
import { changedProtectedFiles } from "../../agents/evidence/judge/protected_files.ts";
import { runRepoCheck } from "../../agents/evidence/run/check_run.ts";
import { checkVariables } from "../../agents/evidence/run/check_env.ts";
import { DEFAULT_PROTECTED_GLOBS } from "../../agents/definition/mod.ts";
import { RepoChecksChecker } from "../../agents/evidence/repo_checks.ts";
import { snapshotCommit } from "../../agents/evidence/copy/worktree_run.ts";
import { runInWorktree } from "../../agents/evidence/copy/throwaway_run.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import type { CompleteTaskCall } from "../../agents/completion/handler_contract.ts";
import { git, tempRepo } from "../_helpers.ts";

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

/** The agent commits its work: the gate verifies commits, not the working tree. */
async function commitAll(path: string): Promise<void> {
  await git(path, "add", "-A");
  await git(path, "commit", "-qm", "work");
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
    await using checker = gate();
    const baseline = await checker.startBaseline(gitRepo, base);
    assert.equal(baseline.runs[0].green, true);
    assert.equal(baseline.runs[0].testsRun, 2);
    await Deno.writeTextFile(`${repo.path}/src/math.js`, BROKEN);
    await commitAll(repo.path);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(result.feedback!, /"npm test" passed before your changes and fails now/);
    assert.match(result.feedback!, /new failures \(not failing before your changes\): "adds"/);
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
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    const still = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(still.complete, false);
    assert.match(still.feedback!, /it failed before your changes too/);
    assert.match(still.feedback!, /out_of_scope/);

    await Deno.writeTextFile(`${repo.path}/src/math.js`, CODE);
    await commitAll(repo.path);
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
      await using checker = gate();
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
        `"npm test" still fails, declared out of scope: math is another team's issue #12 (on a clean copy of ${
          base.slice(0, 12)
        })`,
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
      await using checker = gate();
      await checker.startBaseline(gitRepo, base);
      await Deno.writeTextFile(
        `${repo.path}/test/other.test.js`,
        `require("node:test")("other", () => { throw new Error("new"); });\n`,
      );
      await commitAll(repo.path);
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
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.writeTextFile(`${repo.path}/src/math.js`, BROKEN);
    await commitAll(repo.path);
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
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    // The agent "fixes" the red test by changing its expectation, not the code.
    await Deno.writeTextFile(
      `${repo.path}/test/math.test.js`,
      TEST.replace("add(2, 2), 4", "add(2, 2), 0"),
    );
    await commitAll(repo.path);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false, "the weakened test passes, but the original does not");
    assert.match(result.feedback!, /You changed "test\/math.test.js" \(modified, test file\)/);
    assert.match(result.feedback!, /"adds": in their original versions, .* still fail/);
    assert.deepEqual(checker.evidence?.testsChanged, [
      { path: "test/math.test.js", change: "modified", why: "test file" },
    ]);
    assert.equal(checker.evidence?.originalsPass, false);

    // The test failed at the baseline: changing it does not fix it, declared or not.
    const declared = await checker.check(
      context(repo.path, gitRepo, base, {
        tests_changed: [{ path: "test/math.test.js", reason: "the spec now says 2+2 is 0" }],
      }),
    );
    assert.equal(declared.complete, false);
    assert.match(
      declared.feedback!,
      /^"npm test": "adds": in their original versions, against your code, tests that failed before your changes still fail\. .*declared or not: restore the test and fix the code$/,
    );
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
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.writeTextFile(
      `${repo.path}/test/math.test.js`,
      `${TEST}test("adds negatives", () => assert.equal(add(-1, -1), -2));\n`,
    );
    await commitAll(repo.path);
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
    await using checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.remove(`${repo.path}/test/math.test.js`);
    await commitAll(repo.path);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /ran 1 test, fewer than the 3 before your changes; you changed "test\/math.test.js" \(deleted, test file\): restore it/,
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
    await using checker = new RepoChecksChecker({ checks: [{ name: "flaky", command }] });
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
  // A user whose shell sets FORCE_COLOR gets Deno's colours in the check's output too.
  const run = await runRepoCheck(
    { name: "deno task test", command: "FORCE_COLOR=1 deno task test", runner: "deno" },
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
    await using checker = new RepoChecksChecker({
      checks: [{ name: "count", command: `echo x >> ${counter}` }],
    });
    const runs = async () => (await Deno.readTextFile(counter)).split("\n").length - 1;
    await checker.check(context(repo.path, gitRepo, base));
    await checker.check(context(repo.path, gitRepo, base));
    assert.equal(await runs(), 1, "the second check reuses the first");
    await Deno.writeTextFile(`${repo.path}/a.txt`, "changed");
    await commitAll(repo.path);
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

const FIXTURES = new URL("../fixtures/test_output/", import.meta.url);

/**
 * A repository whose check prints a captured runner output and exits with a
 * code, both read from files the "agent" then changes: the gate sees what it
 * would see from the real runner.
 */
async function replay(output: string, code: number, runner: "cargo" | "pytest") {
  const { repo, gitRepo, base } = await project({
    "out.txt": Deno.readTextFileSync(new URL(output, FIXTURES)),
    "code.txt": `${code}\n`,
  });
  const checker = new RepoChecksChecker({
    checks: [{ name: runner, command: "cat out.txt; exit $(cat code.txt)", runner }],
    timeoutMs: 60_000,
    protect: [...DEFAULT_PROTECTED_GLOBS],
  });
  await checker.startBaseline(gitRepo, base);
  const change = async (next: string, nextCode: number) => {
    await Deno.writeTextFile(
      `${repo.path}/out.txt`,
      Deno.readTextFileSync(new URL(next, FIXTURES)),
    );
    await Deno.writeTextFile(`${repo.path}/code.txt`, `${nextCode}\n`);
  };
  return { repo, gitRepo, base, checker, change };
}

Deno.test("the gate refuses tests set aside to make a suite pass", async (t) => {
  await t.step(
    "cargo's two failing tests marked #[ignore]: green now, refused, named",
    async () => {
      const { repo, gitRepo, base, checker, change } = await replay(
        "cargo_failing.txt",
        101,
        "cargo",
      );
      await using _ = repo;
      await using _checker = checker;
      await change("cargo_ignored.txt", 0);
      await commitAll(repo.path);
      const result = await checker.check(context(repo.path, gitRepo, base));
      assert.equal(result.complete, false);
      assert.match(
        result.feedback!,
        /^"cargo" ran 1 test, fewer than the 3 before your changes, and reports 2 more ignored than before your changes \(2, not 0\): "tests::adds", "tests::adds_negative" failed before your changes and are now set aside\. /,
      );
      assert.doesNotMatch(result.feedback!, /tests_changed/, "no declaration can let it stand");
      const evidence = checker.evidence!.checks[0];
      assert.deepEqual([evidence.baseline, evidence.now], ["red", "green"]);
      assert.deepEqual(evidence.baselineCounts, { run: 3, passed: 1, failed: 2, ignored: 0 });
      assert.deepEqual(evidence.counts, { run: 1, passed: 1, failed: 0, ignored: 2 });
      assert.equal(checker.evidence!.passed, false);
    },
  );

  await t.step("failing tests set aside are refused, declared or not", async () => {
    const { repo, gitRepo, base, checker, change } = await replay(
      "cargo_failing.txt",
      101,
      "cargo",
    );
    await using _ = repo;
    await using _checker = checker;
    await change("cargo_ignored.txt", 0);
    // Rust's unit tests live in the source file, which is not a protected test file.
    await commitAll(repo.path);
    const result = await checker.check(
      context(repo.path, gitRepo, base, {
        tests_changed: [{ path: "src/lib.rs", reason: "the two tests need a database" }],
      }),
    );
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /^"cargo" ran 1 test, fewer than the 3 before your changes, and reports 2 more ignored than before your changes \(2, not 0\): "tests::adds", "tests::adds_negative" failed before your changes and are now set aside\. Skipping or ignoring a failing test does not fix it, declared or not: remove the skip and fix the code$/,
    );
  });

  await t.step("pytest failures turned into skips are refused", async () => {
    const { repo, gitRepo, base, checker, change } = await replay(
      "pytest_failing.txt",
      1,
      "pytest",
    );
    await using _ = repo;
    await using _checker = checker;
    await change("pytest_skipped.txt", 0);
    await commitAll(repo.path);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /ran 1 test, fewer than the 3 before your changes, and reports 2 more skipped than before your changes \(2, not 0\)\. Newly set aside: "tests\/test_math.py:4", "tests\/test_math.py:13"\./,
    );
  });

  await t.step("more skipped is refused even when the check stays green", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": CODE,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.writeTextFile(
      `${repo.path}/test/math.test.js`,
      TEST.replace('test("adds zero", ()', 'test("adds zero", { skip: true }, ()'),
    );
    await commitAll(repo.path);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /"npm test" ran 1 test, fewer than the 2 before your changes, and reports 1 more skipped than before your changes \(1, not 0\)\. Newly set aside: "adds zero"; you changed "test\/math.test.js" \(modified, test file\): restore it/,
    );
  });

  await t.step("more tests, none set aside, pass", async () => {
    const { repo, gitRepo, base } = await project({
      "src/math.js": CODE,
      "test/math.test.js": TEST,
    });
    await using _ = repo;
    const checker = gate();
    await checker.startBaseline(gitRepo, base);
    await Deno.writeTextFile(
      `${repo.path}/test/extra.test.js`,
      `require("node:test")("extra", () => {});\n`,
    );
    await commitAll(repo.path);
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, true, result.feedback);
    assert.deepEqual(checker.evidence?.checks[0].counts, {
      run: 3,
      passed: 3,
      failed: 0,
      skipped: 0,
      todo: 0,
    });
  });
});

Deno.test("the real cargo: failing tests marked #[ignore] do not pass the gate", {
  ignore: !hasCommand("cargo"),
}, async () => {
  const lib = (ignore: string) =>
    `pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n` +
    `    #[test]\n${ignore}    fn adds() {\n        assert_eq!(add(1, 1), 2);\n    }\n\n` +
    `    #[test]\n    fn adds_zero() {\n        assert_eq!(add(3, 0), 3);\n    }\n}\n`;
  const { repo, gitRepo, base } = await project({
    "Cargo.toml": '[package]\nname = "sample"\nversion = "0.1.0"\nedition = "2021"\n',
    ".gitignore": "target/\nCargo.lock\n",
    "src/lib.rs": lib(""),
  });
  await using _ = repo;
  // Closed at the end: the baseline's build seed goes with it.
  await using checker = new RepoChecksChecker({
    checks: [{ name: "cargo test", command: "cargo test --offline", runner: "cargo" }],
    timeoutMs: 300_000,
    protect: [...DEFAULT_PROTECTED_GLOBS],
  });
  const baseline = await checker.startBaseline(gitRepo, base);
  assert.equal(baseline.runs[0].green, false, baseline.runs[0].tail);
  await Deno.writeTextFile(`${repo.path}/src/lib.rs`, lib("    #[ignore]\n"));
  await commitAll(repo.path);
  const result = await checker.check(context(repo.path, gitRepo, base));
  assert.equal(result.complete, false);
  assert.match(result.feedback!, /reports 1 more ignored than before your changes \(1, not 0\)/);
  assert.match(result.feedback!, /Newly set aside: "tests::adds", all failing before/);
  assert.equal(checker.evidence?.checks[0].now, "green");
});

function hasCommand(name: string): boolean {
  try {
    return new Deno.Command(name, { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

Deno.test("a check that exits 0 while its output reports failures is red", async (t) => {
  await t.step("a script's 'Tests failed: 4'", async () => {
    const run = await runRepoCheck(
      { name: "tests", command: "echo 'Tests passed: 6'; echo 'Tests failed: 4'; exit 0" },
      { cwd: ".", timeoutMs: 10_000 },
    );
    assert.equal(run.code, 0);
    assert.equal(run.green, false);
    assert.deepEqual(run.counts, { run: 10, passed: 6, failed: 4 });
  });

  await t.step("jest's summary behind '|| true', with the names", async () => {
    const jest = new URL("jest.txt", FIXTURES).pathname;
    const run = await runRepoCheck(
      { name: "npm test", command: `cat '${jest}' || true`, runner: "jest" },
      { cwd: ".", timeoutMs: 10_000 },
    );
    assert.equal(run.green, false);
    assert.deepEqual(run.failing, ["math > integers > adds", "divides"]);
  });

  await t.step("the gate says so", async () => {
    const { repo, gitRepo, base } = await project({ "ok.txt": "x" });
    await using _ = repo;
    const checker = new RepoChecksChecker({
      checks: [{ name: "tests", command: "echo 'Tests failed: 4'" }],
    });
    const result = await checker.check(context(repo.path, gitRepo, base));
    assert.equal(result.complete, false);
    assert.match(
      result.feedback!,
      /^"tests" fails; it exited 0 but its output reports 4 failed tests\./,
    );
    assert.equal(checker.evidence?.checks[0].now, "red");
  });

  await t.step("the word 'failed' outside a summary leaves it green", async () => {
    const run = await runRepoCheck(
      { name: "build", command: "echo 'Build failed: retrying'; echo '3 of 4 tests failed'" },
      { cwd: ".", timeoutMs: 10_000 },
    );
    assert.equal(run.green, true);
    assert.equal(run.counts, undefined);
  });
});

Deno.test("feedback tells the failures the changes caused from those already there", async () => {
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
  await commitAll(repo.path);
  const result = await checker.check(
    context(repo.path, gitRepo, base, {
      tests_changed: [{ path: "test/other.test.js", reason: "new behaviour" }],
    }),
  );
  assert.equal(result.complete, false);
  assert.match(
    result.feedback!,
    /; new failures \(not failing before your changes\): "other"; failing before your changes too: "adds"\./,
  );
});

Deno.test("checks run in the user's environment, with only checkVariables set", async () => {
  const run = await runRepoCheck(
    {
      name: "env",
      command: 'echo "NO_COLOR=${NO_COLOR-unset} FORCE_COLOR=${FORCE_COLOR-unset} CI=$CI"',
    },
    { cwd: ".", timeoutMs: 10_000 },
  );
  assert.equal(
    run.tail,
    `NO_COLOR=${Deno.env.get("NO_COLOR") ?? "unset"} FORCE_COLOR=${
      Deno.env.get("FORCE_COLOR") ?? "unset"
    } CI=true`,
  );
  const names = checkVariables().map((variable) => variable.name);
  assert.deepEqual(names.slice(0, 9), [
    "CI",
    "HOME",
    "TMPDIR",
    "XDG_CONFIG_HOME",
    "GIT_CONFIG_GLOBAL",
    "PYTHONNOUSERSITE",
    "PYTHONPYCACHEPREFIX",
    "PYTHONDONTWRITEBYTECODE",
    "FINISHLINE_BUILD_DIR",
  ]);
  // The rest point toolchains at the user's real caches, nothing else.
  for (const name of names.slice(9)) {
    assert.match(
      name,
      /^(CARGO_HOME|RUSTUP_HOME|GO\w+|DENO_DIR|npm_config_cache|\w+_ROOT|ASDF_DATA_DIR|VOLTA_HOME)$/,
    );
  }
});
