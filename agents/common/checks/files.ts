/**
 * The `files` checker: paths that must exist.
 *
 * @module
 */

import { isAbsolute, join } from "node:path";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./types.ts";

/**
 * Passes when every path exists (relative to the working directory).
 *
 * @example
 * ```ts
 * import { FilesChecker } from "./files.ts";
 * const result = await new FilesChecker(["no-such-file.txt"]).check({ cwd: Deno.cwd() } as never);
 * console.assert(!result.complete);
 * ```
 */
export class FilesChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  #paths: string[];

  /**
   * @param paths Paths that must exist.
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
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const missing: string[] = [];
    for (const path of this.#paths) {
      try {
        await Deno.stat(isAbsolute(path) ? path : join(context.cwd, path));
      } catch {
        missing.push(path);
      }
    }
    if (missing.length > 0) return incomplete(`Missing required files: ${missing.join(", ")}`);
    return ok(`All ${this.#paths.length} required files exist`);
  }
}
