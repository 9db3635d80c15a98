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

/**
 * The private copy folders of a repository's runs in the temp folder (named
 * `finishline-checks-<repository>-<run>-…`), and the worktrees registered in
 * it besides the checkout: what a run leaves when it is killed.
 *
 * @param repo The repository's folder.
 * @returns The folders, each named with its run.
 */
export async function copyFolders(repo: string): Promise<string[]> {
  const root = await Deno.realPath(repo);
  const hash = [
    ...new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(root))),
  ].map((byte) => byte.toString(16).padStart(2, "0")).join("").slice(0, 12);
  const prefix = `finishline-checks-${hash}-`;
  const found: string[] = [];
  for await (const entry of Deno.readDir(tmpdir())) {
    if (entry.isDirectory && entry.name.startsWith(prefix)) found.push(join(tmpdir(), entry.name));
  }
  const listed = new TextDecoder().decode(
    (await new Deno.Command("git", { args: ["worktree", "list", "--porcelain"], cwd: repo })
      .output()).stdout,
  );
  return [...listed.split("\n\n").slice(1).filter((block) => block.trim()), ...found.sort()];
}
