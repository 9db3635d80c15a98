/**
 * The network of a sandboxed agent session. With `verify.network` other
 * than `open`, the session gets a network namespace of its own: nothing but
 * its own loopback. What it may reach is an allowlist, served from outside
 * by finishline through Unix sockets that `socat` bridges to loopback ports
 * inside:
 *
 * - each loopback endpoint it needs (a model API on this machine, the
 *   complete_task callback of an ACP agent) appears at the same port inside;
 * - every other allowed host is reached through an HTTP proxy at
 *   127.0.0.1 inside (`HTTPS_PROXY`, `HTTP_PROXY`), which tunnels only to the
 *   hosts of the allowlist and answers 403 for the rest. Names are resolved
 *   outside: there is no DNS inside.
 *
 * The allowlist is the model API's host of the backend (from its base-URL
 * variable, else its public default, and the hosts its login refreshes at)
 * and `verify.network.allow`.
 *
 * @module
 */

import { join } from "node:path";
import { parse as parseJsonc } from "jsonc-parser";
import type { NetworkSetting } from "../definition/definition_types.ts";

/** A host (or `*.domain`) and a port, or any port. */
export interface HostRule {
  host: string;
  port?: number;
}

/** What a sandboxed session may reach: everything, or the rules' hosts. */
export type NetworkAccess = { open: true } | { open: false; allow: HostRule[] };

/** Where sessions reach the proxy inside, unless a forwarded port takes it. */
const PROXY_PORT = 3128;

/** Inside the sandbox, where the bridges' sockets are. */
export const NET_FOLDER_INSIDE = "/run/finishline-net";

/** The longest request head the proxy reads. */
const MAX_HEAD = 64 * 1024;

/** Hosts a backend's login refreshes its token at, besides its model API. */
const LOGIN_HOSTS: Record<string, string[]> = {
  claude: ["console.anthropic.com", "platform.claude.com", "claude.ai"],
  codex: ["auth.openai.com", "chatgpt.com"],
  gemini: ["oauth2.googleapis.com", "cloudcode-pa.googleapis.com"],
};

/** Each backend's model API: the variable that moves it, and its public default. */
const MODEL_APIS: Record<string, Array<[string, string]>> = {
  claude: [
    ["ANTHROPIC_BASE_URL", "https://api.anthropic.com"],
    ["ANTHROPIC_BEDROCK_BASE_URL", ""],
    ["ANTHROPIC_VERTEX_BASE_URL", ""],
    ["ANTHROPIC_FOUNDRY_BASE_URL", ""],
  ],
  codex: [["OPENAI_BASE_URL", "https://api.openai.com"]],
  gemini: [["GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"]],
};

/**
 * A host rule from its text: `host`, `host:port`, `*.domain`, `[::1]:port`.
 *
 * @param text The rule as `verify.network.allow` gives it.
 * @returns The rule, or undefined when it is not a host.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { hostRule } from "./network.ts";
 *
 * assert.deepEqual(hostRule("registry.npmjs.org"), { host: "registry.npmjs.org" });
 * assert.deepEqual(hostRule("127.0.0.1:8080"), { host: "127.0.0.1", port: 8080 });
 * assert.equal(hostRule("https://x.test/path"), undefined);
 * ```
 */
export function hostRule(text: string): HostRule | undefined {
  const match = /^(\*\.[a-z0-9.-]+|[a-z0-9.-]+|\[[0-9a-f:]+\])(?::(\d{1,5}))?$/i.exec(text.trim());
  if (!match) return undefined;
  const port = match[2] === undefined ? undefined : Number(match[2]);
  if (port !== undefined && (port < 1 || port > 65535)) return undefined;
  const host = match[1].toLowerCase().replace(/^\[(.*)\]$/, "$1");
  return port === undefined ? { host } : { host, port };
}

/** A URL's host and port as a rule. */
function urlRule(url: string): HostRule | undefined {
  try {
    const parsed = new URL(url);
    if (!/^(https?|wss?):$/.test(parsed.protocol)) return undefined;
    const port = parsed.port
      ? Number(parsed.port)
      : /^(https|wss):$/.test(parsed.protocol)
      ? 443
      : 80;
    return { host: parsed.hostname.toLowerCase().replace(/^\[(.*)\]$/, "$1"), port };
  } catch {
    return undefined;
  }
}

/** Whether a host is this machine's loopback. */
export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** Whether `host:port` matches a rule. */
export function allowedBy(rules: readonly HostRule[], host: string, port: number): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, "$1").replace(/\.$/, "");
  return rules.some((rule) => {
    if (rule.port !== undefined && rule.port !== port) return false;
    if (rule.host.startsWith("*.")) return name.endsWith(rule.host.slice(1));
    return rule.host === name;
  });
}

/** JSON (with comments) from a file, or undefined. */
function readConfig(file: string): Record<string, unknown> | undefined {
  try {
    const parsed = parseJsonc(Deno.readTextFileSync(file));
    return parsed && typeof parsed === "object" ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** The `env` of Claude Code's settings files (a base URL may be set there), later files winning. */
function claudeSettingsEnv(
  env: Record<string, string | undefined>,
  cwd: string,
): Record<string, string> {
  const config = env.CLAUDE_CONFIG_DIR ?? join(env.HOME ?? "", ".claude");
  const files = [
    join(config, "settings.json"),
    join(cwd, ".claude", "settings.json"),
    join(cwd, ".claude", "settings.local.json"),
    "/etc/claude-code/managed-settings.json",
  ];
  const found: Record<string, string> = {};
  for (const file of files) {
    const fileEnv = readConfig(file)?.env;
    if (!fileEnv || typeof fileEnv !== "object") continue;
    for (const [name, value] of Object.entries(fileEnv)) {
      if (typeof value === "string") found[name] = value;
    }
  }
  return found;
}

/** The base URLs of opencode's providers, from the config files it reads. */
function opencodeUrls(env: Record<string, string | undefined>, cwd: string): string[] {
  const home = env.HOME ?? "";
  const config = env.XDG_CONFIG_HOME ?? join(home, ".config");
  const files = [
    env.OPENCODE_CONFIG,
    ...["opencode.json", "opencode.jsonc"].map((name) => join(config, "opencode", name)),
    ...["opencode.json", "opencode.jsonc"].map((name) => join(cwd, name)),
  ].filter((file): file is string => Boolean(file));
  const configs = files.map(readConfig);
  if (env.OPENCODE_CONFIG_CONTENT) configs.push(parseJsonc(env.OPENCODE_CONFIG_CONTENT));
  const urls: string[] = [];
  for (const parsed of configs) {
    const providers = parsed?.provider;
    if (!providers || typeof providers !== "object") continue;
    for (const provider of Object.values(providers as Record<string, unknown>)) {
      const url = (provider as { options?: { baseURL?: unknown } })?.options?.baseURL;
      if (typeof url === "string") urls.push(url);
    }
  }
  return urls;
}

/**
 * The hosts a backend's agent needs for its model: the host of its base-URL
 * variable (else its public default) and those its login refreshes at; for
 * opencode, its providers' `baseURL`s. Empty when they cannot be known (an
 * explicit ACP command, opencode on its default providers).
 *
 * @param backend The backend's name (`claude`, `codex`, `gemini`, `opencode`, `claude-acp`, `acp`).
 * @param env The agent's environment.
 * @param cwd Its folder (opencode's project config).
 * @returns The rules.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { modelHosts } from "./network.ts";
 *
 * const rules = modelHosts("claude", { ANTHROPIC_BASE_URL: "http://127.0.0.1:8080" }, "/");
 * assert.deepEqual(rules[0], { host: "127.0.0.1", port: 8080 });
 * ```
 */
export function modelHosts(
  backend: string,
  env: Record<string, string | undefined>,
  cwd: string,
): HostRule[] {
  const family = backend === "claude-acp" ? "claude" : backend;
  // Claude Code applies its settings' `env` over its own environment.
  const vars = family === "claude" ? { ...env, ...claudeSettingsEnv(env, cwd) } : env;
  const rules: HostRule[] = [];
  for (const [variable, fallback] of MODEL_APIS[family] ?? []) {
    const rule = urlRule(vars[variable] || fallback);
    if (rule) rules.push(rule);
  }
  if (family === "opencode") {
    for (const url of opencodeUrls(env, cwd)) {
      const rule = urlRule(url);
      if (rule) rules.push(rule);
    }
  }
  if (rules.length === 0) return [];
  for (const host of LOGIN_HOSTS[family] ?? []) rules.push({ host, port: 443 });
  return rules;
}

/**
 * What sessions of a backend may reach under a `verify.network` setting.
 *
 * @param setting `verify.network`.
 * @param model The model's hosts ({@linkcode modelHosts}).
 * @returns Open, or the allowlist; open when nothing at all would be allowed
 *   (the model's host unknown and no `allow`): the run says so at its start.
 */
export function networkAccess(
  setting: NetworkSetting | undefined,
  model: HostRule[],
): NetworkAccess {
  if (setting === "open") return { open: true };
  const extra = typeof setting === "object"
    ? setting.allow.map(hostRule).filter((rule): rule is HostRule => rule !== undefined)
    : [];
  const allow = [...model, ...extra];
  if (allow.length === 0) return { open: true };
  return { open: false, allow };
}

let socat: string | undefined | null = null;

/**
 * Where `socat` is (the bridges' program), or undefined when it is not on PATH.
 *
 * @returns Its absolute path.
 */
export function socatPath(): string | undefined {
  if (socat !== null) return socat;
  for (const dir of (Deno.env.get("PATH") ?? "/usr/bin:/bin").split(":")) {
    if (!dir.startsWith("/")) continue;
    try {
      const path = join(dir, "socat");
      if (Deno.statSync(path).isFile) return socat = path;
    } catch {
      // not here
    }
  }
  return socat = undefined;
}

/** The loopback ports a session's world forwards to this machine's. */
function loopbackPorts(allow: readonly HostRule[], forward: readonly number[]): number[] {
  const ports = new Set(forward);
  for (const rule of allow) {
    if (rule.port !== undefined && isLoopback(rule.host)) ports.add(rule.port);
  }
  return [...ports].sort((a, b) => a - b);
}

/** A started bridge: the command inside, the variables that point at the proxy, and the stop. */
export interface NetworkBridge {
  /** The folder of its sockets on this machine (mounted read-only at {@linkcode NET_FOLDER_INSIDE}). */
  folder: string;
  /** The program and arguments that start the bridges inside and then run the command. */
  prefix: string[];
  /** The proxy's variables for the session. */
  env: Record<string, string>;
  /** Hosts refused so far (`host:port`), for the record. */
  refused: Set<string>;
  /** Stop listening and end open connections. */
  close(): void;
}

/**
 * Serve a session's allowlist from `folder`: one socket per loopback port
 * and one for the proxy.
 *
 * @param folder An empty folder only finishline writes.
 * @param access The allowlist.
 * @param options `forward`: more loopback ports (the complete_task callback);
 *   `socat`: its path; `upstream`: the user's own proxy, which the tunnels go through.
 * @returns The bridge.
 */
export function startBridge(
  folder: string,
  access: { allow: HostRule[] },
  options: { forward?: number[]; socat: string; upstream?: string },
): NetworkBridge {
  const ports = loopbackPorts(access.allow, options.forward ?? []);
  let proxyPort = PROXY_PORT;
  while (ports.includes(proxyPort)) proxyPort++;
  const listeners: Deno.Listener[] = [];
  const open = new Set<Deno.Conn>();
  const refused = new Set<string>();
  const upstream = options.upstream ? urlRule(options.upstream) : undefined;
  const serve = (path: string, handle: (conn: Deno.Conn) => Promise<void>) => {
    const listener = Deno.listen({ transport: "unix", path });
    listeners.push(listener);
    (async () => {
      try {
        for await (const conn of listener) {
          open.add(conn);
          handle(conn).catch(() => {}).finally(() => {
            open.delete(conn);
            closeQuietly(conn);
          });
        }
      } catch {
        // closed
      }
    })();
  };
  for (const port of ports) {
    serve(join(folder, `port-${port}.sock`), async (conn) => {
      const target = await Deno.connect({ hostname: "127.0.0.1", port });
      open.add(target);
      await pipeBoth(conn, target, new Uint8Array());
      open.delete(target);
    });
  }
  serve(join(folder, "proxy.sock"), (conn) =>
    proxy(conn, {
      allowed: (host, port) => {
        if (allowedBy(access.allow, host, port)) return true;
        refused.add(`${host}:${port}`);
        return false;
      },
      upstream,
      track: (target) => open.add(target),
    }));
  const bridges = [
    [proxyPort, "proxy.sock"] as const,
    ...ports.map((port) => [port, `port-${port}.sock`] as const),
  ];
  const hex = (port: number) => port.toString(16).toUpperCase().padStart(4, "0");
  // The bridges listen first, then the command runs (each port waited for, 10 s at most).
  const script = [
    ...bridges.map(([port, socket]) =>
      `'${options.socat}' TCP-LISTEN:${port},bind=127.0.0.1,reuseaddr,fork UNIX-CONNECT:${NET_FOLDER_INSIDE}/${socket} 2>/dev/null &`
    ),
    // Whether 127.0.0.1:$1 (hex) listens: the shell's own loop over /proc/net/tcp, no process.
    "ready() {",
    "  while read -r _ local _ state _; do",
    '    [ "$local $state" = "0100007F:$1 0A" ] && return 0',
    "  done < /proc/net/tcp",
    "  return 1",
    "}",
    "n=0",
    `for p in ${bridges.map(([port]) => hex(port)).join(" ")}; do`,
    '  until ready "$p"; do',
    "    n=$((n + 1)); [ $n -gt 2000 ] && break; sleep 0.005",
    "  done",
    "done",
    'exec "$@"',
  ].join("\n");
  const proxyUrl = `http://127.0.0.1:${proxyPort}`;
  const noProxy = "localhost,127.0.0.1,::1";
  return {
    folder,
    prefix: ["/bin/sh", "-c", script, "finishline-network"],
    env: {
      HTTPS_PROXY: proxyUrl,
      HTTP_PROXY: proxyUrl,
      https_proxy: proxyUrl,
      http_proxy: proxyUrl,
      ALL_PROXY: proxyUrl,
      all_proxy: proxyUrl,
      NO_PROXY: noProxy,
      no_proxy: noProxy,
    },
    refused,
    close() {
      for (const listener of listeners) {
        try {
          listener.close();
        } catch {
          // closed
        }
      }
      for (const conn of open) closeQuietly(conn);
      open.clear();
    },
  };
}

function closeQuietly(conn: Deno.Conn): void {
  try {
    conn.close();
  } catch {
    // closed
  }
}

/** Copy both ways until both ends are done; `first` goes to `target` before the rest. */
async function pipeBoth(client: Deno.Conn, target: Deno.Conn, first: Uint8Array): Promise<void> {
  if (first.length > 0) await writeAll(target, first);
  await Promise.allSettled([
    client.readable.pipeTo(target.writable),
    target.readable.pipeTo(client.writable),
  ]);
  closeQuietly(target);
}

async function writeAll(conn: Deno.Conn, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) written += await conn.write(bytes.subarray(written));
}

/** Read a request head (up to the blank line): the head's text and the bytes after it. */
async function readHead(conn: Deno.Conn): Promise<{ head: string; rest: Uint8Array } | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  const buffer = new Uint8Array(16 * 1024);
  while (size < MAX_HEAD) {
    const count = await conn.read(buffer);
    if (count === null) return undefined;
    chunks.push(buffer.slice(0, count));
    size += count;
    const all = concat(chunks, size);
    const end = indexOfBlankLine(all);
    if (end >= 0) {
      return { head: new TextDecoder().decode(all.subarray(0, end)), rest: all.subarray(end + 4) };
    }
  }
  return undefined;
}

function concat(
  chunks: Uint8Array[],
  size = chunks.reduce((sum, c) => sum + c.length, 0),
): Uint8Array {
  const all = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    all.set(chunk, offset);
    offset += chunk.length;
  }
  return all;
}

function indexOfBlankLine(bytes: Uint8Array): number {
  for (let index = 0; index + 3 < bytes.length; index++) {
    if (
      bytes[index] === 13 && bytes[index + 1] === 10 && bytes[index + 2] === 13 &&
      bytes[index + 3] === 10
    ) return index;
  }
  return -1;
}

const encoder = new TextEncoder();

/** One proxied connection: a CONNECT tunnel, or one plain HTTP request (`Connection: close`). */
async function proxy(
  conn: Deno.Conn,
  options: {
    allowed: (host: string, port: number) => boolean;
    upstream?: HostRule;
    track: (target: Deno.Conn) => void;
  },
): Promise<void> {
  const read = await readHead(conn);
  if (!read) return;
  const [requestLine, ...headers] = read.head.split("\r\n");
  const [method, target, version = "HTTP/1.1"] = requestLine.split(" ");
  const connect = method?.toUpperCase() === "CONNECT";
  const where = connect ? hostRule(target ?? "") : urlRule(target ?? "");
  if (!where || where.port === undefined) {
    await writeAll(conn, encoder.encode(answer(400, "the proxy takes CONNECT or an absolute URL")));
    return;
  }
  const { host, port } = where;
  if (!options.allowed(host, port)) {
    await writeAll(
      conn,
      encoder.encode(
        answer(
          403,
          `${host}:${port} is not in this session's network allowlist (verify.network)`,
        ),
      ),
    );
    return;
  }
  const via = options.upstream && !isLoopback(host) ? options.upstream : undefined;
  let upstream: Deno.Conn;
  try {
    upstream = await dial(host, port, via, connect);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    await writeAll(conn, encoder.encode(answer(502, `cannot reach ${host}:${port}: ${reason}`)));
    return;
  }
  options.track(upstream);
  if (connect) {
    await writeAll(conn, encoder.encode(`${version} 200 Connection Established\r\n\r\n`));
    await pipeBoth(conn, upstream, read.rest);
    return;
  }
  const url = new URL(target);
  const kept = headers.filter((line) =>
    !/^(proxy-connection|proxy-authorization|connection|keep-alive)\s*:/i.test(line)
  );
  // Through the user's proxy the absolute form stays; to the host itself, the path.
  const line = via ? requestLine : `${method} ${url.pathname}${url.search} ${version}`;
  const head = [line, ...kept, "Connection: close", "", ""].join("\r\n");
  await pipeBoth(conn, upstream, concat([encoder.encode(head), read.rest]));
}

/** A connection to `host:port`, straight or through the user's proxy (CONNECT for tunnels). */
async function dial(
  host: string,
  port: number,
  upstream: HostRule | undefined,
  tunnel: boolean,
): Promise<Deno.Conn> {
  if (!upstream) return await Deno.connect({ hostname: host, port });
  const conn = await Deno.connect({ hostname: upstream.host, port: upstream.port ?? 80 });
  if (!tunnel) return conn;
  const name = host.includes(":") ? `[${host}]` : host;
  await writeAll(
    conn,
    encoder.encode(`CONNECT ${name}:${port} HTTP/1.1\r\nHost: ${name}:${port}\r\n\r\n`),
  );
  const reply = await readHead(conn);
  if (!reply || !/^HTTP\/1\.[01] 2\d\d/.test(reply.head)) {
    closeQuietly(conn);
    throw new Error(`the proxy refused: ${reply?.head.split("\r\n")[0] ?? "no answer"}`);
  }
  return conn;
}

function answer(status: number, text: string): string {
  const reason = { 400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway" }[status] ?? "Error";
  const body = `finishline: ${text}\n`;
  return `HTTP/1.1 ${status} ${reason}\r\nContent-Type: text/plain\r\nContent-Length: ${
    encoder.encode(body).length
  }\r\nConnection: close\r\n\r\n${body}`;
}
