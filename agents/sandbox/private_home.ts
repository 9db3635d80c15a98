/**
 * A session's private home: empty but for what Claude Code and git need.
 * The user's Claude Code login and settings appear read-only (a logged-in
 * user keeps working), the account fields of the global config are copied,
 * and git gets the user's name and email, nothing else of the global config.
 *
 * @module
 */

import { spawnSync } from "node:child_process";
import { isAbsolute, join } from "node:path";
import { type SessionWorld, within } from "./session_world.ts";

/** Claude Code's files read-only in the private home, when the user has them. */
const CLAUDE_FILES = [".credentials.json", "settings.json"];

type Env = Record<string, string | undefined>;

/**
 * The login and config files of the ACP agents, read-only in the private
 * home when the user has them (a logged-in user keeps working): where each
 * is on the host (its variable, else under the home) and where inside.
 */
const AGENT_FILES: Record<
  string,
  Array<{ host: (env: Env, home: string) => string; inside: string }>
> = {
  codex: ["auth.json", "config.toml"].map((name) => ({
    host: (env, home) => join(env.CODEX_HOME ?? join(home, ".codex"), name),
    inside: join(".codex", name),
  })),
  gemini: ["oauth_creds.json", "google_accounts.json", "settings.json", ".env"].map((name) => ({
    host: (env, home) => join(env.GEMINI_CLI_HOME ?? home, ".gemini", name),
    inside: join(".gemini", name),
  })),
  opencode: [
    ...["opencode.json", "opencode.jsonc", "config.json"].map((name) => ({
      host: (env: Env, home: string) =>
        join(env.XDG_CONFIG_HOME ?? join(home, ".config"), "opencode", name),
      inside: join(".config", "opencode", name),
    })),
    {
      host: (env: Env, home: string) =>
        join(env.XDG_DATA_HOME ?? join(home, ".local", "share"), "opencode", "auth.json"),
      inside: join(".local", "share", "opencode", "auth.json"),
    },
  ],
};

/** The fields of Claude Code's global config (`.claude.json`) a session needs to be logged in. */
const ACCOUNT_FIELDS = [
  "oauthAccount",
  "primaryApiKey",
  "customApiKeyResponses",
  "hasCompletedOnboarding",
  "userID",
];

function isFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

/** The user's git name and email from the global config (one git call). */
function gitIdentity(env: Record<string, string | undefined>): Record<string, string> {
  const found = spawnSync("git", ["config", "--global", "--get-regexp", "^user\\.(name|email)$"], {
    encoding: "utf8",
    env: Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined)) as Record<
      string,
      string
    >,
  });
  const identity: Record<string, string> = {};
  if (found.status !== 0) return identity;
  for (const line of String(found.stdout).split("\n")) {
    const at = line.indexOf(" ");
    if (at > 0) identity[line.slice(0, at)] = line.slice(at + 1).trim();
  }
  return identity;
}

function gitQuoted(value: string): string {
  return `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, " ")}"`;
}

/**
 * Fill a fresh private home (once, when it is made) and add the user's
 * Claude Code files to the world as read-only mounts.
 *
 * @param world The session's world; its `homeReadOnly` is filled.
 * @param env The session's environment, as the user set it (its `HOME`,
 *   `CLAUDE_CONFIG_DIR`): where the user's files are read from.
 * @param agent The ACP preset it runs (`codex`, `gemini`, `opencode`), whose
 *   login and config files appear read-only too; none for Claude Code.
 */
export function seedPrivateHome(
  world: SessionWorld,
  env: Record<string, string | undefined>,
  agent?: string,
): void {
  const userHome = env.HOME ?? Deno.env.get("HOME") ?? "";
  for (const file of AGENT_FILES[agent ?? ""] ?? []) {
    const source = file.host(env, userHome);
    const target = join(world.homePath, file.inside);
    // A folder the world has already (the agent's own state, named in its env) is its own.
    if (!isFile(source) || world.writable.some((outer) => within(source, outer))) continue;
    const mountPoint = join(world.home, file.inside);
    Deno.mkdirSync(join(mountPoint, ".."), { recursive: true });
    Deno.writeTextFileSync(mountPoint, "");
    world.homeReadOnly.push([source, target]);
  }
  const configDir = env.CLAUDE_CONFIG_DIR ?? join(userHome, ".claude");
  const inside = join(world.home, ".claude");
  Deno.mkdirSync(inside, { recursive: true });
  for (const name of CLAUDE_FILES) {
    const source = join(configDir, name);
    if (!isFile(source)) continue;
    // The mount point, in the private home on the host.
    Deno.writeTextFileSync(join(inside, name), "");
    world.homeReadOnly.push([source, join(world.homePath, ".claude", name)]);
  }
  const global = [join(configDir, ".claude.json"), join(userHome, ".claude.json")].find(isFile);
  if (global && !isFile(join(inside, ".claude.json"))) {
    try {
      const config = JSON.parse(Deno.readTextFileSync(global)) as Record<string, unknown>;
      const kept = Object.fromEntries(
        ACCOUNT_FIELDS.filter((field) => field in config).map((field) => [field, config[field]]),
      );
      Deno.writeTextFileSync(join(inside, ".claude.json"), JSON.stringify(kept));
    } catch {
      // an unreadable config: Claude Code starts as on a new machine
    }
  }
  const gitconfig = join(world.home, ".gitconfig");
  if (!isFile(gitconfig)) {
    const identity = gitIdentity(env);
    const name = identity["user.name"];
    const email = identity["user.email"];
    const lines = ["[user]"];
    if (name) lines.push(`\tname = ${gitQuoted(name)}`);
    if (email) lines.push(`\temail = ${gitQuoted(email)}`);
    Deno.writeTextFileSync(gitconfig, lines.length > 1 ? `${lines.join("\n")}\n` : "");
  }
}

/**
 * The environment inside: the private home and /tmp in place of the user's,
 * and no variable that points git or Claude Code at the user's files. An
 * `XDG_*` folder stays only when the world has it writable (an ACP agent's
 * own config and data folders, named in its `env`): one of the user's would
 * name a folder that is not there, and the tool would fall back to the
 * private home anyway, but one the agent was given must be where it looks.
 *
 * @param env The session's environment.
 * @param world Its world.
 * @returns The environment the sandboxed process gets.
 */
export function sandboxEnv(
  env: Record<string, string | undefined>,
  world: SessionWorld,
): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (value === undefined) continue;
    if (/^GIT_CONFIG_(GLOBAL|SYSTEM|NOSYSTEM|COUNT|KEY_\d+|VALUE_\d+|PARAMETERS)$/.test(key)) {
      continue;
    }
    const ours = isAbsolute(value) && world.writable.some((outer) => within(value, outer));
    if (/^XDG_\w+$/.test(key) && !ours) continue;
    kept[key] = value;
  }
  return {
    ...kept,
    HOME: world.homePath,
    TMPDIR: "/tmp",
    CLAUDE_CONFIG_DIR: join(world.homePath, ".claude"),
    CLAUDE_CODE_TMPDIR: "/tmp",
  };
}
