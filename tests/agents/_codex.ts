/**
 * Runs the real Codex CLI (npm `@openai/codex`, pinned in deno.json) offline against
 * a {@linkcode ScriptedResponsesServer}: a temporary `CODEX_HOME` whose
 * `config.toml` makes the scripted server the model provider, and a temporary git
 * repository to work in.
 *
 * @module
 */

import type { ScriptedResponsesServer } from "../../agents/testing/mod.ts";

/** The repository root; `deno run` there resolves the pinned npm packages. */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** The command that runs the Codex CLI, before its arguments. */
export const CODEX = ["deno", "run", "-A", "npm:@openai/codex@0.169.0"];

/** The command that runs codex-acp, the ACP adapter of Codex. */
export const CODEX_ACP = ["deno", "run", "-A", "npm:@zed-industries/codex-acp@0.16.0"];

/**
 * The `config.toml` that points Codex at a scripted server: a custom model
 * provider speaking the Responses API, its key read from `SCRIPTED_API_KEY`.
 */
export function codexConfig(server: ScriptedResponsesServer): string {
  return [
    'model = "scripted"',
    'model_provider = "scripted"',
    "check_for_update_on_startup = false",
    "",
    "[model_providers.scripted]",
    'name = "scripted"',
    `base_url = "${server.url}/v1"`,
    'wire_api = "responses"',
    'env_key = "SCRIPTED_API_KEY"',
    "",
    "[analytics]",
    "enabled = false",
    "",
  ].join("\n");
}

/** A temporary CODEX_HOME and git repository, removed on dispose. */
export interface CodexPlace extends AsyncDisposable {
  /** The CODEX_HOME (also HOME). */
  home: string;
  /** The git repository Codex works in. */
  repo: string;
  /** The environment of the Codex child. */
  env: Record<string, string>;
}

/** Makes a CODEX_HOME configured for `server` and an empty git repository. */
export async function codexPlace(server: ScriptedResponsesServer): Promise<CodexPlace> {
  const home = await Deno.makeTempDir({ prefix: "codex-home-" });
  const repo = await Deno.makeTempDir({ prefix: "codex-repo-" });
  await Deno.writeTextFile(`${home}/config.toml`, codexConfig(server));
  await git(repo, "init", "-q");
  const env: Record<string, string> = {
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    HOME: home,
    CODEX_HOME: home,
    SCRIPTED_API_KEY: "sk-test",
    GIT_AUTHOR_NAME: "codex",
    GIT_AUTHOR_EMAIL: "codex@finishline.local",
    GIT_COMMITTER_NAME: "codex",
    GIT_COMMITTER_EMAIL: "codex@finishline.local",
  };
  const denoDir = Deno.env.get("DENO_DIR");
  if (denoDir) env.DENO_DIR = denoDir;
  env.DENO_DIR ??= `${Deno.env.get("HOME")}/.cache/deno`;
  return {
    home,
    repo,
    env,
    async [Symbol.asyncDispose]() {
      await Deno.remove(home, { recursive: true });
      await Deno.remove(repo, { recursive: true });
    },
  };
}

/** Runs git in `cwd` and returns its trimmed stdout; throws when it fails. */
export async function git(cwd: string, ...args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args, cwd, stdin: "null" }).output();
  const text = new TextDecoder();
  if (!out.success) throw new Error(`git ${args.join(" ")}: ${text.decode(out.stderr)}`);
  return text.decode(out.stdout).trim();
}
