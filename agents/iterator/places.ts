/**
 * Where the CLI's commands work: the working directory (`--cwd`) and the run
 * history (`--store`, else the repository's). Shared by the run, the history
 * commands, `checks` and the fleet.
 *
 * @module
 */

import { join, resolve } from "node:path";
import { firstLine, UsageError } from "../support/errors.ts";
import type { EmbeddingsConfig } from "../definition/definition_types.ts";
import { createEmbedder } from "../embeddings/mod.ts";
import { DEFAULT_STORE_PATH, SqliteStore } from "../store/mod.ts";

/**
 * The working directory: `--cwd`, resolved and checked, else the process's.
 *
 * @param flag The `--cwd` flag.
 * @returns An absolute path.
 */
export async function workingDirectory(flag: string | undefined): Promise<string> {
  const cwd = flag === undefined ? Deno.cwd() : resolve(flag);
  try {
    if (!(await Deno.stat(cwd)).isDirectory) throw new Error("not a directory");
  } catch {
    throw new UsageError(
      `Flag "--cwd" expects an existing directory, got "${flag}"`,
    );
  }
  return cwd;
}

/**
 * The run history's file: `--store PATH`, else `.agent/.finishline/state.db`
 * under the root.
 *
 * @param flag The `--store` flag.
 * @param root The repository root or working directory.
 * @returns An absolute path.
 */
export function resolveStorePath(flag: string | undefined, root: string): string {
  return flag ? resolve(flag) : join(root, DEFAULT_STORE_PATH);
}

/**
 * Open the run history: `--store PATH`, else `.agent/.finishline/state.db`
 * in the repository (or working directory).
 *
 * @param flag The `--store` flag.
 * @param root The repository root or working directory.
 * @param options The agent's `learnings.embeddings` (hybrid search and deduplication by
 *   meaning), and where the notes go that say why vectors are not used.
 * @returns The store.
 */
export function openStore(
  flag: string | undefined,
  root: string,
  options: { embeddings?: EmbeddingsConfig; stderr?: (text: string) => void } = {},
): SqliteStore {
  const path = resolveStorePath(flag, root);
  const { stderr } = options;
  try {
    return SqliteStore.open(path, {
      embedder: createEmbedder(options.embeddings),
      onNote: stderr && ((note) => stderr(`[finishline] ${note}\n`)),
    });
  } catch (error) {
    const reason = firstLine(error);
    // SQLite's words for a file or folder it may not write (the WAL files live beside it).
    const hint = /unable to open|readonly|read-only|permission/i.test(reason)
      ? ": is it or its folder read-only? Choose another file with --store PATH"
      : "";
    throw new UsageError(`Cannot open the run history "${path}" (${reason})${hint}`);
  }
}
