/**
 * Runs the real Codex CLI (npm `@openai/codex`, pinned in tests/pinned/deno.json) offline against
 * a {@linkcode ScriptedResponsesServer}: a temporary `CODEX_HOME` whose
 * `config.toml` makes the scripted server the model provider, and a temporary git
 * repository to work in.
 *
 * @module
 */

import type { ScriptedResponsesServer } from "../../agents/testing/mod.ts";
import { cacheTool, pinnedVersion, toolCommand } from "../pinned/mod.ts";

/** The repository root, where the Codex tests start their processes. */
export const ROOT: string = new URL("../../", import.meta.url).pathname;

/** The command that runs the Codex CLI, before its arguments. */
export const CODEX: string[] = toolCommand("@openai/codex");

/** The version of codex-acp pinned in tests/pinned/deno.json. */
export const CODEX_ACP_VERSION: string = pinnedVersion("@zed-industries/codex-acp");

/**
 * The path of codex-acp's native binary, cached by Deno from the pinned npm package.
 *
 * Its npm wrapper (`bin/codex-acp.js`) runs the binary with `spawnSync` and inherited
 * stdio, which under `deno run` does not pass a piped stdin through (the ACP
 * `initialize` request is never answered), so the tests spawn the binary itself.
 * Deno's npm cache keeps the file without its execute bit; this sets it.
 */
export function codexAcpBinary(): Promise<string> {
  // Once per test process: every Codex test asks, and the answer does not change.
  codexAcp ??= findCodexAcpBinary();
  return codexAcp;
}

let codexAcp: Promise<string> | undefined;

async function findCodexAcpBinary(): Promise<string> {
  await cacheTool("@zed-industries/codex-acp");
  const info = await new Deno.Command("deno", { args: ["info", "--json"] }).output();
  const { npmCache } = JSON.parse(new TextDecoder().decode(info.stdout));
  const arch = Deno.build.arch === "aarch64" ? "arm64" : "x64";
  const os = Deno.build.os === "windows" ? "win32" : Deno.build.os;
  const exe = os === "win32" ? "codex-acp.exe" : "codex-acp";
  const path =
    `${npmCache}/registry.npmjs.org/@zed-industries/codex-acp-${os}-${arch}/${CODEX_ACP_VERSION}/bin/${exe}`;
  if (os !== "win32" && (((await Deno.stat(path)).mode ?? 0o755) & 0o100) === 0) {
    await Deno.chmod(path, 0o755);
  }
  return path;
}

/**
 * The `config.toml` that points Codex at a scripted server: a custom model
 * provider speaking the Responses API, its key read from `SCRIPTED_API_KEY`. The
 * model is a slug Codex knows (`gpt-5.4`), so that it finds the model's metadata;
 * with an unknown slug it warns, and codex-acp sends that warning as agent text.
 */
export function codexConfig(server: ScriptedResponsesServer): string {
  return [
    'model = "gpt-5.4"',
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
