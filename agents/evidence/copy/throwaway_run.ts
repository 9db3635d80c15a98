/**
 * Checks on a copy of a commit made for them alone and removed after: a
 * {@linkcode CheckWorktree} at `commit`, original files put back where
 * asked, the checks run once.
 *
 * @module
 */

import type { GitRepo } from "../../git/repo.ts";
import type { RepoCheck } from "../run/check_run.ts";
import { type BaselineResult, baselineTimer } from "../run/baseline_result.ts";
import { CheckWorktree } from "./worktree_run.ts";

/**
 * Run checks in a detached worktree of `commit`, with the checkout's
 * dependency folders (`node_modules`, `.venv`, ...) linked in, then remove it.
 * Never throws: a failure to make the worktree is the result's `error`.
 *
 * @param repo The repository.
 * @param commit The commit to check out.
 * @param options The checks, the timeout of each, and files to restore from `restoreFrom`.
 * @returns Each check's run.
 */
export async function runInWorktree(
  repo: GitRepo,
  commit: string,
  options: {
    checks: RepoCheck[];
    timeoutMs: number;
    restore?: { from: string; paths: string[] };
    signal?: AbortSignal;
  },
): Promise<BaselineResult> {
  const finished = baselineTimer(commit);
  const worktree = await CheckWorktree.create(repo, commit);
  if (typeof worktree === "string") return finished([], worktree);
  try {
    if (options.restore) {
      const error = await worktree.restore(options.restore.from, options.restore.paths);
      if (error) return finished([], error);
    }
    const runs = await worktree.run(options.checks, options);
    if (options.signal?.aborted) return finished(runs, "stopped before it finished");
    return finished(runs);
  } finally {
    await worktree.remove();
  }
}
