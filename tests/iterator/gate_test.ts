import assert from "node:assert/strict";
import { parseDefinition } from "../../agents/common/definition/parse.ts";
import { GitRepo } from "../../agents/common/git.ts";
import { GitHubCli } from "../../agents/common/github.ts";
import { emptySummary } from "../../agents/common/summary.ts";
import { UsageError } from "../../agents/common/errors.ts";
import { createWorktree } from "../../agents/common/worktree.ts";
import {
  GitHubPullRequestGate,
  ISSUE_CLOSE_REFUSAL,
  preflight,
  prepareChecks,
} from "../../agents/iterator/gate.ts";
import { FakeGitHub } from "../fixtures/fake_gh/mod.ts";
import { git, tempDir, tempRepo } from "../_helpers.ts";

function definition(json: { behavior?: Record<string, unknown>; verify?: unknown }) {
  const behavior = {
    completionType: "manual",
    completionConfig: { completionKeyword: "DONE" },
    ...json.behavior,
  };
  return parseDefinition(JSON.stringify({ name: "x", ...json, behavior }), {
    displayPath: ".agent/x/agent.json",
  });
}

Deno.test("the refusal catches the agent's own gh issue close, and only that", () => {
  const pattern = new RegExp(ISSUE_CLOSE_REFUSAL.pattern);
  for (
    const command of [
      "gh issue close 5",
      "gh issue close 5 --comment 'done'",
      "git commit -qam fix && gh issue close 5",
      "gh --repo octo/demo issue close 5",
      "cd x; gh issue close 7",
    ]
  ) assert.ok(pattern.test(command), command);
  for (
    const command of [
      "gh issue view 5",
      "gh issue list --state closed",
      "echo 'closes #5' > notes.txt",
      "git commit -m 'fix: close the file handle'",
    ]
  ) assert.ok(!pattern.test(command), command);
});

Deno.test("preflight refuses a run that cannot finish, before any session", async (t) => {
  await using repo = await tempRepo();
  await Deno.writeTextFile(
    `${repo.path}/package.json`,
    JSON.stringify({ scripts: { test: "node --test" } }),
  );
  const base = {
    displayPath: ".agent/x/agent.json",
    permissionMode: "default" as const,
    changesCode: true,
  };

  await t.step("a check whose executable is missing", async () => {
    const def = definition({});
    const checks = await prepareChecks(def, repo.path);
    await assert.rejects(
      preflight({ ...base, definition: def, checks, path: "/nonexistent" }),
      (error: Error) =>
        error instanceof UsageError &&
        error.message ===
          `Check "npm test" (from package.json scripts.test) cannot start: "npm" is not installed or not on PATH; install it, or configure "verify.checks" (or "verify.detect": false) in ".agent/x/agent.json"`,
    );
  });

  await t.step("a configured command check whose executable is missing", async () => {
    const def = definition({
      verify: { checks: [{ type: "command", command: "no-such-tool-here --all" }] },
    });
    await assert.rejects(
      preflight({ ...base, definition: def, checks: await prepareChecks(def, repo.path) }),
      /Check "no-such-tool-here --all" \(from "verify.checks\[0\].command" in ".agent\/x\/agent.json"\) cannot start/,
    );
  });

  await t.step("allowed tools without Bash cannot run the checks", async () => {
    const def = definition({ behavior: { allowedTools: ["Read", "Edit"] } });
    await assert.rejects(
      preflight({ ...base, definition: def, checks: await prepareChecks(def, repo.path) }),
      /"behavior.allowedTools" in ".agent\/x\/agent.json" has no "Bash", so the agent cannot run the checks \("npm test"\)/,
    );
  });

  await t.step("allowed tools that cannot edit, for an agent that must change code", async () => {
    const def = definition({ behavior: { allowedTools: ["Read"] }, verify: { detect: false } });
    await assert.rejects(
      preflight({ ...base, definition: def, checks: await prepareChecks(def, repo.path) }),
      /lets the agent edit no file/,
    );
    // acceptEdits lets it edit with the same tools.
    await preflight({
      ...base,
      permissionMode: "acceptEdits",
      definition: def,
      checks: await prepareChecks(def, repo.path),
    });
  });

  await t.step("--create-pr without a remote, or without gh logged in", async () => {
    const def = definition({});
    const checks = await prepareChecks(def, repo.path);
    const gitRepo = (await GitRepo.open(repo.path))!;
    await using gh = await FakeGitHub.create({ authenticated: false });
    const github = new GitHubCli({ cwd: repo.path, gh: `${gh.binDir}/gh`, env: gh.env() });
    await assert.rejects(
      preflight({ ...base, definition: def, checks, createPr: { repo: gitRepo, github } }),
      /Flag "--create-pr" needs a remote to push to, and ".*" has none/,
    );
    await using remote = await tempDir();
    await git(remote.path, "init", "-q", "--bare");
    await git(repo.path, "remote", "add", "origin", remote.path);
    await assert.rejects(
      preflight({ ...base, definition: def, checks, createPr: { repo: gitRepo, github } }),
      /The GitHub CLI is not logged in/,
    );
  });
});

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
