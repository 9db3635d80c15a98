/**
 * A run killed before it removed its clean copies leaves them in the temp
 * folder, named with the repository and the run: the next run removes those
 * of dead runs, and nothing else. Real git in a temp repository.
 */

import assert from "node:assert/strict";
import { CheckWorktree, removeStaleWorktrees } from "../../../agents/evidence/copy/worktree_run.ts";
import { GitRepo } from "../../../agents/git/repo.ts";
import { git, tempRepo } from "../../_helpers.ts";

Deno.test("the copies of a repository's dead runs are removed; live runs' and ownerless ones stay", async () => {
  await using repo = await tempRepo();
  const gitRepo = (await GitRepo.open(repo.path))!;
  const head = await git(repo.path, "rev-parse", "HEAD");
  const dead = await CheckWorktree.create(gitRepo, head, { owner: "run-dead" });
  const live = await CheckWorktree.create(gitRepo, head, { owner: "run-live" });
  const ownerless = await CheckWorktree.create(gitRepo, head);
  assert.ok(dead instanceof CheckWorktree && live instanceof CheckWorktree);
  assert.ok(ownerless instanceof CheckWorktree);
  try {
    assert.equal((await git(repo.path, "worktree", "list")).split("\n").length, 1);
    const removed = await removeStaleWorktrees(
      gitRepo,
      (run) => Promise.resolve(run !== "run-live"),
    );
    assert.equal(removed.length, 1);
    assert.match(removed[0], /-run-dead-/);
    await assert.rejects(Deno.stat(dead.dir));
    assert.ok(await Deno.stat(live.dir));
    assert.ok(await Deno.stat(ownerless.dir));
  } finally {
    await dead.remove();
    await live.remove();
    await ownerless.remove();
  }
});
