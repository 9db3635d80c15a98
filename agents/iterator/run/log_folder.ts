/**
 * The folder of a run's log and report (`logging.directory`): relative to the
 * repository, and confined to it after symlinks are followed, so that neither
 * an agent.json nor a symlinked folder writes them anywhere else.
 *
 * @module
 */

import { fileURLToPath } from "node:url";
import type { LoadedDefinition } from "../../definition/definition_types.ts";
import { confineWritableFolder } from "../../support/confine.ts";

/**
 * Where a relative logging directory starts, and the root it must stay in:
 * the folder holding the local agent's `.agent/`, or for a built-in agent the
 * repository's root (the working directory outside one), so a run from a
 * subfolder logs where a run from the root does.
 *
 * @param loaded The loaded definition.
 * @param repoRoot The repository's root, if in one.
 * @param cwd The working directory.
 * @returns The absolute root.
 */
export function logRoot(
  loaded: LoadedDefinition,
  repoRoot: string | undefined,
  cwd: string,
): string {
  if (!loaded.builtin && loaded.agentDir.protocol === "file:") {
    return fileURLToPath(new URL("../../", loaded.agentDir)).replace(/\/$/, "");
  }
  return repoRoot ?? cwd;
}

/**
 * The run's log folder, confined to {@linkcode logRoot}.
 *
 * @param loaded The loaded definition (its `logging.directory`).
 * @param where The repository's root, if in one, and the working directory.
 * @returns The absolute folder.
 * @throws {UsageError} When it is, or resolves, outside the root.
 */
export function logFolder(
  loaded: LoadedDefinition,
  where: { repoRoot?: string; cwd: string; directory?: string },
): Promise<string> {
  const root = logRoot(loaded, where.repoRoot, where.cwd);
  return confineWritableFolder(root, where.directory ?? loaded.definition.logging.directory, {
    field: "logging.directory",
  });
}

/**
 * Whether a file may still be written into the log folder as it was when the
 * run opened it: the agent works in the repository, so by the end it may have
 * put a link in the folder's place, or in the file's.
 *
 * @param file The file about to be written (the report).
 * @param realFolder The log folder's real path when the run opened its log.
 * @returns Undefined when it may, else why not.
 */
export async function unsafeToWrite(file: string, realFolder: string): Promise<string | undefined> {
  const folder = file.slice(0, file.lastIndexOf("/")) || "/";
  const real = await Deno.realPath(folder).catch(() => undefined);
  if (real !== realFolder) return "the log folder was moved or replaced by a link during the run";
  const entry = await Deno.lstat(file).catch(() => undefined);
  if (entry && !entry.isFile) return "a link or folder is in the report's place";
  return undefined;
}
