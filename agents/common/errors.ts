/**
 * Errors that finishline reports to its user.
 *
 * @module
 */

/** Exit code for bad flags, bad definitions and other input mistakes. */
export const USAGE_EXIT_CODE = 2;

/**
 * A mistake in what the user gave us (flags, agent.json, templates, handlers).
 *
 * The CLI prints its message alone, on one line, and exits with `exitCode`.
 *
 * @example
 * ```ts
 * import { UsageError } from "./errors.ts";
 * const error = new UsageError('Unknown flag "--foo": run with --help for the list');
 * console.assert(error.exitCode === 2);
 * ```
 */
export class UsageError extends Error {
  /** The process exit code this error maps to. */
  readonly exitCode: number;

  /**
   * @param message One line, sentence case, no trailing period.
   * @param options `exitCode` (default 2) and the underlying `cause`.
   */
  constructor(
    message: string,
    options: { exitCode?: number; cause?: unknown } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = "UsageError";
    this.exitCode = options.exitCode ?? USAGE_EXIT_CODE;
  }
}
