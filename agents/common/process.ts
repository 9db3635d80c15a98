/**
 * Run a short-lived tool (git, gh) for its output, with a timeout. A direct
 * `Deno.Command` rather than a shell library: git runs several times per
 * iteration, and this path costs about 1.5 ms per call where dax costs 4–5 ms
 * and 80 ms to import (measured in `bench/`).
 *
 * @module
 */

/** Exit code reported when the tool timed out (as `timeout(1)` does). */
export const TIMEOUT_CODE = 124;
/** Exit code reported when the executable does not exist (as a shell does). */
export const MISSING_CODE = 127;

/** What a tool printed and how it exited. */
export interface ToolResult {
  /** Exit code; {@linkcode TIMEOUT_CODE} on timeout, {@linkcode MISSING_CODE} when missing. */
  code: number;
  /** Standard output. */
  stdout: string;
  /** Standard error, or why the tool could not run. */
  stderr: string;
}

/** Options of {@linkcode runTool}. */
export interface ToolOptions {
  /** Working directory. */
  cwd: string;
  /** Extra environment over the parent's. */
  env?: Record<string, string>;
  /** Kill the tool after this many milliseconds. */
  timeoutMs: number;
}

const decoder = new TextDecoder();

/**
 * Run an executable with arguments (no shell), stdin closed, and collect its
 * output. Never throws: a timeout, a missing executable or a spawn failure is
 * an exit code with the reason in `stderr`.
 *
 * @param executable The program (looked up on PATH).
 * @param args Its arguments.
 * @param options Working directory, environment and timeout.
 * @returns Exit code, stdout and stderr.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { MISSING_CODE, runTool } from "@finishline/agents";
 *
 * const ok = await runTool("git", ["--version"], { cwd: ".", timeoutMs: 10_000 });
 * assert.equal(ok.code, 0);
 * assert.match(ok.stdout, /^git version/);
 *
 * const missing = await runTool("no-such-tool-here", [], { cwd: ".", timeoutMs: 10_000 });
 * assert.equal(missing.code, MISSING_CODE);
 * ```
 */
export async function runTool(
  executable: string,
  args: string[],
  options: ToolOptions,
): Promise<ToolResult> {
  const timeout = AbortSignal.timeout(options.timeoutMs);
  try {
    const output = await new Deno.Command(executable, {
      args,
      cwd: options.cwd,
      env: options.env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: timeout,
    }).output();
    if (timeout.aborted) {
      return {
        code: TIMEOUT_CODE,
        stdout: decoder.decode(output.stdout),
        stderr: `timed out after ${options.timeoutMs} ms`,
      };
    }
    return {
      code: output.code,
      stdout: decoder.decode(output.stdout),
      stderr: decoder.decode(output.stderr),
    };
  } catch (error) {
    if (error instanceof Deno.errors.NotFound && !/\bcwd\b/.test(error.message)) {
      return { code: MISSING_CODE, stdout: "", stderr: `${executable}: command not found` };
    }
    return { code: 1, stdout: "", stderr: error instanceof Error ? error.message : String(error) };
  }
}
