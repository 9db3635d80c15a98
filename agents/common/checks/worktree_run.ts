/**
 * Running checks on another state of the repository: a detached worktree of
 * a commit (the baseline, or a snapshot of the working tree with original
 * test files put back), with the checkout's dependency folders linked in.
 *
 * @module
 */

import path from "node:path";
import type { GitRepo } from "../git.ts";
import { runGit } from "../run_git.ts";
import { type CheckRun, type RepoCheck, runRepoCheck } from "./check_run.ts";

/** The checks on the starting commit. */
export interface BaselineResult {
  /** The commit they ran on. */
  commit: string;
  /** Each check's run, in order. */
  runs: CheckRun[];
  /** Wall time of the whole baseline in milliseconds, worktree included. */
  durationMs: number;
  /** Why the baseline could not run, when it could not. */
  error?: string;
}

/** Folders of installed dependencies that a fresh worktree lacks: linked from the checkout. */
const DEPENDENCY_DIRS = ["node_modules", ".venv", "venv"];

/**
 * Run checks in a detached worktree of `commit`, with the checkout's
 * dependency folders (`node_modules`, `.venv`) linked in, then remove it.
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
  const started = performance.now();
  const dir = await Deno.makeTempDir({ prefix: "finishline-checks-" });
  const finished = (runs: CheckRun[], error?: string): BaselineResult => ({
    commit,
    runs,
    durationMs: Math.round(performance.now() - started),
    ...(error ? { error } : {}),
  });
  const added = await repo.exec(["worktree", "add", "--detach", "--quiet", dir, commit]);
  try {
    if (added.code !== 0) {
      return finished(
        [],
        `cannot make a worktree of ${commit.slice(0, 12)}: ${added.stderr.trim()}`,
      );
    }
    for (const name of DEPENDENCY_DIRS) {
      const source = path.join(repo.root, name);
      const target = path.join(dir, name);
      // A folder the commit tracks itself is left as it is: the link fails on it.
      if (await isDirectory(source)) await Deno.symlink(source, target).catch(() => {});
    }
    if (options.restore && options.restore.paths.length > 0) {
      const restored = await runGit(
        ["checkout", "--no-overlay", options.restore.from, "--", ...options.restore.paths],
        { cwd: dir, timeoutMs: 30_000 },
      );
      if (restored.code !== 0) {
        return finished([], `cannot restore the original files: ${restored.stderr.trim()}`);
      }
    }
    const runs: CheckRun[] = [];
    for (const check of options.checks) {
      if (options.signal?.aborted) return finished(runs, "stopped before it finished");
      runs.push(
        await runRepoCheck(check, {
          cwd: dir,
          timeoutMs: options.timeoutMs,
          signal: options.signal,
        }),
      );
    }
    if (options.signal?.aborted) return finished(runs, "stopped before it finished");
    return finished(runs);
  } finally {
    await repo.exec(["worktree", "remove", "--force", dir]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    await repo.exec(["worktree", "prune"]);
  }
}

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

async function isDirectory(file: string): Promise<boolean> {
  try {
    return (await Deno.stat(file)).isDirectory;
  } catch {
    return false;
  }
}
