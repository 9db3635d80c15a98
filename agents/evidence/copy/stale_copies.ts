/**
 * The clean copies a killed run left behind: private folders in the temp
 * folder named with the repository and the run, and the worktrees earlier
 * versions registered in the repository, locked in the run's name.
 *
 * @module
 */

import { tmpdir } from "node:os";
import path from "node:path";
import type { GitRepo } from "../../git/repo.ts";
import { sha256Hex } from "../../support/errors.ts";
import { removeStaleSeeds } from "./build_seed.ts";

/** The lock reason of a worktree an earlier version made for its checks, before the run's id. */
const OWNER_REASON = "finishline run ";

/**
 * The start of the name of a repository's copy folders: its root's hash, then the run.
 *
 * @param repoRoot The repository's root.
 * @returns The prefix.
 */
export async function copyPrefix(repoRoot: string): Promise<string> {
  return `finishline-checks-${(await sha256Hex(repoRoot)).slice(0, 12)}-`;
}

/**
 * Remove the check copies of runs that are dead: the private folders named
 * with the repository and a run ({@linkcode CheckWorktree.create}) whose run
 * `isDead` says is over, and the worktrees earlier versions registered,
 * locked as `finishline run <id>` (then `git worktree prune`). They hold only
 * finishline's copies of commits, never work of the agent's or the user's.
 * The build seeds those runs left in the temp folder go too
 * ({@linkcode removeStaleSeeds}).
 *
 * @param repo The repository.
 * @param isDead Whether a run (by id) is over and its worktrees may go.
 * @returns The folders removed.
 */
export async function removeStaleWorktrees(
  repo: GitRepo,
  isDead: (runId: string) => Promise<boolean>,
): Promise<string[]> {
  const listed = await repo.worktree(["list", "--porcelain"]);
  if (listed.code !== 0) return [];
  const removed: string[] = [];
  for (const block of listed.stdout.split("\n\n")) {
    const dir = /^worktree (.+)$/m.exec(block)?.[1];
    const owner = new RegExp(`^locked ${OWNER_REASON}([\\w.-]+)$`, "m").exec(block)?.[1];
    if (!dir || !owner || !(await isDead(owner))) continue;
    await repo.worktree(["remove", "--force", "--force", dir]);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    removed.push(dir);
  }
  if (removed.length > 0) await repo.worktree(["prune"]);
  const prefix = await copyPrefix(repo.root);
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const entry of Deno.readDir(tmpdir())) entries.push(entry);
  } catch {
    // No temp folder to read: nothing of ours there.
  }
  for (const entry of entries) {
    if (!entry.isDirectory || !entry.name.startsWith(prefix)) continue;
    // <prefix><run>-<random>: the run is what lies between.
    const rest = entry.name.slice(prefix.length);
    // A copy made for no run (no "-" before the random part) is no dead run's.
    if (rest.lastIndexOf("-") < 0) continue;
    const run = rest.slice(0, rest.lastIndexOf("-"));
    if (!/^[\w.-]+$/.test(run) || !await isDead(run)) continue;
    const dir = path.join(tmpdir(), entry.name);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    removed.push(dir);
  }
  // Their build seeds, in the temp folder, go too (not counted: they are no worktrees).
  await removeStaleSeeds(repo.root, isDead).catch(() => []);
  return removed;
}
