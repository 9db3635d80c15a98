/**
 * Combining checkers: all must pass (short-circuit on the first failure) or
 * any may pass (short-circuit on the first success).
 *
 * @module
 */

import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./checker_contract.ts";

/** The result of a composite check, with the checker that decided it. */
export interface CompositeResult extends TaskCompletionResult {
  /** The name of the checker that decided (or "composite" when all were needed). */
  readonly decidedBy: string;
  /** Whether a checker threw. */
  readonly faulted?: boolean;
}

/**
 * Runs several checkers. With `allMustPass` (the default) it stops at the
 * first failure and returns that checker's own result, its name in
 * `decidedBy`; when all pass it combines their feedback. Otherwise it stops
 * at the first success and returns it the same way; when all fail it
 * combines their feedback. Combined feedback labels each part with its
 * checker's name (`[tests] 2 tests fail`). Results are frozen.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CompositeChecker, incomplete, ok } from "@finishline/agents";
 *
 * const pass = { name: "pass", check: () => ok("fine") };
 * const fail = { name: "fail", check: () => incomplete("broken") };
 * const all = new CompositeChecker([pass, fail]);
 * const any = new CompositeChecker([fail, pass], { allMustPass: false });
 * // These checkers look at no evidence, so an empty context will do.
 * const context = {} as never;
 * assert.equal((await all.check(context)).complete, false);
 * assert.equal((await any.check(context)).complete, true);
 * ```
 */
export class CompositeChecker implements TaskCompletionChecker {
  /** Always "composite". */
  readonly name = "composite";
  /** The checkers, in order. */
  readonly checkers: readonly TaskCompletionChecker[];
  /** All must pass, or any may pass. */
  readonly allMustPass: boolean;
  /** The checkers' names, in order, as feedback labels them ({@linkcode checkerName}). */
  readonly names: readonly string[];

  /**
   * Combine checkers into one.
   *
   * @param checkers The checkers, in the order they run.
   * @param options `allMustPass` (default true).
   */
  constructor(checkers: TaskCompletionChecker[], options: { allMustPass?: boolean } = {}) {
    this.checkers = checkers;
    this.allMustPass = options.allMustPass ?? true;
    this.names = checkers.map(checkerName);
  }

  /**
   * Run the checkers with short-circuit semantics; a checker that throws
   * counts as incomplete and marks the result `faulted`.
   *
   * @param context The evidence.
   * @returns The combined result and the checker that decided.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { CompositeChecker, incomplete, ok } from "@finishline/agents";
   *
   * const checker = new CompositeChecker([
   *   { name: "tests", check: () => ok() },
   *   { name: "docs", check: () => incomplete("README is missing") },
   * ]);
   * const result = await checker.check({} as never);
   * // The failing checker's own result, and its name.
   * assert.deepEqual(result, {
   *   complete: false,
   *   feedback: "README is missing",
   *   decidedBy: "docs",
   * });
   * ```
   */
  async check(context: TaskCompletionContext): Promise<CompositeResult> {
    const notes: string[] = [];
    let faulted = false;
    for (const [index, checker] of this.checkers.entries()) {
      const name = this.names[index];
      let result: TaskCompletionResult;
      try {
        result = await checker.check(context);
      } catch (error) {
        faulted = true;
        result = incomplete(
          `the checker failed: ${
            error instanceof Error ? error.message.split("\n")[0] : String(error)
          }`,
        );
      }
      if (this.allMustPass && !result.complete) {
        return decided(result, name, faulted);
      }
      if (!this.allMustPass && result.complete) return decided(result, name, false);
      if (result.feedback) notes.push(labelled(name, result.feedback));
    }
    if (this.allMustPass) {
      return decided(ok(notes.length > 0 ? notes.join("\n") : undefined), "composite", false);
    }
    if (this.checkers.length === 0) return decided(ok(), "composite", false);
    return decided(incomplete(notes.join("\n") || "No checker passed"), "composite", faulted);
  }
}

/**
 * A checker's name for logs and feedback: its own `name`, else its class's
 * name, else `checker <n>`.
 *
 * @param checker The checker.
 * @param index Its place in the list (0-based).
 * @returns The name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ok } from "@finishline/agents";
 * import { checkerName } from "./composite.ts";
 *
 * class FileExistsChecker {
 *   check() {
 *     return ok();
 *   }
 * }
 * assert.equal(checkerName({ name: "tests", check: () => ok() }, 0), "tests");
 * assert.equal(checkerName(new FileExistsChecker(), 0), "FileExistsChecker");
 * assert.equal(checkerName({ check: () => ok() }, 1), "checker 2");
 * ```
 */
export function checkerName(checker: TaskCompletionChecker, index: number): string {
  if (typeof checker.name === "string" && checker.name !== "") return checker.name;
  const type = (checker as { constructor?: { name?: unknown } }).constructor?.name;
  if (typeof type === "string" && type !== "" && type !== "Object") return type;
  return `checker ${index + 1}`;
}

/**
 * A checker's own result as the composite's, with the checker that decided
 * it (a nested composite's result keeps the name of the checker that decided
 * inside it); frozen.
 */
function decided(
  result: TaskCompletionResult & { decidedBy?: unknown },
  name: string,
  faulted: boolean,
): CompositeResult {
  const decidedBy = typeof result.decidedBy === "string" ? result.decidedBy : name;
  return Object.freeze({ ...result, decidedBy, ...(faulted ? { faulted } : {}) });
}

function labelled(name: string, feedback: string | undefined): string {
  return `[${name}] ${feedback ?? "incomplete"}`;
}
