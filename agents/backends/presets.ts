/**
 * Which backend runs an agent: `claude` (the Claude Agent SDK), a named ACP
 * preset (`codex`, `gemini`, `opencode`, `claude-acp`), or an explicit ACP
 * command from agent.json.
 *
 * @module
 */

import type { AcpCommand } from "./acp.ts";

/** `behavior.backend` in agent.json: a name, or an explicit ACP command. */
export type BackendSetting = string | { acp: AcpCommand };

/** The ACP commands of the named presets. */
export const ACP_PRESETS: Readonly<Record<string, AcpCommand>> = {
  codex: { command: ["npx", "-y", "@zed-industries/codex-acp"], mode: "full-access" },
  gemini: {
    command: ["gemini", "--acp"],
    env: {
      // Else Gemini CLI 0.61 reruns itself in a child process, and the parent ignores SIGTERM.
      GEMINI_CLI_NO_RELAUNCH: "true",
      // Else, in a folder not trusted before, it starts no stdio MCP server: no complete_task.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    },
  },
  opencode: { command: ["opencode", "acp"] },
  "claude-acp": { command: ["npx", "-y", "@zed-industries/claude-agent-acp"] },
};

/** Every backend name: `claude` and the presets. */
export const BACKEND_NAMES: readonly string[] = ["claude", ...Object.keys(ACP_PRESETS)];

/**
 * Resolve a backend setting.
 *
 * @param setting The setting.
 * @returns `claude` for the SDK backend, or the ACP command with its name.
 * @throws {Error} For an unknown name.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { resolveBackend } from "./presets.ts";
 *
 * assert.equal(resolveBackend("claude"), "claude");
 * const codex = resolveBackend("codex");
 * assert.notEqual(codex, "claude");
 * ```
 */
export function resolveBackend(
  setting: BackendSetting,
): "claude" | { name: string; acp: AcpCommand } {
  if (typeof setting !== "string") return { name: "acp", acp: setting.acp };
  if (setting === "claude") return "claude";
  const preset = ACP_PRESETS[setting];
  if (!preset) {
    throw new Error(`unknown backend "${setting}": expected one of ${BACKEND_NAMES.join(", ")}`);
  }
  return { name: setting, acp: preset };
}
