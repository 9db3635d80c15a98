/**
 * Run a short-lived tool (git, gh) for its output, with a timeout. A direct
 * `Deno.Command` rather than a shell library: git runs several times per
 * iteration, and this path costs about 1.5 ms per call where dax costs 4–5 ms
 * and 80 ms to import (measured in `bench/`).
 *
 * @module
 */

import { groupRuns } from "./process_tags.ts";

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
 * import { MISSING_CODE, runTool } from "./process.ts";
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

/** How long a timed-out command gets to exit on SIGTERM before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** What {@linkcode runShell} saw. */
export interface ShellResult {
  /**
   * Exit code (the shell's 127 when the command is not found).
   */
  code: number;
  /**
   * Standard output and standard error, interleaved as they came; beyond
   * `maxBytes`, its head and its tail with a line saying how much was cut.
   */
  combined: string;
  /** Whether the command was stopped at its timeout. */
  timedOut: boolean;
  /** Bytes of output left out of `combined` (0 when it is whole). */
  cutBytes: number;
}

/** Bytes read from a command's pipe at a time. */
const READ_SIZE = 64 * 1024;

/** The most of a command's output {@linkcode runShell} keeps, by default: 1 MiB. */
export const SHELL_OUTPUT_LIMIT = 1024 * 1024;

/**
 * A command's output, kept within a budget: the first eighth of it whole,
 * then the latest bytes, the middle dropped. Test runners name what matters
 * at the start (the run's set-up) and at the end (the summary of failures);
 * a suite that prints 100 MB then costs finishline its budget, not 1 GB.
 */
class BoundedOutput {
  readonly #head: Uint8Array;
  #headBytes = 0;
  /** The latest bytes, in a ring: `#tailStart` is where the oldest one is once it is full. */
  readonly #tail: Uint8Array;
  #tailBytes = 0;
  #tailStart = 0;
  /** Bytes dropped from the middle. */
  cut = 0;

  constructor(limit: number) {
    const head = Math.floor(limit / 8);
    this.#head = new Uint8Array(head);
    this.#tail = new Uint8Array(limit - head);
  }

  /** Keeps what of `chunk` fits (copied: the reader reuses its buffer). */
  add(chunk: Uint8Array): void {
    if (this.#headBytes < this.#head.length) {
      const first = chunk.subarray(0, this.#head.length - this.#headBytes);
      this.#head.set(first, this.#headBytes);
      this.#headBytes += first.length;
      chunk = chunk.subarray(first.length);
    }
    const size = this.#tail.length;
    if (chunk.length === 0 || size === 0) {
      this.cut += chunk.length;
      return;
    }
    if (chunk.length >= size) {
      // The chunk alone fills the ring: its last bytes are the tail.
      this.cut += this.#tailBytes + chunk.length - size;
      this.#tail.set(chunk.subarray(chunk.length - size));
      this.#tailBytes = size;
      this.#tailStart = 0;
      return;
    }
    const end = (this.#tailStart + this.#tailBytes) % size;
    const first = Math.min(chunk.length, size - end);
    this.#tail.set(chunk.subarray(0, first), end);
    this.#tail.set(chunk.subarray(first), 0);
    const over = Math.max(0, this.#tailBytes + chunk.length - size);
    this.cut += over;
    this.#tailBytes = Math.min(size, this.#tailBytes + chunk.length);
    this.#tailStart = (this.#tailStart + over) % size;
  }

  text(): string {
    const decoder = new TextDecoder();
    const head = decoder.decode(this.#head.subarray(0, this.#headBytes));
    const size = this.#tail.length;
    const ordered = this.#tailStart + this.#tailBytes <= size
      ? this.#tail.subarray(this.#tailStart, this.#tailStart + this.#tailBytes)
      : concat([
        this.#tail.subarray(this.#tailStart),
        this.#tail.subarray(0, (this.#tailStart + this.#tailBytes) % size),
      ]);
    const tail = decoder.decode(ordered);
    if (this.cut === 0) return head + tail;
    // Cut at line ends, so that no line of the tail is read half.
    const start = tail.indexOf("\n") + 1;
    return `${head.replace(/[^\n]*$/, "")}\n[finishline: ${this.cut} bytes of output cut here]\n${
      tail.slice(start)
    }`;
  }
}

function concat(chunks: Uint8Array[]): Uint8Array {
  const bytes = new Uint8Array(chunks.reduce((total, chunk) => total + chunk.length, 0));
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}

/**
 * Run `sh -c command` as the leader of its own process group, stdout and
 * stderr captured together, at most `maxBytes` of them kept (head and tail).
 * On timeout the whole group is stopped: killing only the shell would leave
 * its children running, holding the output pipes open, so the wait would
 * outlast the timeout. When the shell exits, what it left running in its
 * group (a dev server, a watcher started in the background) is stopped too.
 *
 * @param command The shell command.
 * @param options Working directory, timeout, extra environment, abort signal,
 * and `maxBytes` of output to keep (default {@linkcode SHELL_OUTPUT_LIMIT}).
 * @returns Exit code, output and whether it timed out.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { runShell } from "./process.ts";
 *
 * const result = await runShell("echo out; echo err >&2; exit 3", { cwd: ".", timeoutMs: 10_000 });
 * assert.equal(result.code, 3);
 * assert.match(result.combined, /out/);
 * assert.match(result.combined, /err/);
 * assert.equal(result.timedOut, false);
 * ```
 */
export async function runShell(
  command: string,
  options: {
    cwd: string;
    timeoutMs: number;
    env?: Record<string, string>;
    signal?: AbortSignal;
    maxBytes?: number;
  },
): Promise<ShellResult> {
  const { cwd, timeoutMs, env, signal } = options;
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    cwd,
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    detached: true,
  }).spawn();
  const output = new BoundedOutput(options.maxBytes ?? SHELL_OUTPUT_LIMIT);
  // Each pipe is read into one buffer of its own, reused: 100 MB of output allocate nothing.
  const readers = [
    child.stdout.getReader({ mode: "byob" }),
    child.stderr.getReader({ mode: "byob" }),
  ];
  const reading = Promise.all(readers.map(async (reader) => {
    let buffer = new Uint8Array(READ_SIZE);
    try {
      for (let read = await reader.read(buffer); !read.done; read = await reader.read(buffer)) {
        output.add(read.value);
        buffer = new Uint8Array(read.value.buffer);
      }
    } catch {
      // cancelled after the kill; keep what was read
    }
  }));
  let exited = false;
  let timedOut = false;
  const status = child.status.finally(() => {
    exited = true;
    // What the shell left running in its group would hold the pipes, and outlive the run.
    stop();
  });
  const killGroup = (signal: Deno.Signal) => {
    try {
      Deno.kill(-child.pid, signal);
    } catch {
      // the group is gone already
    }
  };
  let grace: ReturnType<typeof setTimeout> | undefined;
  const stop = () => {
    if (grace !== undefined) return;
    killGroup("SIGTERM");
    grace = setTimeout(() => {
      killGroup("SIGKILL");
      // A process that left the group may still hold the pipes.
      for (const reader of readers) reader.cancel().catch(() => {});
    }, KILL_GRACE_MS);
  };
  const timer = setTimeout(() => {
    timedOut = !exited;
    stop();
  }, timeoutMs);
  if (signal?.aborted) stop();
  signal?.addEventListener("abort", stop, { once: true });
  try {
    const [{ code }] = await Promise.all([status, reading]);
    // A process forked while the group was being stopped missed that signal.
    await emptyGroup(child.pid);
    return { code, combined: output.text(), timedOut, cutBytes: output.cut };
  } finally {
    signal?.removeEventListener("abort", stop);
    clearTimeout(timer);
    clearTimeout(grace);
  }
}

/**
 * Stop process group `pid` until nothing in it runs: SIGTERM every 20 ms (a
 * process forked while the group was signalled missed it), SIGKILL every 20 ms
 * after the grace period, until none is left (at most one more grace period). Returns at once when the group is gone, or (read from `/proc`)
 * holds only exited processes its new parent has not reaped yet.
 */
async function emptyGroup(pid: number): Promise<void> {
  const deadline = performance.now() + KILL_GRACE_MS;
  for (;;) {
    try {
      Deno.kill(-pid, "SIGTERM");
    } catch {
      return;
    }
    if (await groupRuns(pid) === false) return;
    if (performance.now() >= deadline) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  // Then SIGKILL, until the kernel has ended them all: on a loaded machine a killed process
  // still runs for a moment, and returning then would leave it to be seen running.
  const killed = performance.now() + KILL_GRACE_MS;
  for (;;) {
    try {
      Deno.kill(-pid, "SIGKILL");
    } catch {
      return;
    }
    if (await groupRuns(pid) === false || performance.now() >= killed) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
