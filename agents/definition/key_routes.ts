/**
 * Where a definition may send a credential. agent.json comes with the
 * repository, so it may name a key variable only for the host that key
 * belongs to (`OPENAI_API_KEY` to api.openai.com); any other pairing of a
 * variable and a host is the user's to allow, in their own environment
 * (`FINISHLINE_KEY_HOSTS`), never the repository's. An ACP agent's `env` in
 * agent.json may not point an agent at another host, proxy or certificate
 * store (`ANTHROPIC_BASE_URL`, `HTTPS_PROXY`, `NODE_TLS_REJECT_UNAUTHORIZED`,
 * ...): the agent would send its key there.
 *
 * @module
 */

import type { AgentDefinition } from "./definition_types.ts";

/** The user's own list of extra routes: `VAR=host[:port],VAR=host`. */
export const KEY_HOSTS_VARIABLE = "FINISHLINE_KEY_HOSTS";

/** The hosts each well-known credential variable belongs to. */
const HOME_HOSTS: Readonly<Record<string, readonly string[]>> = {
  ANTHROPIC_API_KEY: ["api.anthropic.com"],
  ANTHROPIC_AUTH_TOKEN: ["api.anthropic.com"],
  CLAUDE_CODE_OAUTH_TOKEN: ["api.anthropic.com"],
  OPENAI_API_KEY: ["api.openai.com"],
  CODEX_API_KEY: ["api.openai.com"],
  VOYAGE_API_KEY: ["api.voyageai.com"],
  GEMINI_API_KEY: ["generativelanguage.googleapis.com"],
  GOOGLE_API_KEY: ["generativelanguage.googleapis.com"],
  MISTRAL_API_KEY: ["api.mistral.ai"],
  COHERE_API_KEY: ["api.cohere.com", "api.cohere.ai"],
  GH_TOKEN: ["api.github.com", "github.com"],
  GITHUB_TOKEN: ["api.github.com", "github.com"],
};

/**
 * Names of variables that decide where a program connects or whom it trusts:
 * URLs, hosts, endpoints, proxies, certificate stores and TLS checks.
 */
const ROUTING_NAME =
  /(^|_)(URL|URI|ENDPOINT|HOST|HOSTNAME|PROXY|BASE)$|^NO_PROXY$|TLS|(^|_)(CA|CERT|CERTS)(_|$)|CA_BUNDLE|^NODE_OPTIONS$/i;

/** One route the user allowed, or a well-known one. */
interface Route {
  variable: string;
  host: string;
}

/** Where a credential goes, for {@linkcode keyRouteProblem}. */
export interface KeyRouteOptions {
  /** The user's environment, for `FINISHLINE_KEY_HOSTS`. @default Deno.env */
  env?: { get(name: string): string | undefined };
}

/**
 * The routes the user allowed in `FINISHLINE_KEY_HOSTS`.
 *
 * @param value The variable's value.
 * @returns The pairs of variable and host (`host` or `host:port`, lower case).
 */
export function parseKeyHosts(value: string | undefined): Route[] {
  if (!value) return [];
  return value.split(/[\s,]+/).filter(Boolean).flatMap((entry) => {
    const at = entry.indexOf("=");
    if (at <= 0) return [];
    return [{ variable: entry.slice(0, at), host: entry.slice(at + 1).toLowerCase() }];
  });
}

function readEnv(env: KeyRouteOptions["env"], name: string): string | undefined {
  try {
    return (env ?? Deno.env).get(name);
  } catch {
    return undefined;
  }
}

/**
 * Whether a credential variable may be sent to a URL: to its provider's own
 * host, or to one the user allowed for it.
 *
 * @param variable The environment variable holding the key.
 * @param url The URL it would be sent to.
 * @param options The user's environment.
 * @returns Undefined when allowed, else why not (one clause, no value quoted).
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { keyRouteProblem } from "./key_routes.ts";
 *
 * const env = { get: (_: string) => undefined };
 * assert.equal(keyRouteProblem("OPENAI_API_KEY", "https://api.openai.com/v1/embeddings", { env }), undefined);
 * assert.match(keyRouteProblem("ANTHROPIC_API_KEY", "https://evil.example/x", { env })!, /api\.anthropic\.com/);
 * ```
 */
export function keyRouteProblem(
  variable: string,
  url: string,
  options: KeyRouteOptions = {},
): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${url} is no URL`;
  }
  const hostname = parsed.hostname.toLowerCase().replace(/^\[|\]$/g, "");
  const hostPort = parsed.port ? `${hostname}:${parsed.port}` : hostname;
  const home = HOME_HOSTS[variable] ?? [];
  // A key travels over TLS only: a well-known host over http is not its host.
  if (parsed.protocol === "https:" && home.includes(hostname)) return undefined;
  const allowed = parseKeyHosts(readEnv(options.env, KEY_HOSTS_VARIABLE));
  if (
    allowed.some((route) =>
      route.variable === variable && (route.host === hostname || route.host === hostPort)
    )
  ) return undefined;
  const whose = home.length > 0
    ? `${variable} is the key of ${home.join(" and ")} (over https), not of ${hostPort}`
    : `${variable} is sent to ${hostPort} only when you allow it`;
  return `${whose}: agent.json cannot send a key elsewhere; to allow it, add ${variable} for ${hostPort} to ${KEY_HOSTS_VARIABLE} ("VAR=host[:port],...") in your own environment`;
}

/**
 * The first place in a definition that would send a credential where the
 * repository chose, with the field it is in.
 *
 * @param definition A validated definition.
 * @param options The user's environment.
 * @returns `{field, problem}`, or undefined when every key goes to its own host.
 */
export function definitionKeyRouteProblem(
  definition: AgentDefinition,
  options: KeyRouteOptions = {},
): { field: string; problem: string } | undefined {
  const embeddings = definition.learnings.embeddings;
  if (embeddings && embeddings.provider !== "lexical") {
    const variable = embeddings.apiKeyEnv ??
      (embeddings.provider === "openai"
        ? "OPENAI_API_KEY"
        : embeddings.provider === "voyage"
        ? "VOYAGE_API_KEY"
        : undefined);
    const url = embeddings.url ??
      (embeddings.provider === "openai"
        ? "https://api.openai.com/v1/embeddings"
        : embeddings.provider === "voyage"
        ? "https://api.voyageai.com/v1/embeddings"
        : undefined);
    if (variable && url) {
      const problem = keyRouteProblem(variable, url, options);
      if (problem) {
        return {
          field: embeddings.apiKeyEnv
            ? "learnings.embeddings.apiKeyEnv"
            : "learnings.embeddings.url",
          problem,
        };
      }
    }
  }
  const backends = [
    ["behavior.backend", definition.behavior.backend],
    ["verify.reproduceBackend", definition.verify.reproduceBackend],
  ] as const;
  for (const [field, backend] of backends) {
    if (!backend || typeof backend === "string") continue;
    for (const name of Object.keys(backend.acp.env ?? {})) {
      if (ROUTING_NAME.test(name)) {
        return {
          field: `${field}.acp.env.${name}`,
          problem:
            `agent.json cannot set where an agent connects or whom it trusts (its key would go there); set ${name} in your own environment instead`,
        };
      }
    }
  }
  return undefined;
}

/**
 * Whether an environment variable's name decides where a program connects
 * or whom it trusts (a URL, host, proxy, certificate store or TLS setting).
 *
 * @param name The variable's name.
 * @returns True for `ANTHROPIC_BASE_URL`, `HTTPS_PROXY`, `NODE_EXTRA_CA_CERTS`, ...
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isRoutingVariable } from "./key_routes.ts";
 *
 * assert.equal(isRoutingVariable("ANTHROPIC_BASE_URL"), true);
 * assert.equal(isRoutingVariable("https_proxy"), true);
 * assert.equal(isRoutingVariable("GEMINI_CLI_TRUST_WORKSPACE"), false);
 * ```
 */
export function isRoutingVariable(name: string): boolean {
  return ROUTING_NAME.test(name);
}

/** The key a variable that names an endpoint routes, by its prefix. */
const ENDPOINT_KEYS: ReadonlyArray<[RegExp, string]> = [
  [/^ANTHROPIC_/, "ANTHROPIC_API_KEY"],
  [/^(OPENAI|CODEX)_/, "OPENAI_API_KEY"],
  [/^(GOOGLE_GEMINI|GEMINI|GOOGLE)_/, "GEMINI_API_KEY"],
];

/**
 * Why an `env` entry of a settings file that came with the repository may
 * not be applied, or undefined when it may: it points the agent at another
 * host, proxy or certificate store than the user's own environment does.
 *
 * @param name The variable.
 * @param value Its value in the file.
 * @param options The user's environment.
 * @returns Why not, or undefined.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { settingsEnvProblem } from "./key_routes.ts";
 *
 * const env = { get: (_: string) => undefined };
 * assert.equal(settingsEnvProblem("DEBUG", "1", { env }), undefined);
 * assert.equal(settingsEnvProblem("ANTHROPIC_BASE_URL", "https://api.anthropic.com", { env }), undefined);
 * assert.match(settingsEnvProblem("ANTHROPIC_BASE_URL", "https://collect.example", { env })!, /collect\.example/);
 * ```
 */
export function settingsEnvProblem(
  name: string,
  value: string,
  options: KeyRouteOptions = {},
): string | undefined {
  if (!isRoutingVariable(name)) return undefined;
  if (readEnv(options.env, name) === value) return undefined;
  const key = /(_URL|_URI|_ENDPOINT|_BASE)$/i.test(name)
    ? ENDPOINT_KEYS.find(([prefix]) => prefix.test(name))?.[1]
    : undefined;
  if (key) {
    return keyRouteProblem(key, value, options)?.replace(
      "agent.json cannot",
      "a file of the repository cannot",
    );
  }
  return `it sets ${name}, which decides where the agent connects or whom it trusts; set it in your own environment instead`;
}
