/**
 * Runs in their own git worktree: a branch `finishline/<agent>/<id>` checked
 * out beside the main checkout, so the agent's work never touches it.
 *
 * @module
 */

import { join } from "node:path";
import { UsageError } from "../support/errors.ts";
import { GitRepo } from "./repo.ts";

/** Where worktrees go, relative to the repository root (kept out of git status). */
export const WORKTREES_DIR = ".agent/.finishline/worktrees";

/** A worktree created for a run. */
export interface Worktree {
  /** Absolute path of the worktree. */
  path: string;
  /** Its branch. */
  branch: string;
  /** What it was created from (a branch name or a commit). */
  base: string;
  /** Whether the branch existed before (a rerun continues it). */
  reused: boolean;
}

/**
 * The branch name of a run: `finishline/<agent>/<id>`, with characters git
 * does not allow replaced.
 *
 * @param agent The agent name.
 * @param id `issue-42`, `project-3` or a run id.
 * @returns The branch name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { worktreeBranch } from "./worktree.ts";
 *
 * assert.equal(worktreeBranch("iterator", "issue-42"), "finishline/iterator/issue-42");
 * ```
 */
export function worktreeBranch(agent: string, id: string): string {
  const safe = id.replace(/[^A-Za-z0-9._-]+/g, "-").replace(/^[-.]+|[-.]+$/g, "") || "run";
  return `finishline/${agent}/${safe}`;
}

/**
 * Refuse a `--base-branch` that names no branch or commit of the repository.
 *
 * @param repo The main checkout.
 * @param baseBranch The flag's value.
 * @throws {UsageError} When it names none.
 */
export async function checkBaseBranch(repo: GitRepo, baseBranch: string): Promise<void> {
  const exists = await repo.exec(["rev-parse", "--verify", "-q", `${baseBranch}^{commit}`]);
  if (exists.code !== 0) {
    throw new UsageError(
      `Flag "--base-branch" names "${baseBranch}", which is not a branch or commit here`,
    );
  }
}

/**
 * Create (or reuse) the run's worktree.
 *
 * @param repo The main checkout.
 * @param options Agent name, id and base branch.
 * @returns The worktree.
 * @throws {UsageError} When git cannot create it (the message says why).
 */
export async function createWorktree(
  repo: GitRepo,
  options: { agent: string; id: string; baseBranch?: string },
): Promise<Worktree> {
  const branch = worktreeBranch(options.agent, options.id);
  const base = options.baseBranch ?? await repo.branch() ?? await repo.head();
  if (!base) throw new UsageError(`Cannot create a worktree: the repository has no commit yet`);
  if (options.baseBranch) await checkBaseBranch(repo, options.baseBranch);
  const path = join(repo.root, WORKTREES_DIR, branch.replaceAll("/", "-"));
  const existing = await repo.exec(["rev-parse", "--verify", "-q", `refs/heads/${branch}`]);
  const reused = existing.code === 0;
  const listed = await repo.worktree(["list", "--porcelain"]);
  if (listed.stdout.split("\n").some((line) => line === `worktree ${path}`)) {
    return { path, branch, base, reused: true };
  }
  const args = reused ? ["add", path, branch] : ["add", "-b", branch, path, base];
  const created = await repo.worktree(args);
  if (created.code !== 0) {
    const lines = created.stderr.split("\n").map((line) => line.trim()).filter(Boolean);
    const why = lines.find((line) => /^(fatal|error):/i.test(line)) ?? lines.at(-1) ??
      `exit code ${created.code}`;
    // What git made before it failed (a checkout an LFS filter refused) goes again.
    await Deno.remove(path, { recursive: true }).catch(() => {});
    await repo.worktree(["prune"]);
    if (!reused) await repo.exec(["branch", "-D", branch]);
    throw new UsageError(`Cannot create the worktree "${path}" on branch "${branch}": ${why}`);
  }
  return { path, branch, base, reused };
}

/**
 * Remove a worktree, but only when it is clean; the branch keeps the commits.
 *
 * @param repo The main checkout.
 * @param worktree The worktree.
 * @returns Whether it was removed.
 */
export async function removeWorktreeIfClean(repo: GitRepo, worktree: Worktree): Promise<boolean> {
  const inside = await GitRepo.open(worktree.path);
  const status = await inside?.status();
  if (!status || status.staged.length + status.unstaged.length > 0) return false;
  return (await repo.worktree(["remove", worktree.path])).code === 0;
}
