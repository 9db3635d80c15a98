/**
 * The working tree as it is, uncommitted and untracked files included, as a
 * tree or a commit of git's, written through a temporary index.
 *
 * @module
 */

import path from "node:path";
import type { GitRepo } from "../../git/repo.ts";
import { runGit } from "../../git/run_git.ts";

/**
 * The tree of the working tree as it is, uncommitted and untracked (not
 * ignored) files included, written through a temporary index so that neither
 * the files nor the real index change. Equal trees mean equal contents.
 *
 * @param repo The repository.
 * @returns The tree and the HEAD it sits on, or undefined when git failed.
 */
export async function snapshotTree(
  repo: GitRepo,
): Promise<{ tree: string; head: string | undefined } | undefined> {
  const dir = await Deno.makeTempDir({ prefix: "finishline-index-" });
  try {
    const env = { GIT_INDEX_FILE: path.join(dir, "index") };
    const git = (args: string[]) => runGit(args, { cwd: repo.root, env, timeoutMs: 60_000 });
    const head = (await git(["rev-parse", "--verify", "-q", "HEAD"])).stdout.trim() || undefined;
    if (head) await git(["read-tree", head]);
    if ((await git(["add", "-A"])).code !== 0) return undefined;
    const tree = await git(["write-tree"]);
    return tree.code === 0 ? { tree: tree.stdout.trim(), head } : undefined;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

/**
 * A commit of the working tree as it is (see {@linkcode snapshotTree}),
 * parented on HEAD; no branch points at it.
 *
 * @param repo The repository.
 * @returns The commit, or undefined when git failed.
 */
export async function snapshotCommit(repo: GitRepo): Promise<string | undefined> {
  const snapshot = await snapshotTree(repo);
  if (!snapshot) return undefined;
  const commit = await runGit([
    "-c",
    "user.name=finishline",
    "-c",
    "user.email=finishline@localhost",
    "commit-tree",
    snapshot.tree,
    ...(snapshot.head ? ["-p", snapshot.head] : []),
    "-m",
    "finishline: snapshot of the working tree",
  ], { cwd: repo.root, timeoutMs: 60_000 });
  return commit.code === 0 ? commit.stdout.trim() : undefined;
}
