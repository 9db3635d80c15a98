/**
 * The settings of a Claude Code worker process for the backend tests: no
 * tools, no setting sources, complete_task and the Stop hook on.
 *
 * @module
 */

import type { ProcessSettings } from "../../agents/backends/port.ts";

/**
 * A worker process's settings in `cwd`, unsandboxed.
 *
 * @param cwd The session's folder.
 * @param env The scripted server's environment.
 * @param model A model other than Claude Code's default.
 * @returns The settings.
 */
export function workerSettings(
  cwd: string,
  env: Record<string, string>,
  model?: string,
): ProcessSettings {
  return {
    systemPromptAppend: "",
    cwd,
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "default",
    model,
    settingSources: [],
    env,
    completeTask: true,
    stopHook: true,
    // These tests count process starts through a wrapper that logs to its own folder, which a
    // sandboxed process cannot write (tests/sandbox/ covers warm and kept processes in the sandbox).
    sandbox: "off",
  };
}
