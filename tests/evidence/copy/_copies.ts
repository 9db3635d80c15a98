/**
 * Finds finishline's clean copies in the temp folder: each is a private
 * repository (never registered in the user's `git worktree list`) whose
 * `refs/finishline/` names every commit fetched into it.
 */

import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The work trees of the copies that hold `commit` (fetched into them).
 *
 * @param commit A commit hash.
 * @returns Their folders, sorted.
 */
export async function copiesOf(commit: string): Promise<string[]> {
  const found: string[] = [];
  for await (const entry of Deno.readDir(tmpdir())) {
    if (!entry.isDirectory || !entry.name.startsWith("finishline-checks-")) continue;
    const folder = join(tmpdir(), entry.name);
    const ref = await Deno.stat(join(folder, "git", "refs", "finishline", commit)).catch(() =>
      undefined
    );
    if (ref) found.push(join(folder, "tree"));
  }
  return found.sort();
}

/**
 * The one copy whose work tree holds `commit` now.
 *
 * @param commit A commit hash.
 * @returns Its folder.
 */
export async function copyAt(commit: string): Promise<string> {
  for (const dir of await copiesOf(commit)) {
    const head = new TextDecoder().decode(
      (await new Deno.Command("git", { args: ["rev-parse", "HEAD"], cwd: dir }).output()).stdout,
    ).trim();
    if (head === commit) return dir;
  }
  throw new Error(`No copy holds ${commit}`);
}
