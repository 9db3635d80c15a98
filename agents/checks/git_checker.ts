/**
 * The `git` checker: new commits since the run's baseline, optionally a
 * clean working tree.
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

/** Options of {@linkcode GitChecker}. */
export interface GitCheckerOptions {
  /** Commits required since the run's baseline. @default 1 */
  minCommits?: number;
  /** Require no uncommitted changes. @default false */
  cleanTree?: boolean;
  /** Path prefixes that do not count as changes (finishline's logs). @default [] */
  ignore?: string[];
  /** Name in feedback. @default "git" */
  name?: string;
}

/**
 * Passes with at least `minCommits` new commits since the run started (and a
 * clean tree when asked). Unknown git state never passes.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { GitChecker } from "./git_checker.ts";
 *
 * // Outside a repository there is no evidence, so the check never passes.
 * const result = await new GitChecker().check({ cwd: "/" } as never);
 * assert.equal(result.complete, false);
 * assert.match(result.feedback ?? "", /Not a git repository/);
 * ```
 */
export class GitChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  #options: GitCheckerOptions;

  /**
   * Create the checker.
   *
   * @param options Minimum commits, clean tree, ignored paths and name.
   */
  constructor(options: GitCheckerOptions = {}) {
    this.#options = options;
    this.name = options.name ?? "git";
  }

  /**
   * Count commits and look at the tree.
   *
   * @param context Git evidence of the run.
   * @returns Complete with enough commits (and a clean tree when asked).
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { GitChecker } from "./git_checker.ts";
   * import { GitRepo } from "../git/repo.ts";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   await new Deno.Command("git", { args: ["init", "-q", dir] }).output();
   *   const repo = (await GitRepo.open(dir))!;
   *   await repo.exec(["config", "user.name", "Ada"]);
   *   await repo.exec(["config", "user.email", "ada@example.com"]);
   *   await Deno.writeTextFile(`${dir}/notes.txt`, "first\n");
   *   await repo.commitPaths(["notes.txt"], "Add notes");
   *   await Deno.writeTextFile(`${dir}/notes.txt`, "changed\n");
   *
   *   const git = { repo, baseline: null };
   *   const commits = await new GitChecker().check({ cwd: dir, git } as never);
   *   assert.deepEqual(commits, { complete: true, feedback: "1 new commit" });
   *   const clean = await new GitChecker({ cleanTree: true }).check({ cwd: dir, git } as never);
   *   assert.equal(clean.feedback, "1 uncommitted file: notes.txt; commit or remove them");
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const { minCommits = 1, cleanTree = false, ignore = [] } = this.#options;
    if (!context.git) {
      return incomplete("Not a git repository: there is no commit evidence to check");
    }
    const count = await context.git.repo.commitsSince(context.git.baseline);
    if (count === null) {
      return incomplete("Could not count commits (git failed); commit your work and try again");
    }
    if (count < minCommits) {
      return incomplete(
        `Expected at least ${minCommits} new commit${
          minCommits === 1 ? "" : "s"
        } since the run started, found ${count}: commit your work`,
      );
    }
    if (cleanTree) {
      const status = await context.git.repo.status(ignore);
      if (status === null) return incomplete("Could not read the working tree (git failed)");
      const dirty = [...new Set([...status.staged, ...status.unstaged])];
      if (dirty.length > 0) {
        const listed = dirty.slice(0, 5).join(", ") +
          (dirty.length > 5 ? `, and ${dirty.length - 5} more` : "");
        return incomplete(
          `${dirty.length} uncommitted file${
            dirty.length === 1 ? "" : "s"
          }: ${listed}; commit or remove them`,
        );
      }
    }
    return ok(`${count} new commit${count === 1 ? "" : "s"}${cleanTree ? ", clean tree" : ""}`);
  }
}
