/**
 * Temp folders owned by the finishline process that made them: each holds
 * an owner file (the process id and its start time, as ids are reused), so
 * that the next finishline to make one of the same kind removes those of
 * processes that died without removing them (killed with SIGKILL).
 *
 * @module
 */

import { join } from "node:path";

/** The file that names a folder's owner. */
const OWNER_FILE = "finishline-owner";

/**
 * A process's start time in clock ticks since boot, from /proc.
 *
 * @param pid The process id.
 * @returns The start time, or undefined when the process is gone.
 */
export function processStart(pid: number): string | undefined {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

/**
 * Remove the folders of `prefix` in the temp folder whose owner is gone.
 * Folders without an owner file, or another user's, are left.
 *
 * @param prefix The folders' name prefix.
 */
export function removeStaleFolders(prefix: string): void {
  let tmp: string;
  try {
    tmp = Deno.realPathSync(Deno.env.get("TMPDIR") || "/tmp");
  } catch {
    return;
  }
  try {
    for (const entry of Deno.readDirSync(tmp)) {
      if (!entry.isDirectory || !entry.name.startsWith(prefix)) continue;
      const folder = join(tmp, entry.name);
      let owner: string;
      try {
        owner = Deno.readTextFileSync(join(folder, OWNER_FILE));
      } catch {
        continue;
      }
      const [pid, start] = owner.split(" ");
      if (processStart(Number(pid)) === start) continue;
      try {
        Deno.removeSync(folder, { recursive: true });
      } catch {
        // another user's, or removed meanwhile
      }
    }
  } catch {
    // an unreadable temp folder: nothing to tidy
  }
}

/**
 * Make a temp folder owned by this process, after removing the stale ones
 * of its kind.
 *
 * @param prefix The folder's name prefix.
 * @returns Its path.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ownedTempDir } from "./owned_temp.ts";
 *
 * const folder = ownedTempDir("finishline-example-");
 * assert.ok(Deno.statSync(folder).isDirectory);
 * Deno.removeSync(folder, { recursive: true });
 * ```
 */
export function ownedTempDir(prefix: string): string {
  removeStaleFolders(prefix);
  const folder = Deno.makeTempDirSync({ prefix });
  Deno.writeTextFileSync(join(folder, OWNER_FILE), `${Deno.pid} ${processStart(Deno.pid)}`);
  return folder;
}
