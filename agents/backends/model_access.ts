/**
 * Can the agent use its model at all? Before the first session: the
 * credentials the chosen backend will use (a key in the environment, a
 * login file, a key helper), and whether the API host answers at the TCP and
 * TLS level. No model request is made and no token spent. During a run, the
 * same probe names the cause of a connection error the agent reports without
 * one.
 *
 * What is checked, by backend:
 * - `claude` and `claude-acp` (Claude Code): `ANTHROPIC_API_KEY`,
 *   `ANTHROPIC_AUTH_TOKEN`, `CLAUDE_CODE_OAUTH_TOKEN` (also from the `env` of
 *   Claude Code's settings files), an `apiKeyHelper` setting, a login file
 *   (`.credentials.json` in the config folder, `primaryApiKey` in
 *   `.claude.json`), on macOS the login in the keychain; the host of
 *   `ANTHROPIC_BASE_URL`, else api.anthropic.com. On Bedrock, Vertex or
 *   Foundry (`CLAUDE_CODE_USE_*`) the cloud credentials are not checked.
 * - `codex`: `OPENAI_API_KEY`, `CODEX_API_KEY` or `auth.json` in `CODEX_HOME`;
 *   the host of `OPENAI_BASE_URL`, else api.openai.com (chatgpt.com for a
 *   ChatGPT login). A custom `model_provider` in `config.toml` is not checked.
 * - `gemini`: `GEMINI_API_KEY`, `GOOGLE_API_KEY` (also from the `.env` file
 *   Gemini CLI reads) or `oauth_creds.json`; the host of
 *   `GOOGLE_GEMINI_BASE_URL`, else generativelanguage.googleapis.com (or
 *   cloudcode-pa.googleapis.com for a Google login). Vertex AI and Cloud
 *   Shell credentials are not checked.
 * - `opencode` and an explicit ACP command: nothing; their providers are
 *   configured in too many ways to check cheaply.
 *
 * @module
 */

import { homedir } from "node:os";
import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import { UsageError } from "../support/errors.ts";
import { type HostPort, reach, type ReachFailure } from "./_reach.ts";
import { type BackendSetting, resolveBackend } from "./presets.ts";

/** Where the agent's model API is. */
export interface ApiEndpoint extends HostPort {
  /** The variable that names it (`ANTHROPIC_BASE_URL`), given or not: the place to fix it. */
  variable: string;
  /** Whether the variable (or a settings file) set it; else it is the default host. */
  configured: boolean;
  /** The proxy the agent connects through (`HTTPS_PROXY`), when one applies. */
  proxy?: HostPort & { variable: string };
}

/** What the agent of a backend will use to reach its model. */
export interface ModelAccess {
  /** The backend, as messages name it. */
  backend: string;
  /** Where the credentials come from (`ANTHROPIC_API_KEY`, `~/.claude/.credentials.json`). */
  credentials?: string;
  /** Why the credentials are not checked (a cloud provider, a custom provider). */
  unchecked?: string;
  /** What was looked for, when nothing was found. */
  lookedFor: string[];
  /** What to do when nothing was found. */
  fix: string;
  /** The API host to probe; undefined when it cannot be known cheaply. */
  endpoint?: ApiEndpoint;
}

/** Options of {@linkcode modelAccess}. */
export interface ModelAccessOptions {
  /** The agent's environment. @default Deno.env.toObject() */
  env?: Record<string, string>;
  /** The folder the agent works in (project settings, `.env` files). @default Deno.cwd() */
  cwd?: string;
  /**
   * Claude Code's settings files the session reads besides the managed ones
   * (`behavior.settingSources`). @default ["user", "project", "local"]
   */
  settingSources?: readonly string[];
}

/**
 * What the backend's agent will use to reach its model: its credentials, or
 * what was looked for, and its API host.
 *
 * @param setting The backend (`behavior.backend`).
 * @param options The agent's environment, folder and settings sources.
 * @returns The access.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelAccess } from "./model_access.ts";
 *
 * const access = await modelAccess("claude", {
 *   env: { HOME: "/nonexistent", ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: "http://127.0.0.1:8080" },
 * });
 * assert.equal(access.credentials, "ANTHROPIC_API_KEY");
 * assert.equal(access.endpoint?.host, "127.0.0.1");
 * assert.equal(access.endpoint?.tls, false);
 * ```
 */
export async function modelAccess(
  setting: BackendSetting,
  options: ModelAccessOptions = {},
): Promise<ModelAccess> {
  const resolved = resolveBackend(setting);
  const name = resolved === "claude" ? "claude" : resolved.name;
  const env = {
    ...(options.env ?? Deno.env.toObject()),
    ...(resolved === "claude" ? {} : resolved.acp.env),
  };
  const where: Where = {
    env,
    home: env.HOME || homedir(),
    cwd: options.cwd ?? Deno.cwd(),
    settingSources: options.settingSources ?? ["user", "project", "local"],
  };
  switch (name) {
    case "claude":
      return await claudeAccess(name, where);
    case "claude-acp":
      // The adapter runs Claude Code with every settings source.
      return await claudeAccess(name, { ...where, settingSources: ["user", "project", "local"] });
    case "codex":
      return await codexAccess(where);
    case "gemini":
      return await geminiAccess(where);
    case "opencode":
      return unchecked(name, "opencode's providers are configured in too many ways to check");
    default:
      return unchecked(name, "an ACP command's agent and its provider are not known");
  }
}

/** Options of {@linkcode checkModelAccess}. */
export interface CheckModelAccessOptions extends ModelAccessOptions {
  /** How long each network stage (DNS, TCP, TLS) may take. @default 4000 */
  stageTimeoutMs?: number;
}

/**
 * Refuse a run whose agent cannot use its model: no credentials, or an API
 * host that does not resolve, refuses the connection or fails the TLS
 * handshake. Makes no model request.
 *
 * @param setting The backend.
 * @param options The agent's environment, folder, settings sources and timeouts.
 * @returns Resolves when the credentials are there (or cannot be checked) and the host answers.
 * @throws {UsageError} One line naming what is missing, or the host and the cause.
 */
export async function checkModelAccess(
  setting: BackendSetting,
  options: CheckModelAccessOptions = {},
): Promise<void> {
  const access = await modelAccess(setting, options);
  if (!access.credentials && !access.unchecked) {
    throw new UsageError(
      `No credentials for the ${access.backend} backend: looked for ${
        listWords(access.lookedFor)
      }; ${access.fix}`,
    );
  }
  if (!access.endpoint) return;
  const failure = await reachEndpoint(access.endpoint, options);
  if (failure) throw new UsageError(unreachable(access.endpoint, failure));
}

/**
 * Why the agent's API host cannot be reached, probed now, for a connection
 * error the agent reported without a cause.
 *
 * @param access The access, from {@linkcode modelAccess}.
 * @param options Timeouts and the agent's environment (certificates).
 * @returns `cannot reach HOST:PORT: CAUSE`, or undefined when it answers or cannot be probed.
 */
export async function connectionCause(
  access: ModelAccess,
  options: { env?: Record<string, string>; stageTimeoutMs?: number } = {},
): Promise<string | undefined> {
  if (!access.endpoint) return undefined;
  const failure = await reachEndpoint(access.endpoint, options);
  if (!failure) return undefined;
  const { target } = failure;
  return `cannot reach ${hostPort(target)}${
    access.endpoint.proxy ? ` (the proxy, ${access.endpoint.proxy.variable})` : ""
  }: ${failure.cause}`;
}

type Failure = ReachFailure & { target: HostPort };

/** Probe the proxy when one applies, else the host itself. */
async function reachEndpoint(
  endpoint: ApiEndpoint,
  options: { env?: Record<string, string>; stageTimeoutMs?: number },
): Promise<Failure | undefined> {
  const env = options.env ?? Deno.env.toObject();
  const target = endpoint.proxy ?? endpoint;
  const failure = await reach(target, {
    stageTimeoutMs: options.stageTimeoutMs,
    extraCa: env.NODE_EXTRA_CA_CERTS
      ? await Deno.readTextFile(env.NODE_EXTRA_CA_CERTS).catch(() => undefined)
      : undefined,
    insecure: env.NODE_TLS_REJECT_UNAUTHORIZED === "0",
  });
  return failure && { ...failure, target };
}

/** The one line for an API host that does not answer. */
function unreachable(endpoint: ApiEndpoint, failure: Failure): string {
  const { proxy } = endpoint;
  const where = proxy
    ? `the proxy ${hostPort(proxy)} (${proxy.variable}) for ${hostPort(endpoint)}`
    : `${hostPort(endpoint)}${endpoint.configured ? ` (${endpoint.variable})` : ""}`;
  const setting = proxy?.variable ?? endpoint.variable;
  const fix: Record<ReachFailure["stage"], string> = {
    dns: `check the network, or ${setting}`,
    connect: failure.code === "ECONNREFUSED"
      ? `check that it is running, or ${setting}`
      : `check the network, a firewall or ${setting}`,
    tls: `check ${setting}, or the certificates (NODE_EXTRA_CA_CERTS for a proxy's own authority)`,
  };
  return `Cannot reach the model API at ${where}: ${failure.cause}; ${fix[failure.stage]}`;
}

function hostPort(target: HostPort): string {
  return `${target.host.includes(":") ? `[${target.host}]` : target.host}:${target.port}`;
}

function listWords(words: string[]): string {
  return words.length <= 1
    ? words.join("")
    : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
}

/** Where the agent runs: its environment, home, folder and Claude Code's settings sources. */
interface Where {
  env: Record<string, string>;
  home: string;
  cwd: string;
  settingSources: readonly string[];
}

function unchecked(backend: string, why: string): ModelAccess {
  return { backend, unchecked: why, lookedFor: [], fix: "" };
}

/** A variable's value, when set to something. */
function value(env: Record<string, string | undefined>, name: string): string | undefined {
  const found = env[name]?.trim();
  return found ? found : undefined;
}

function truthy(text: string | undefined): boolean {
  return text !== undefined && /^(1|true|yes|on)$/i.test(text.trim());
}

/** `~/x` for a path in the home folder, as messages show it. */
function shown(path: string, home: string): string {
  return home && path.startsWith(`${home}/`) ? `~/${path.slice(home.length + 1)}` : path;
}

async function readJson(path: string): Promise<Record<string, unknown> | undefined> {
  try {
    const parsed = parseJsonc(await Deno.readTextFile(path));
    return parsed && typeof parsed === "object" && !Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

async function isFile(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && info.size > 0;
  } catch {
    return false;
  }
}

/** The endpoint of a base URL (the variable's or the default), through the proxy that applies. */
function endpointOf(
  url: string,
  facts: { variable: string; configured: boolean; env: Record<string, string> },
): ApiEndpoint | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const tls = parsed.protocol === "https:";
  if (!tls && parsed.protocol !== "http:") return undefined;
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  const endpoint: ApiEndpoint = {
    host,
    port: parsed.port ? Number(parsed.port) : tls ? 443 : 80,
    tls,
    variable: facts.variable,
    configured: facts.configured,
  };
  const proxy = proxyFor(host, tls, facts.env);
  return proxy ? { ...endpoint, proxy } : endpoint;
}

/** The proxy the agent uses for this host (`HTTPS_PROXY`, `HTTP_PROXY`, minus `NO_PROXY`). */
function proxyFor(
  host: string,
  tls: boolean,
  env: Record<string, string>,
): (HostPort & { variable: string }) | undefined {
  const names = tls
    ? ["HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"]
    : ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];
  const variable = names.find((name) => value(env, name));
  if (!variable) return undefined;
  const noProxy = (value(env, "NO_PROXY") ?? value(env, "no_proxy") ?? "").split(/[\s,]+/)
    .filter((entry) => entry !== "");
  const bypassed = noProxy.some((entry) => {
    if (entry === "*") return true;
    const bare = entry.replace(/:\d+$/, "").replace(/^\*?\./, "");
    return host === bare || host.endsWith(`.${bare}`);
  });
  if (bypassed) return undefined;
  try {
    const proxy = new URL(value(env, variable)!);
    const secure = proxy.protocol === "https:";
    if (!secure && proxy.protocol !== "http:") return undefined;
    return {
      host: proxy.hostname.replace(/^\[|\]$/g, ""),
      port: proxy.port ? Number(proxy.port) : secure ? 443 : 80,
      tls: secure,
      variable,
    };
  } catch {
    return undefined;
  }
}

// --- Claude Code --------------------------------------------------------------

const CLAUDE_KEYS = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN",
  "CLAUDE_CODE_OAUTH_TOKEN_FILE_DESCRIPTOR",
  // Workload identity federation.
  "ANTHROPIC_FEDERATION_RULE_ID",
];

const CLAUDE_CLOUDS: Array<[string, string, string]> = [
  ["CLAUDE_CODE_USE_BEDROCK", "Amazon Bedrock", "ANTHROPIC_BEDROCK_BASE_URL"],
  ["CLAUDE_CODE_USE_VERTEX", "Google Vertex AI", "ANTHROPIC_VERTEX_BASE_URL"],
  ["CLAUDE_CODE_USE_FOUNDRY", "Microsoft Foundry", "ANTHROPIC_FOUNDRY_BASE_URL"],
];

/** Claude Code's managed settings, read whatever the settings sources. */
const MANAGED_SETTINGS: Record<string, string> = {
  darwin: "/Library/Application Support/ClaudeCode/managed-settings.json",
  linux: "/etc/claude-code/managed-settings.json",
  windows: "C:\\Program Files\\ClaudeCode\\managed-settings.json",
};

async function claudeAccess(backend: string, where: Where): Promise<ModelAccess> {
  const { home } = where;
  const configDir = value(where.env, "CLAUDE_CONFIG_DIR") ?? join(home, ".claude");
  const settings = await claudeSettings(configDir, where);
  // Claude Code applies its settings' `env` over its own environment.
  const env = { ...where.env, ...settings.env };
  const cloud = CLAUDE_CLOUDS.find(([flag]) => truthy(env[flag]));
  if (cloud) {
    const [flag, provider, baseUrl] = cloud;
    const url = value(env, baseUrl);
    return {
      backend,
      unchecked: `Claude Code on ${provider} (${flag}) uses the cloud's credentials`,
      lookedFor: [],
      fix: "",
      endpoint: url ? endpointOf(url, { variable: baseUrl, configured: true, env }) : undefined,
    };
  }
  const credentialsFiles = [
    value(env, "CLAUDE_SECURESTORAGE_CONFIG_DIR"),
    configDir,
    join(home, ".claude"),
  ].filter((dir): dir is string => dir !== undefined).map((dir) => join(dir, ".credentials.json"));
  const globalConfigs = [join(configDir, ".claude.json"), join(home, ".claude.json")];
  const credentials = CLAUDE_KEYS.find((name) => value(env, name)) ??
    (settings.apiKeyHelper
      ? `the "apiKeyHelper" setting in ${shown(settings.apiKeyHelper, home)}`
      : undefined) ??
    await firstFile(credentialsFiles, home) ??
    await primaryApiKey(globalConfigs, home) ??
    await keychainLogin(env, configDir);
  const baseUrl = value(env, "ANTHROPIC_BASE_URL");
  return {
    backend,
    credentials,
    lookedFor: [
      "ANTHROPIC_API_KEY",
      "ANTHROPIC_AUTH_TOKEN",
      "CLAUDE_CODE_OAUTH_TOKEN",
      `a Claude Code login (${shown(credentialsFiles[1], home)})`,
      `an "apiKeyHelper" setting`,
    ],
    fix:
      "run `claude login` (Claude Code's own login), or set ANTHROPIC_API_KEY to a key from console.anthropic.com",
    // A Unix socket (ANTHROPIC_UNIX_SOCKET) has no host to probe.
    endpoint: value(env, "ANTHROPIC_UNIX_SOCKET") ? undefined : endpointOf(
      baseUrl ?? "https://api.anthropic.com",
      { variable: "ANTHROPIC_BASE_URL", configured: baseUrl !== undefined, env },
    ),
  };
}

/** The settings files Claude Code reads: their `env` (later files win) and the file with an `apiKeyHelper`. */
async function claudeSettings(
  configDir: string,
  where: Where,
): Promise<{ env: Record<string, string>; apiKeyHelper?: string }> {
  const files: string[] = [];
  if (where.settingSources.includes("user")) files.push(join(configDir, "settings.json"));
  if (where.settingSources.includes("project")) {
    files.push(join(where.cwd, ".claude", "settings.json"));
  }
  if (where.settingSources.includes("local")) {
    files.push(join(where.cwd, ".claude", "settings.local.json"));
  }
  const managed = MANAGED_SETTINGS[Deno.build.os];
  if (managed) files.push(managed);
  const env: Record<string, string> = {};
  let apiKeyHelper: string | undefined;
  for (const file of files) {
    const settings = await readJson(file);
    if (!settings) continue;
    if (typeof settings.apiKeyHelper === "string" && settings.apiKeyHelper.trim()) {
      apiKeyHelper = file;
    }
    const fileEnv = settings.env;
    if (fileEnv && typeof fileEnv === "object") {
      for (const [name, setting] of Object.entries(fileEnv)) {
        if (typeof setting === "string") env[name] = setting;
      }
    }
  }
  return { env, apiKeyHelper };
}

async function firstFile(paths: string[], home: string): Promise<string | undefined> {
  for (const path of paths) {
    if (await isFile(path)) return shown(path, home);
  }
  return undefined;
}

/** A key saved by Claude Code's own sign-in with a Console account. */
async function primaryApiKey(paths: string[], home: string): Promise<string | undefined> {
  for (const path of paths) {
    const config = await readJson(path);
    if (typeof config?.primaryApiKey === "string" && config.primaryApiKey) {
      return `"primaryApiKey" in ${shown(path, home)}`;
    }
  }
  return undefined;
}

/**
 * On macOS, Claude Code keeps its login in the keychain. Only whether the
 * item exists is asked (no secret is read, so no prompt); an answer other
 * than "found" or "not found" counts as found, since a login cannot be ruled out.
 */
async function keychainLogin(
  env: Record<string, string>,
  configDir: string,
): Promise<string | undefined> {
  if (Deno.build.os !== "darwin") return undefined;
  // With CLAUDE_CONFIG_DIR set, the item's name carries a digest of the folder.
  const custom = value(env, "CLAUDE_CONFIG_DIR")
    ? `-${(await sha256(configDir.normalize("NFC"))).slice(0, 8)}`
    : "";
  const service = `Claude Code-credentials${custom}`;
  try {
    const output = await new Deno.Command("security", {
      args: ["find-generic-password", "-s", service],
      stdout: "null",
      stderr: "null",
      signal: AbortSignal.timeout(3000),
    }).output();
    // 44: the item could not be found.
    return output.code === 44 ? undefined : `the macOS keychain ("${service}")`;
  } catch {
    return `the macOS keychain ("${service}")`;
  }
}

async function sha256(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

// --- Codex --------------------------------------------------------------------

async function codexAccess(where: Where): Promise<ModelAccess> {
  const { env, home } = where;
  const codexHome = value(env, "CODEX_HOME") ?? join(home, ".codex");
  const config = await Deno.readTextFile(join(codexHome, "config.toml")).catch(() => "");
  // Only top-level keys, before the first table.
  const topLevel = config.split(/^\s*\[/m)[0];
  const provider = /^\s*model_provider\s*=\s*["']([^"']+)["']/m.exec(topLevel)?.[1];
  if (provider && provider !== "openai") {
    return unchecked(
      "codex",
      `the model provider "${provider}" of ${shown(join(codexHome, "config.toml"), home)}`,
    );
  }
  const authFile = join(codexHome, "auth.json");
  const auth = await readJson(authFile);
  const key = ["OPENAI_API_KEY", "CODEX_API_KEY"].find((name) => value(env, name)) ??
    (typeof auth?.OPENAI_API_KEY === "string" && auth.OPENAI_API_KEY
      ? `"OPENAI_API_KEY" in ${shown(authFile, home)}`
      : undefined);
  const login = auth?.tokens && typeof auth.tokens === "object"
    ? `a ChatGPT login (${shown(authFile, home)})`
    : undefined;
  const baseUrl = value(env, "OPENAI_BASE_URL");
  const defaultUrl = !key && login ? "https://chatgpt.com" : "https://api.openai.com";
  return {
    backend: "codex",
    credentials: key ?? login,
    lookedFor: ["OPENAI_API_KEY", "CODEX_API_KEY", `a Codex login (${shown(authFile, home)})`],
    fix: "set OPENAI_API_KEY to a key from platform.openai.com",
    endpoint: endpointOf(baseUrl ?? defaultUrl, {
      variable: "OPENAI_BASE_URL",
      configured: baseUrl !== undefined,
      env,
    }),
  };
}

// --- Gemini CLI ---------------------------------------------------------------

async function geminiAccess(where: Where): Promise<ModelAccess> {
  const { home } = where;
  const geminiHome = value(where.env, "GEMINI_CLI_HOME") ?? home;
  const dir = join(geminiHome, ".gemini");
  // Gemini CLI reads the first .env file up from its folder, then the home's; the environment wins.
  const env = { ...await geminiDotEnv(where.cwd, geminiHome), ...where.env };
  const settings = await readJson(join(dir, "settings.json"));
  const security = settings?.security as { auth?: { selectedType?: unknown } } | undefined;
  const selected = security?.auth?.selectedType ?? settings?.selectedAuthType;
  if (
    truthy(env.GOOGLE_GENAI_USE_VERTEXAI) || truthy(env.CLOUD_SHELL) ||
    ["vertex-ai", "cloud-shell", "compute-default-credentials"].includes(String(selected))
  ) {
    return unchecked(
      "gemini",
      "Gemini CLI on Vertex AI or Google Cloud uses the cloud's credentials",
    );
  }
  const key = ["GEMINI_API_KEY", "GOOGLE_API_KEY"].find((name) => value(env, name));
  const oauthFile = join(dir, "oauth_creds.json");
  const login = await isFile(oauthFile) ? `a Google login (${shown(oauthFile, home)})` : undefined;
  const baseUrl = value(env, "GOOGLE_GEMINI_BASE_URL");
  const defaultUrl = !key && login
    ? "https://cloudcode-pa.googleapis.com"
    : "https://generativelanguage.googleapis.com";
  return {
    backend: "gemini",
    credentials: key ?? login,
    lookedFor: ["GEMINI_API_KEY", "GOOGLE_API_KEY", `a Google login (${shown(oauthFile, home)})`],
    fix: "set GEMINI_API_KEY to a key from aistudio.google.com",
    endpoint: endpointOf(baseUrl ?? defaultUrl, {
      variable: "GOOGLE_GEMINI_BASE_URL",
      configured: baseUrl !== undefined,
      env,
    }),
  };
}

/** The variables of the `.env` file Gemini CLI would load. */
async function geminiDotEnv(cwd: string, home: string): Promise<Record<string, string>> {
  const candidates: string[] = [];
  for (let dir = cwd;; dir = join(dir, "..")) {
    candidates.push(join(dir, ".gemini", ".env"), join(dir, ".env"));
    if (join(dir, "..") === dir) break;
  }
  candidates.push(join(home, ".gemini", ".env"), join(home, ".env"));
  for (const file of candidates) {
    const text = await Deno.readTextFile(file).catch(() => undefined);
    if (text === undefined) continue;
    const vars: Record<string, string> = {};
    for (const line of text.split("\n")) {
      const match = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*?)\s*$/.exec(line);
      if (match) vars[match[1]] = match[2].replace(/^(["'])(.*)\1$/, "$2");
    }
    return vars;
  }
  return {};
}
