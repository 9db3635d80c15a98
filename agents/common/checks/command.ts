/**
 * The `command` checker: runs a command (such as `deno task test`) and
 * passes when it exits 0.
 *
 * @module
 */

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
 * import assert from "node:assert/strict";
 * import { CommandChecker } from "@finishline/agents";
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
   * import { CommandChecker } from "@finishline/agents";
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
    const result = await runInGroup(command, context.cwd, timeoutSeconds * 1000);
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

/** How long a timed-out command gets to exit on SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/**
 * Run `sh -c command` as the leader of its own process group, stdout and
 * stderr captured together. On timeout the whole group is stopped: killing
 * only the shell would leave its children running, holding the output pipes
 * open, so the wait would outlast the timeout.
 */
async function runInGroup(
  command: string,
  cwd: string,
  timeoutMs: number,
): Promise<{ code: number; combined: string; timedOut: boolean }> {
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const chunks: Uint8Array[] = [];
  const readers = [child.stdout.getReader(), child.stderr.getReader()];
  const reading = Promise.all(readers.map(async (reader) => {
    try {
      for (let read = await reader.read(); !read.done; read = await reader.read()) {
        chunks.push(read.value);
      }
    } catch {
      // cancelled after the kill; keep what was read
    }
  }));
  let exited = false;
  let timedOut = false;
  const status = child.status.finally(() => exited = true);
  const killGroup = (signal: Deno.Signal) => {
    try {
      Deno.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  };
  let grace: ReturnType<typeof setTimeout> | undefined;
  const timer = setTimeout(() => {
    timedOut = !exited;
    killGroup("SIGTERM");
    grace = setTimeout(() => {
      killGroup("SIGKILL");
      // A process that left the group may still hold the pipes.
      for (const reader of readers) reader.cancel().catch(() => {});
    }, KILL_GRACE_MS);
  }, timeoutMs);
  try {
    const [{ code }] = await Promise.all([status, reading]);
    const bytes = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
    let offset = 0;
    for (const chunk of chunks) {
      bytes.set(chunk, offset);
      offset += chunk.length;
    }
    return { code, combined: new TextDecoder().decode(bytes), timedOut };
  } finally {
    clearTimeout(timer);
    clearTimeout(grace);
  }
}
