/**
 * Worktrees made and removed side by side in one repository (the baseline's,
 * the held-out test's, the clean copy's): git writes each worktree's files
 * under `.git/worktrees/` one by one, and a `git worktree add` that reads a
 * half-written one fails ("failed to read .../commondir"). finishline makes
 * them one at a time per repository. Real git.
 */

import assert from "node:assert/strict";
import { CheckWorktree } from "../../../agents/evidence/copy/worktree_run.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { tempRepo } from "../../_helpers.ts";

Deno.test("worktrees made and removed side by side in one repository all succeed", async () => {
  await using repo = await tempRepo();
  const gitRepo = (await GitRepo.open(repo.path))!;
  const head = (await gitRepo.head())!;
  for (let round = 0; round < 3; round++) {
    const made = await Promise.all(
      Array.from({ length: 8 }, () => CheckWorktree.create(gitRepo, head)),
    );
    const failed = made.filter((worktree) => typeof worktree === "string");
    assert.deepEqual(failed, [], "every worktree was made");
    await Promise.all(made.map((worktree) => (worktree as CheckWorktree).remove()));
  }
  const listed = await gitRepo.exec(["worktree", "list", "--porcelain"]);
  assert.equal(listed.stdout.split("\n").filter((line) => line.startsWith("worktree ")).length, 1);
});
