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
 * import assert from "node:assert/strict";
 * import { UsageError } from "@finishline/agents";
 *
 * const error = new UsageError('Unknown flag "--foo": run with --help for the list');
 * assert.equal(error.exitCode, 2);
 * assert.equal(error.name, "UsageError");
 * assert.equal(new UsageError("Stopped by the user", { exitCode: 130 }).exitCode, 130);
 * ```
 */
export class UsageError extends Error {
  /** The process exit code this error maps to. */
  readonly exitCode: number;

  /**
   * Create the error from a one-line message.
   *
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

/**
 * The first non-empty line of an error's message, for one-line reports.
 *
 * @param error Anything thrown.
 * @returns One line.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { firstLine } from "./errors.ts";
 *
 * assert.equal(firstLine(new Error("boom\n    at x")), "boom");
 * ```
 */
export function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.split("\n").find((line) => line.trim() !== "")?.trim() ?? "unknown error";
}

/**
 * SHA-256 of a text, as hex.
 *
 * @param text Any text.
 * @returns 64 hex characters.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { sha256Hex } from "./errors.ts";
 *
 * assert.match(await sha256Hex(""), /^e3b0c442[0-9a-f]{56}$/);
 * ```
 */
export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
