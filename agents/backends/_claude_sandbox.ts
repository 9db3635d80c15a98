/**
 * Claude Code in the sandbox: the SDK's `spawnClaudeCodeProcess` option,
 * which starts the binary through `bwrap` in the session's world. Private to
 * the backends folder.
 *
 * @module
 */

import { spawn } from "node:child_process";
import type { AgentSandbox } from "../sandbox/agent_sandbox.ts";
import { bubblewrapAvailability } from "../sandbox/bubblewrap.ts";
import { AgentSetupError, type ProcessSettings } from "./port.ts";
import type { SdkOptions } from "./_claude_process.ts";

type Spawner = NonNullable<SdkOptions["spawnClaudeCodeProcess"]>;

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
    const wrapped = sandbox.wrap(options.command, options.args, {
      cwd: options.cwd ?? settings.cwd,
      env: options.env,
    });
    if (!wrapped) throw new AgentSetupError("the sandbox could not be started");
    const child = spawn(wrapped.command, wrapped.args, {
      cwd: options.cwd,
      env: wrapped.env,
      stdio: ["pipe", "pipe", "pipe"],
      signal: options.signal,
    });
    // The SDK listens for the exit once per path that may end the process (close, abort, exit).
    child.setMaxListeners(64);
    // Read always: a full stderr pipe would stop the process.
    child.stderr.setEncoding("utf8");
    child.stderr.on("data", (text: string) => settings.stderr?.(text));
    child.on("error", () => {
      // reported by the SDK through the exit
    });
    return child;
  };
}
