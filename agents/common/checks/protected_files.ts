/**
 * The files that define "done": test files and check configuration, and
 * which of them the agent modified or deleted since the run started.
 *
 * @module
 */

import path from "node:path";
import type { GitRepo } from "../git.ts";

/**
 * Protected files (tests, check configuration) that differ between `base`
 * and the working tree: modified or deleted, never merely added.
 *
 * @param repo The repository.
 * @param base The starting commit.
 * @param options Globs of protected files and exact paths of configuration files.
 * @returns The changed paths, relative to the repository root.
 */
export async function changedProtectedFiles(
  repo: GitRepo,
  base: string,
  options: { protect: string[]; configFiles: string[] },
): Promise<Array<{ path: string; change: "modified" | "deleted" }>> {
  const diff = await repo.exec(["diff", "--name-status", "--no-renames", "-z", base, "--"]);
  if (diff.code !== 0) return [];
  const fields = diff.stdout.split("\0").filter((field) => field !== "");
  const changed: Array<{ path: string; change: "modified" | "deleted" }> = [];
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const status = fields[index];
    const file = fields[index + 1];
    if (status !== "M" && status !== "D" && status !== "T") continue;
    if (!isProtected(file, options)) continue;
    changed.push({ path: file, change: status === "D" ? "deleted" : "modified" });
  }
  return changed;
}

/**
 * Whether a repository path is one that defines done.
 *
 * @param file Path relative to the repository root.
 * @param options Globs and exact configuration paths.
 * @returns True when protected.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { DEFAULT_PROTECTED_GLOBS, isProtected } from "@finishline/agents";
 *
 * const options = { protect: [...DEFAULT_PROTECTED_GLOBS], configFiles: ["package.json"] };
 * assert.equal(isProtected("test/math.test.js", options), true);
 * assert.equal(isProtected("src/math_test.go", options), true);
 * assert.equal(isProtected("package.json", options), true);
 * assert.equal(isProtected("src/math.js", options), false);
 * ```
 */
export function isProtected(
  file: string,
  options: { protect: string[]; configFiles: string[] },
): boolean {
  if (file.startsWith(".agent/")) return false;
  return options.configFiles.includes(file) ||
    options.protect.some((glob) => path.matchesGlob(file, glob));
}
