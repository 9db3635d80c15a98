/**
 * One run of a fleet is one finishline process: `main.ts --issue N
 * --worktree --create-pr --json ...` (or `--resume RUN_ID --json`), in its
 * own session (so a Ctrl-C on the terminal reaches the fleet only, which
 * passes it on once), its stdout and stderr going to files that outlive the
 * fleet. Each run's state stays in its own process: its locks, its
 * worktree, its Claude Code.
 *
 * @module
 */

import { fileURLToPath } from "node:url";

/** A run's process, as the fleet holds it. */
export interface RunProcess {
  /** Its process id. */
  pid: number;
  /** Resolves with how it ended. */
  status: Promise<{ code: number; signal: string | null }>;
  /** Send it a signal (ignored once it has ended). */
  kill(signal: Deno.Signal): void;
}

/** Where a run's output goes. */
export interface RunFiles {
  /** Its stdout: the `--json` result. */
  stdout: string;
  /** Its stderr: progress and errors. */
  stderr: string;
}

/**
 * What `deno run` runs for a run: this package's CLI, as a path when local,
 * as a `jsr:` specifier when this code was loaded from JSR.
 *
 * @param url The CLI module's URL.
 * @returns The path or specifier.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { cliEntry } from "./child.ts";
 * assert.equal(cliEntry("file:///repo/agents/iterator/main.ts"), "/repo/agents/iterator/main.ts");
 * assert.equal(
 *   cliEntry("https://jsr.io/@finishline/agents/0.2.0/agents/iterator/main.ts"),
 *   "jsr:@finishline/agents@0.2.0/iterator",
 * );
 * ```
 */
export function cliEntry(url: string = new URL("../main.ts", import.meta.url).href): string {
  const jsr = url.match(
    /^https:\/\/jsr\.io\/(@[^/]+\/[^/]+)\/([^/]+)\/agents\/iterator\/main\.ts$/,
  );
  if (jsr) return `jsr:${jsr[1]}@${jsr[2]}/iterator`;
  return url.startsWith("file:") ? fileURLToPath(url) : url;
}

/**
 * Start one run: `deno run -A <cli> ARGS` in `cwd`, in a session of its own,
 * with stdout and stderr written to files.
 *
 * @param args The run's arguments.
 * @param options The folder, the output files, the environment to add.
 * @returns The process.
 */
export function spawnRun(
  args: string[],
  options: { cwd: string; files: RunFiles; env?: Record<string, string> },
): RunProcess {
  const command = [Deno.execPath(), "run", "-A", cliEntry(), ...args];
  const { stdout, stderr } = options.files;
  // The shell only redirects, then becomes the run (exec keeps the pid).
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'out=$1; err=$2; shift 2; exec "$@" >"$out" 2>"$err"',
      "sh",
      stdout,
      stderr,
      ...command,
    ],
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  let ended = false;
  const status = child.status.then((status) => {
    ended = true;
    return { code: status.code, signal: status.signal };
  });
  return {
    pid: child.pid,
    status,
    kill: (signal) => {
      if (ended) return;
      try {
        child.kill(signal);
      } catch {
        // it ended in between
      }
    },
  };
}

/**
 * The `--json` result a run printed, if it got that far.
 *
 * @param path Its stdout file.
 * @returns The parsed object, or undefined.
 */
export async function readResult(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const text = await Deno.readTextFile(path);
    const line = text.trim().split("\n").reverse().find((line) => line.startsWith("{"));
    return line ? JSON.parse(line) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The run's own one-line error (`finishline: ...`), else its last line.
 *
 * @param path Its stderr file.
 * @returns The line without the prefix, or undefined when there is none.
 */
export async function lastError(path: string): Promise<string | undefined> {
  let lines: string[];
  try {
    lines = (await Deno.readTextFile(path)).split("\n").map((line) => line.trim())
      .filter((line) => line !== "");
  } catch {
    return undefined;
  }
  const own = lines.findLast((line) => line.startsWith("finishline: "));
  return own?.slice("finishline: ".length) ?? lines.at(-1);
}
