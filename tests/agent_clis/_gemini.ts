/**
 * Runs the real Gemini CLI (npm `@google/gemini-cli`, pinned in tests/pinned/deno.json) in ACP
 * mode offline against a {@linkcode ScriptedGeminiServer}.
 *
 * Deno runs it (`deno run -A --config tests/pinned/deno.json npm:@google/gemini-cli@0.61.0`); node-pty's build
 * script does not run under Deno, so Gemini CLI runs shell commands with
 * `child_process`, as it does wherever node-pty is missing. Its settings live in a
 * temp folder named by `GEMINI_CLI_HOME`; HOME stays the parent's, because Gemini
 * CLI starts the complete_task MCP server (`deno run`) with the parent's
 * environment, and Deno finds its cache under HOME.
 *
 * @module
 */

import type { ScriptedGeminiServer } from "../../agents/testing/mod.ts";
import { ACP_PRESETS } from "../../agents/backends/presets.ts";
import { pinnedVersion, toolCommand } from "../pinned/mod.ts";

/** The Gemini CLI version the tests run. */
export const GEMINI_VERSION: string = pinnedVersion("@google/gemini-cli");

/** The command that starts Gemini CLI in ACP mode: the `gemini` preset's flag, run by Deno. */
export const GEMINI_ACP: string[] = [
  ...toolCommand("@google/gemini-cli"),
  ...ACP_PRESETS.gemini.command.slice(1),
];

/** A model Gemini CLI 0.61 knows; named so that it does not ask its model router. */
export const GEMINI_MODEL = "gemini-2.5-pro";

/**
 * The `settings.json` of the temp Gemini CLI home: no telemetry, usage statistics,
 * auto-update or IDE connection (nothing may reach Google), and one fixed model.
 * Folder trust stays on, as users have it; the `gemini` preset's environment
 * trusts the workspace.
 */
export function geminiSettings(model: string = GEMINI_MODEL): string {
  return JSON.stringify({
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ide: { enabled: false },
    model: { name: model },
  });
}

/**
 * Writes the settings into `home/.gemini/settings.json`.
 *
 * @param home The folder `GEMINI_CLI_HOME` will name.
 * @param model The model setting; `auto` lets Gemini CLI's router pick one per prompt.
 */
export async function writeGeminiHome(home: string, model?: string): Promise<void> {
  await Deno.mkdir(`${home}/.gemini`, { recursive: true });
  await Deno.writeTextFile(`${home}/.gemini/settings.json`, geminiSettings(model));
}

/**
 * The environment that points Gemini CLI at the scripted server: the `gemini`
 * preset's own (no relaunch, a trusted workspace), its home, and
 * `GOOGLE_GEMINI_BASE_URL`, which makes its auth type "gateway" (the key goes
 * out as `x-goog-api-key`).
 */
export function geminiEnv(server: ScriptedGeminiServer, home: string): Record<string, string> {
  return {
    ...ACP_PRESETS.gemini.env,
    GEMINI_CLI_HOME: home,
    GOOGLE_GEMINI_BASE_URL: server.url,
    GEMINI_API_KEY: "test-key",
  };
}
