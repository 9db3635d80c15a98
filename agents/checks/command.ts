/**
 * The `command` checker: runs a command (such as `deno task test`) and
 * passes when it exits 0.
 *
 * @module
 */

import { runShell } from "../support/process.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./checker_contract.ts";

/** Options of {@linkcode CommandChecker}. */
export interface CommandCheckerOptions {
  /** Shell command, run with `sh -c` in the working directory. */
  command: string;
  /** Timeout in seconds. @default 600 */
  timeoutSeconds?: number;
  /** Name in feedback. @default "command" */
  name?: string;
  /** Lines of output kept in the feedback. @default 30 */
  tailLines?: number;
}

/**
 * Passes when the command exits 0; otherwise the feedback is the command,
 * its exit code and the tail of its output.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CommandChecker } from "./command.ts";
 *
 * const checker = new CommandChecker({ command: "echo nope >&2; exit 3", name: "tests" });
 * assert.equal(checker.name, "tests");
 * // The command checker only needs the working directory from the context.
 * const result = await checker.check({ cwd: Deno.cwd() } as never);
 * assert.equal(result.complete, false);
 * assert.match(result.feedback ?? "", /exited with code 3/);
 * assert.match(result.feedback ?? "", /nope/);
 * ```
 */
export class CommandChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  #options: CommandCheckerOptions;

  /**
   * Create the checker.
   *
   * @param options Command, timeout, name and how much output to keep.
   */
  constructor(options: CommandCheckerOptions) {
    this.#options = options;
    this.name = options.name ?? "command";
  }

  /**
   * Run the command in the working directory, killing its whole process
   * group when it times out.
   *
   * @param context The working directory.
   * @returns Complete when it exits 0.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { CommandChecker } from "./command.ts";
   *
   * const checker = new CommandChecker({ command: "test -d ." });
   * assert.deepEqual(await checker.check({ cwd: Deno.cwd() } as never), {
   *   complete: true,
   *   feedback: "`test -d .` passed",
   * });
   * ```
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const { command, timeoutSeconds = 600, tailLines = 30 } = this.#options;
    context.onCheck?.(command, true);
    const result = await runShell(command, { cwd: context.cwd, timeoutMs: timeoutSeconds * 1000 })
      .finally(() => context.onCheck?.(command, false));
    if (!result.timedOut && result.code === 0) return ok(`\`${command}\` passed`);
    const output = result.combined.trimEnd().split("\n").slice(-tailLines).join("\n");
    const why = result.timedOut
      ? `timed out after ${timeoutSeconds} s`
      : `exited with code ${result.code}`;
    return incomplete(
      `\`${command}\` ${why}.${
        output ? `\nLast lines of its output:\n${output}` : " It printed nothing."
      }`,
    );
  }
}
