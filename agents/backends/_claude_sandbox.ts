/**
 * Claude Code in the sandbox: the SDK's `spawnClaudeCodeProcess` option,
 * which starts the binary through `bwrap` in the session's world. Private to
 * the backends folder.
 *
 * @module
 */

import { type ChildProcess, spawn } from "node:child_process";
import process from "node:process";
import type { AgentSandbox } from "../sandbox/agent_sandbox.ts";
import { bubblewrapAvailability } from "../sandbox/bubblewrap.ts";
import { modelHosts, networkAccess } from "../sandbox/network.ts";
import { AgentSetupError, type ProcessSettings } from "./port.ts";
import type { SdkOptions } from "./_claude_process.ts";

type Spawner = NonNullable<SdkOptions["spawnClaudeCodeProcess"]>;

/** How long an aborted Claude Code gets to exit on SIGTERM before the sandbox is killed. */
const ABORT_GRACE_MS = 3_000;

/**
 * Signal the processes bwrap started, not bwrap: a bwrap that gets SIGTERM
 * dies at once and takes the sandbox down with SIGKILL, so Claude Code
 * would never save its transcript (a later session resumes from it). The
 * processes of the group other than bwrap's get the signal; SIGKILL, or a
 * group already gone, goes to bwrap too.
 */
function signalInside(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): boolean {
  const group = child.pid;
  if (group === undefined || child.exitCode !== null) return false;
  if (signal !== "SIGKILL") {
    let sent = false;
    for (const entry of Deno.readDirSync("/proc")) {
      if (!/^\d+$/.test(entry.name)) continue;
      try {
        const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
        const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
        // fields: state, ppid, pgrp, ...
        if (Number(fields[2]) !== group || stat.includes("(bwrap)")) continue;
        process.kill(Number(entry.name), signal);
        sent = true;
      } catch {
        // gone meanwhile
      }
    }
    if (sent) return true;
  }
  try {
    process.kill(-group, signal);
    return true;
  } catch {
    return child.kill(signal);
  }
}

/**
 * The spawner of a process with these settings, or undefined when it runs
 * unsandboxed (`verify.sandbox` is `off`, or `auto` where no sandbox can be
 * had). With `required` and no sandbox, it throws.
 *
 * @param sandbox The backend's sandbox (its private homes).
 * @param settings The process's settings.
 * @returns The SDK's spawn option.
 */
export function sandboxSpawner(
  sandbox: AgentSandbox,
  settings: ProcessSettings,
): Spawner | undefined {
  const mode = settings.sandbox ?? "auto";
  if (mode === "off") return undefined;
  const found = bubblewrapAvailability();
  if (!found.available) {
    if (mode === "required") {
      throw new AgentSetupError(`verify.sandbox is "required" and ${found.reason}`);
    }
    return undefined;
  }
  return (options) => {
    // The session's folder: a parked process is spawned in finishline's own, and told the
    // session's at its claim, which must then be in its world.
    const wrapped = sandbox.wrap(options.command, options.args, {
      cwd: settings.cwd,
      env: options.env,
      network: networkAccess(settings.network, modelHosts("claude", options.env, settings.cwd)),
    });
    if (!wrapped) throw new AgentSetupError("the sandbox could not be started");
    const child = spawn(wrapped.command, wrapped.args, {
      cwd: options.cwd,
      env: wrapped.env,
      stdio: ["pipe", "pipe", "pipe"],
      // Its own process group, so that a signal reaches Claude Code itself (below).
      detached: true,
    });
    // Aborted: Claude Code gets SIGTERM, and the whole sandbox SIGKILL if it is still there.
    const abort = () => {
      signalInside(child, "SIGTERM");
      const timer = setTimeout(() => signalInside(child, "SIGKILL"), ABORT_GRACE_MS);
      Deno.unrefTimer(timer);
      child.once("exit", () => clearTimeout(timer));
    };
    if (options.signal.aborted) abort();
    else options.signal.addEventListener("abort", abort, { once: true });
    child.once("exit", () => options.signal.removeEventListener("abort", abort));
    // The SDK listens for the exit once per path that may end the process (close, abort, exit).
    child.setMaxListeners(64);
    // Read always: a full stderr pipe would stop the process.
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => settings.stderr?.(text));
    child.on("error", () => {
      // reported by the SDK through the exit
    });
    sandbox.track(
      new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) resolve(undefined);
        else child.once("close", resolve);
        child.once("error", resolve);
      }),
    );
    return {
      stdin: child.stdin,
      stdout: child.stdout,
      get killed() {
        return child.killed;
      },
      get exitCode() {
        return child.exitCode;
      },
      get signalCode() {
        return child.signalCode;
      },
      kill: (signal) => signalInside(child, signal),
      on: child.on.bind(child),
      once: child.once.bind(child),
      off: child.off.bind(child),
    } as ReturnType<Spawner>;
  };
}
