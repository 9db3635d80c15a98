/**
 * The `files` checker: paths that must exist.
 *
 * @module
 */

import { isAbsolute, join, sep } from "node:path";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./checker_contract.ts";

/**
 * Passes when every path exists (relative to the working directory).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { FilesChecker } from "./files.ts";
 *
 * const checker = new FilesChecker(["no-such-file.txt"]);
 * // The files checker only needs the working directory from the context.
 * const result = await checker.check({ cwd: Deno.cwd() } as never);
 * assert.deepEqual(result, {
 *   complete: false,
 *   feedback: "Missing required files: no-such-file.txt",
 * });
 * ```
 */
export class FilesChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  #paths: string[];

  /**
   * Create the checker.
   *
   * @param paths Paths that must exist, relative to the working directory or absolute.
   * @param name Name in feedback.
   */
  constructor(paths: string[], name = "files") {
    this.#paths = paths;
    this.name = name;
  }

  /**
   * Look for the paths.
   *
   * @param context The working directory.
   * @returns Incomplete with the missing paths.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { FilesChecker } from "./files.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await Deno.writeTextFile(`${dir}/CHANGELOG.md`, "# Changes\n");
   *   const result = await new FilesChecker(["CHANGELOG.md"]).check({ cwd: dir } as never);
   *   assert.equal(result.complete, true);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const missing: string[] = [];
    const root = await Deno.realPath(context.cwd).catch(() => context.cwd);
    for (const path of this.#paths) {
      try {
        const real = await Deno.realPath(isAbsolute(path) ? path : join(context.cwd, path));
        // A link that leads out of the working directory is no file of the repository's.
        if (real !== root && !real.startsWith(`${root}${sep}`)) missing.push(path);
      } catch {
        missing.push(path);
      }
    }
    if (missing.length > 0) return incomplete(`Missing required files: ${missing.join(", ")}`);
    return ok(`All ${this.#paths.length} required files exist`);
  }
}
