import assert from "node:assert/strict";
import { join } from "node:path";
import { GitChecker } from "../../agents/checks/git_checker.ts";
import type { TaskCompletionContext } from "../../agents/checks/checker_contract.ts";
import { GitRepo } from "../../agents/git/repo.ts";
import { git, tempDir, tempRepo } from "../_helpers.ts";
import { contextOf } from "./_helpers.ts";

/** Write a file and commit it. */
async function commit(repo: string, file: string, message: string): Promise<void> {
  await Deno.writeTextFile(join(repo, file), `${message}\n`);
  await git(repo, "add", file);
  await git(repo, "commit", "-q", "-m", message);
}

/** A checker context over a real repository, with HEAD now as the run's baseline. */
async function runContext(repo: string): Promise<TaskCompletionContext> {
  const gitRepo = await GitRepo.open(repo);
  assert.ok(gitRepo, "the temp repository opens");
  return contextOf({ cwd: repo, git: { repo: gitRepo, baseline: await gitRepo.head() } });
}

Deno.test("git checker counts commits since the run's baseline", async (t) => {
  await t.step("no repository (context.git undefined) fails", async () => {
    await using dir = await tempDir();
    const result = await new GitChecker().check(contextOf({ cwd: dir.path }));
    assert.equal(result.complete, false);
    assert.equal(result.feedback, "Not a git repository: there is no commit evidence to check");
  });

  await t.step("0 commits since the baseline fails", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    const result = await new GitChecker().check(context);
    assert.equal(result.complete, false);
    assert.equal(
      result.feedback,
      "Expected at least 1 new commit since the run started, found 0: commit your work",
    );
  });

  await t.step("1 commit passes, the default minimum", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "first");
    assert.deepEqual(await new GitChecker().check(context), {
      complete: true,
      feedback: "1 new commit",
    });
  });

  await t.step("minCommits 2 fails with 1 commit and passes with 2", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    const checker = new GitChecker({ minCommits: 2 });
    await commit(repo.path, "a.txt", "first");
    const one = await checker.check(context);
    assert.equal(one.complete, false);
    assert.equal(
      one.feedback,
      "Expected at least 2 new commits since the run started, found 1: commit your work",
    );
    await commit(repo.path, "b.txt", "second");
    assert.deepEqual(await checker.check(context), { complete: true, feedback: "2 new commits" });
  });

  await t.step("minCommits 0 passes without commits", async () => {
    await using repo = await tempRepo();
    const result = await new GitChecker({ minCommits: 0 }).check(await runContext(repo.path));
    assert.deepEqual(result, { complete: true, feedback: "0 new commits" });
  });

  await t.step("commits made before the baseline do not count", async () => {
    await using repo = await tempRepo();
    await commit(repo.path, "old.txt", "before the run");
    const context = await runContext(repo.path);
    assert.equal((await new GitChecker().check(context)).complete, false);
  });

  await t.step("a run that started in an empty repository counts every commit", async () => {
    await using dir = await tempDir("finishline-repo-");
    await git(dir.path, "init", "-q", "-b", "main");
    await git(dir.path, "config", "user.name", "Test");
    await git(dir.path, "config", "user.email", "test@example.invalid");
    const context = await runContext(dir.path);
    assert.equal(context.git?.baseline, null);
    assert.equal((await new GitChecker().check(context)).complete, false);
    await commit(dir.path, "a.txt", "first ever");
    assert.equal((await new GitChecker().check(context)).complete, true);
  });

  await t.step("a baseline git does not know fails as unknown, never as progress", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "first");
    context.git!.baseline = "deadbeefdeadbeefdeadbeefdeadbeefdeadbeef";
    const result = await new GitChecker({ minCommits: 0 }).check(context);
    assert.equal(result.complete, false);
    assert.equal(
      result.feedback,
      "Could not count commits (git failed); commit your work and try again",
    );
  });

  await t.step("the name defaults to git and can be set", () => {
    assert.equal(new GitChecker().name, "git");
    assert.equal(new GitChecker({ name: "commits" }).name, "commits");
  });
});

Deno.test("git checker with cleanTree fails on uncommitted files", async (t) => {
  await t.step("staged, unstaged and untracked files fail, each named once", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "tracked.txt", "tracked");
    await Deno.writeTextFile(join(repo.path, "staged.txt"), "staged\n");
    await git(repo.path, "add", "staged.txt");
    await Deno.writeTextFile(join(repo.path, "tracked.txt"), "changed\n");
    await Deno.writeTextFile(join(repo.path, "untracked.txt"), "new\n");
    await Deno.writeTextFile(join(repo.path, "README.md"), "staged then changed\n");
    await git(repo.path, "add", "README.md");
    await Deno.writeTextFile(join(repo.path, "README.md"), "changed again\n");
    const result = await new GitChecker({ cleanTree: true }).check(context);
    assert.equal(result.complete, false);
    const listed = result.feedback!.match(/^4 uncommitted files: (.*); commit or remove them$/);
    assert.ok(listed, result.feedback);
    assert.deepEqual(listed[1].split(", ").sort(), [
      "README.md",
      "staged.txt",
      "tracked.txt",
      "untracked.txt",
    ]);
  });

  await t.step("one dirty file is named in the singular", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "work");
    await Deno.writeTextFile(join(repo.path, "notes.txt"), "scratch\n");
    const result = await new GitChecker({ cleanTree: true }).check(context);
    assert.equal(result.feedback, "1 uncommitted file: notes.txt; commit or remove them");
  });

  await t.step("more than five dirty files list five and count the rest", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "work");
    for (let index = 1; index <= 7; index++) {
      await Deno.writeTextFile(join(repo.path, `f${index}.txt`), "x\n");
    }
    const result = await new GitChecker({ cleanTree: true }).check(context);
    assert.match(result.feedback!, /^7 uncommitted files: (f\d\.txt, ){5}and 2 more; commit/);
  });

  await t.step("ignore prefixes do not count as changes", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "work");
    await Deno.mkdir(join(repo.path, ".agent/demo/logs"), { recursive: true });
    await Deno.writeTextFile(join(repo.path, ".agent/demo/logs/run-1.jsonl"), "{}\n");
    const checker = new GitChecker({ cleanTree: true, ignore: [".agent/demo/logs"] });
    assert.deepEqual(await checker.check(context), {
      complete: true,
      feedback: "1 new commit, clean tree",
    });
    await Deno.writeTextFile(join(repo.path, ".agent/demo/agent.json"), "{}\n");
    const result = await checker.check(context);
    assert.equal(
      result.feedback,
      "1 uncommitted file: .agent/demo/agent.json; commit or remove them",
    );
  });

  await t.step("a clean tree with enough commits passes", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "work");
    assert.deepEqual(await new GitChecker({ cleanTree: true }).check(context), {
      complete: true,
      feedback: "1 new commit, clean tree",
    });
  });

  await t.step("without cleanTree dirty files do not matter", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await commit(repo.path, "a.txt", "work");
    await Deno.writeTextFile(join(repo.path, "scratch.txt"), "x\n");
    assert.equal((await new GitChecker().check(context)).complete, true);
  });

  await t.step("missing commits are reported before a dirty tree", async () => {
    await using repo = await tempRepo();
    const context = await runContext(repo.path);
    await Deno.writeTextFile(join(repo.path, "scratch.txt"), "x\n");
    const result = await new GitChecker({ cleanTree: true }).check(context);
    assert.match(result.feedback!, /^Expected at least 1 new commit/);
  });
});
