/**
 * Installs and configures the real opencode CLI (npm `opencode-ai`) to run offline
 * against a {@linkcode ScriptedResponsesServer} over Chat Completions.
 *
 * Deno cannot install `opencode-ai` 1.18.33 (it lists an optional dependency,
 * `opencode-darwin-arm64`, that the registry does not have), so npm installs it
 * into a prefix under the system temporary directory, once per version.
 *
 * @module
 */

import type { ScriptedResponsesServer } from "../../agents/testing/mod.ts";

/** The opencode version the tests run. */
export const OPENCODE_VERSION = "1.18.33";

/**
 * Installs opencode with npm (once, into the user's cache folder, kept
 * between runs like Deno's own cache, never in the tests' temp folder) and
 * returns the path of its native binary.
 */
export async function opencodeBinary(): Promise<string> {
  const cache = Deno.env.get("XDG_CACHE_HOME") ?? `${Deno.env.get("HOME") ?? "/tmp"}/.cache`;
  const prefix = `${cache}/finishline-test-agents/opencode-${OPENCODE_VERSION}`;
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  const binary = `${prefix}/node_modules/opencode-${Deno.build.os}-${arch}/bin/opencode`;
  if (await exists(binary)) return binary;
  await Deno.mkdir(`${prefix}/tmp`, { recursive: true });
  const out = await new Deno.Command("npm", {
    args: [
      "install",
      "--prefix",
      prefix,
      "--no-audit",
      "--no-fund",
      `opencode-ai@${OPENCODE_VERSION}`,
    ],
    stdin: "null",
    // Its install script leaves an "opencode" folder in the temp directory: not the tests'.
    env: { TMPDIR: `${prefix}/tmp` },
  }).output();
  if (!out.success) {
    throw new Error(`npm install opencode-ai: ${new TextDecoder().decode(out.stderr)}`);
  }
  return binary;
}

/**
 * The `opencode.json` that makes the scripted server the only model: a provider
 * built on `@ai-sdk/openai-compatible` (Chat Completions), bash and edits allowed.
 */
export function opencodeConfig(server: ScriptedResponsesServer): string {
  return JSON.stringify({
    model: "scripted/m",
    autoupdate: false,
    share: "disabled",
    permission: { bash: "allow", edit: "allow" },
    provider: {
      scripted: {
        npm: "@ai-sdk/openai-compatible",
        name: "scripted",
        options: { baseURL: `${server.url}/v1`, apiKey: "sk-test" },
        models: { m: { name: "m" } },
      },
    },
  });
}

/** The environment of an opencode child whose config and data live under `home`. */
export function opencodeEnv(home: string): Record<string, string> {
  return {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: `${home}/.config`,
    XDG_DATA_HOME: `${home}/.local/share`,
    XDG_CACHE_HOME: `${home}/.cache`,
    XDG_STATE_HOME: `${home}/.local/state`,
    // opencode keeps a folder in the temp directory: keep it in the home, removed with it.
    TMPDIR: home,
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    GIT_AUTHOR_NAME: "opencode",
    GIT_AUTHOR_EMAIL: "opencode@finishline.local",
    GIT_COMMITTER_NAME: "opencode",
    GIT_COMMITTER_EMAIL: "opencode@finishline.local",
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}
