/**
 * The `command` checker: runs a command (such as `deno task test`) and
 * passes when it exits 0.
 *
 * @module
 */

import $ from "dax";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./types.ts";

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
 * import { CommandChecker } from "./command.ts";
 * const checker = new CommandChecker({ command: "echo nope >&2; exit 3" });
 * const result = await checker.check({ cwd: Deno.cwd() } as never);
 * console.assert(!result.complete && result.feedback!.includes("nope"));
 * ```
 */
export class CommandChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  #options: CommandCheckerOptions;

  /** @param options Command, timeout, name. */
  constructor(options: CommandCheckerOptions) {
    this.#options = options;
    this.name = options.name ?? "command";
  }

  /**
   * Run the command.
   *
   * @param context The working directory.
   * @returns Complete when it exits 0.
   */
  async check(context: TaskCompletionContext): Promise<TaskCompletionResult> {
    const { command, timeoutSeconds = 600, tailLines = 30 } = this.#options;
    const result = await $`sh -c ${command}`
      .cwd(context.cwd)
      .timeout(timeoutSeconds * 1000)
      .noThrow()
      .stdin("null")
      .captureCombined(true);
    if (result.code === 0) return ok(`\`${command}\` passed`);
    const output = result.combined.trimEnd().split("\n").slice(-tailLines).join("\n");
    const why = result.code === 124
      ? `timed out after ${timeoutSeconds} s`
      : `exited with code ${result.code}`;
    return incomplete(
      `\`${command}\` ${why}.${
        output ? `\nLast lines of its output:\n${output}` : " It printed nothing."
      }`,
    );
  }
}
