/**
 * Secret redaction: the one layer every output of finishline goes through
 * (stdout and stderr, the run log, the report, the run history, gh's
 * arguments, the requests to models and to the embeddings endpoint).
 *
 * It removes the exact values of the runner's own credentials and of every
 * environment variable whose name or value looks secret, and whatever
 * secretlint's recommended rule preset recognises as a credential. A masked
 * secret keeps its vendor prefix and last four characters when it is long
 * enough: `sk-ant-…0000 [redacted]`.
 *
 * @module
 */

import { findSecrets, maskSecret, REDACTED } from "./_secret_rules.ts";

export { REDACTED };

const MIN_SECRET_LENGTH = 8;
// The last word of a name (`GH_TOKEN`, `apiKey`, `db-password`) that makes it a secret's name.
const SECRET_WORDS = new Set([
  "key",
  "apikey",
  "token",
  "secret",
  "password",
  "passwd",
  "passphrase",
  "credential",
  "credentials",
  "auth",
  "authorization",
  "cookie",
]);
const CREDENTIAL_URL = /^[a-z][a-z0-9+.\-]{1,20}:\/\/[^\s:\/@]+:[^\s@\/]+@/i;
const SECRET_KEY_FIELD = /(?:^|[_\-.])(?:x[_\-])?api[_\-]?key$/i;

/**
 * Whether a variable or field name says its value is a secret: its last word
 * is key, token, secret, password, credentials, auth, … (`GH_TOKEN`,
 * `apiKey`, `DB_PASSWORD`), not `keyword` or `input_tokens`.
 *
 * @param name A variable or field name.
 * @returns True when it names a secret.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSecretName } from "./redact.ts";
 *
 * assert.equal(isSecretName("ANTHROPIC_API_KEY"), true);
 * assert.equal(isSecretName("accessToken"), true);
 * assert.equal(isSecretName("completionKeyword"), false);
 * assert.equal(isSecretName("input_tokens"), false);
 * ```
 */
export function isSecretName(name: string): boolean {
  if (SECRET_KEY_FIELD.test(name)) return true;
  const words = name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").split(/[_\-.\s]+/);
  return SECRET_WORDS.has((words.at(-1) ?? "").toLowerCase());
}

/** Options of {@linkcode Redactor}. */
export interface RedactorOptions {
  /**
   * Names of further variables whose values are secrets whatever their names
   * (the embeddings key's `apiKeyEnv`).
   *
   * @default {[]}
   */
  secretNames?: string[];
}

/**
 * Removes secrets from strings and structures: the values of environment
 * variables whose names or values look secret, and every credential that
 * secretlint's recommended preset or finishline's few extra shapes recognise
 * (Anthropic, OpenAI, AWS, GitHub, GitLab, Slack, Google, Stripe, npm,
 * private keys, passwords in URLs, Authorization headers, …).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redactor } from "./redact.ts";
 *
 * const redactor = new Redactor({ MY_API_KEY: "abc123secret", HOME: "/home/ada" });
 * assert.equal(
 *   redactor.redact("key=abc123secret home=/home/ada"),
 *   "key=[redacted] home=/home/ada",
 * );
 * assert.equal(
 *   redactor.redact("using xoxb-1234567890123-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"),
 *   "using xoxb-…UvWx [redacted]",
 * );
 * ```
 */
export class Redactor {
  #values: Array<{ text: string; replacement: string }>;

  /**
   * Collect the secret values to look for.
   *
   * @param env Environment whose secret values are redacted: those under
   *   secret-looking names (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*_PASSWORD`, …),
   *   URLs with a password, and values secretlint recognises; the process
   *   environment when absent.
   * @param options Further names whose values are secrets.
   */
  constructor(env: Record<string, string> = safeEnv(), options: RedactorOptions = {}) {
    const named = new Set(options.secretNames ?? []);
    const values = new Map<string, string>();
    for (const [name, value] of Object.entries(env)) {
      if (value.length < MIN_SECRET_LENGTH) continue;
      if (isSecretName(name) || named.has(name)) {
        values.set(value, maskValue(value));
      } else if (CREDENTIAL_URL.test(value)) {
        values.set(value, maskValue(value));
      } else {
        for (const found of findSecrets(value)) values.set(found.text, found.replacement);
      }
    }
    this.#values = [...values]
      .map(([text, replacement]) => ({ text, replacement }))
      .sort((a, b) => b.text.length - a.text.length);
  }

  /**
   * Treat one more value as a secret from now on (a key read from a variable
   * whose name does not look secret, such as the embeddings' `apiKeyEnv`).
   *
   * @param value The secret; values shorter than 8 characters are ignored.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor } from "./redact.ts";
   *
   * const redactor = new Redactor({});
   * redactor.protect("embeddings-key-42");
   * assert.equal(redactor.redact("k=embeddings-key-42"), "k=[redacted]");
   * ```
   */
  protect(value: string): void {
    if (value.length < MIN_SECRET_LENGTH || this.#values.some((known) => known.text === value)) {
      return;
    }
    this.#values.push({ text: value, replacement: maskValue(value) });
    this.#values.sort((a, b) => b.text.length - a.text.length);
  }

  /**
   * Redact one string.
   *
   * @param text Any text.
   * @returns The text with secrets masked.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor } from "./redact.ts";
   *
   * const redactor = new Redactor({});
   * assert.equal(
   *   redactor.redact("Authorization: Bearer abcdefghijklmnop"),
   *   "Authorization: Bearer [redacted]",
   * );
   * assert.equal(redactor.redact("nothing secret"), "nothing secret");
   * ```
   */
  redact(text: string): string {
    let out = text;
    for (const { text: value, replacement } of this.#values) {
      if (out.includes(value)) out = out.replaceAll(value, replacement);
    }
    const found = findSecrets(out);
    if (found.length === 0) return out;
    // Longest first, so that a secret inside a longer one (a password inside
    // its URL) does not break the longer one's match.
    found.sort((a, b) => b.text.length - a.text.length);
    for (const { text: secret, replacement } of found) {
      if (out.includes(secret)) out = out.replaceAll(secret, replacement);
    }
    return out;
  }

  /**
   * Redact every string inside a JSON-like value (a copy is returned); a
   * string under a secret-looking name (`apiKey`, `password`) is masked whole.
   *
   * @param value Any JSON-like value.
   * @returns The redacted copy.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor } from "./redact.ts";
   *
   * const redactor = new Redactor({});
   * const event = { env: { GH_TOKEN: "not-a-real-token" }, args: ["--issue", "7"] };
   * assert.deepEqual(redactor.redactValue(event), {
   *   env: { GH_TOKEN: "[redacted]" },
   *   args: ["--issue", "7"],
   * });
   * assert.equal(event.env.GH_TOKEN, "not-a-real-token");
   * ```
   */
  redactValue<T>(value: T): T {
    return this.#walk(value, new WeakSet()) as T;
  }

  #walk(value: unknown, seen: WeakSet<object>): unknown {
    if (typeof value === "string") return this.redact(value);
    if (typeof value !== "object" || value === null) return value;
    if (seen.has(value)) return "[circular]";
    // `seen` holds the current path only: an object referenced twice is not a cycle.
    seen.add(value);
    try {
      if (Array.isArray(value)) {
        return value.map((item) => this.#walk(item, seen));
      }
      const out: Record<string, unknown> = {};
      for (const [key, item] of Object.entries(value)) {
        out[key] = isSecretName(key) && typeof item === "string" &&
            item.length >= MIN_SECRET_LENGTH
          ? maskValue(item)
          : this.#walk(item, seen);
      }
      return out;
    } finally {
      seen.delete(value);
    }
  }
}

let processRedactor: Redactor | undefined;

/**
 * The redactor over this process's environment, made once: what every sink
 * of the CLI uses.
 *
 * @returns The shared redactor.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { redactorOfProcess } from "./redact.ts";
 *
 * assert.equal(redactorOfProcess(), redactorOfProcess());
 * ```
 */
export function redactorOfProcess(): Redactor {
  processRedactor ??= new Redactor();
  return processRedactor;
}

/** A whole value known to be secret: a URL keeps all but its password. */
function maskValue(value: string): string {
  const url = value.match(/^([a-z][a-z0-9+.\-]{1,20}:\/\/[^\s:\/@]+:)([^\s@\/]+)(@.*)$/is);
  if (url) return `${url[1]}${maskSecret(url[2], "")}${url[3]}`;
  return maskSecret(value, "");
}

function safeEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}
