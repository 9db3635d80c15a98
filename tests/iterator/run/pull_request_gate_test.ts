import assert from "node:assert/strict";
import { GitRepo } from "../../../agents/git/repo.ts";
import { GitHubCli } from "../../../agents/github/port.ts";
import { emptySummary } from "../../../agents/record/iteration.ts";
import { createWorktree } from "../../../agents/git/worktree.ts";
import { GitHubPullRequestGate } from "../../../agents/iterator/run/pull_request_gate.ts";
import { FakeGitHub } from "../../fixtures/fake_gh/mod.ts";
import { git, tempDir, tempRepo } from "../../_helpers.ts";

Deno.test("the pull request gate pushes, opens the pull request once and waits for its checks", async () => {
  await using repo = await tempRepo();
  await using remote = await tempDir();
  await git(remote.path, "init", "-q", "--bare");
  await git(repo.path, "remote", "add", "origin", remote.path);
  const gitRepo = (await GitRepo.open(repo.path))!;
  const worktree = await createWorktree(gitRepo, { agent: "x", id: "issue-3" });
  await using gh = await FakeGitHub.create({ repo: "octo/demo" });
  await gh.scriptChecks(
    worktree.branch,
    [{ name: "test", state: "pending" }],
    [{ name: "test", state: "fail", link: "https://github.com/octo/demo/actions/runs/77/job/1" }],
    [{ name: "test", state: "pass" }],
  );
  await gh.scriptRunLog(77, "test\tRun tests\t2026-01-01T00:00:00Z not ok 1 - adds\n");
  const github = new GitHubCli({
    cwd: worktree.path,
    repo: "octo/demo",
    gh: `${gh.binDir}/gh`,
    env: gh.env(),
    sleep: () => Promise.resolve(),
  });
  const gate = new GitHubPullRequestGate({
    worktree,
    git: (await GitRepo.open(worktree.path))!,
    github,
    timeoutMs: 60_000,
    intervalMs: 1,
  });
  const signal = new AbortController().signal;
  const first = await gate.check(emptySummary(1), signal);
  assert.equal(first.verification.passed, false);
  assert.match(first.verification.feedback, /The pull request's checks failed: "test"/);
  assert.match(first.verification.feedback, /not ok 1 - adds/);
  assert.match(first.url ?? "", /\/pull\/\d+$/);

  const second = await gate.check(emptySummary(2), signal);
  assert.equal(second.verification.passed, true, second.verification.feedback);
  assert.equal(second.url, first.url);
  const creates = (await gh.calls()).filter((call) =>
    call.argv.slice(0, 2).join(" ") === "pr create"
  );
  assert.equal(creates.length, 1, "the pull request is opened once");
  assert.equal(
    await git(remote.path, "rev-parse", worktree.branch),
    await git(worktree.path, "rev-parse", "HEAD"),
  );
  await git(repo.path, "worktree", "remove", "--force", worktree.path);
});
