/**
 * Secret redaction: the one layer every output of finishline goes through
 * (stdout and stderr, the run log, the report, the run history, gh's
 * arguments, the requests to models and to the embeddings endpoint).
 *
 * It removes the exact values of the runner's own credentials and of every
 * environment variable whose name, shape or randomness says secret (with a
 * connection string's or DSN's password on its own), also base64-, hex-,
 * percent- or `\u`-encoded and cut by whitespace or line breaks; and whatever
 * secretlint's recommended rule preset or finishline's own shapes recognise
 * as a credential. A masked
 * secret keeps its vendor prefix and last four characters when it is long
 * enough: `sk-ant-…0000 [redacted]`.
 *
 * @module
 */

import { KnownValueMatcher } from "./_known_values.ts";
import { findSecrets, maskSecret, REDACTED } from "./_secret_rules.ts";
import {
  isSecretName as isSecretVariableName,
  MIN_SECRET_LENGTH,
  secretsOfVariable,
} from "./_secret_values.ts";

export { REDACTED };

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
  return isSecretVariableName(name);
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
  #known = new KnownValueMatcher();

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
      for (const secret of secretsOfVariable(name, value, named.has(name))) {
        if (!values.has(secret)) values.set(secret, maskValue(secret));
        this.#known.add(secret);
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
    this.#known.add(value);
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
    // Longest first, so that a secret inside a longer one (a password inside
    // its URL) does not break the longer one's match; each secret once, so
    // that a text holding one a thousand times is scanned once for it.
    const unique = new Map(found.map((finding) => [finding.text, finding.replacement]));
    for (const secret of [...unique.keys()].sort((a, b) => b.length - a.length)) {
      if (out.includes(secret)) out = out.replaceAll(secret, unique.get(secret)!);
    }
    // Last: a piece of a known secret must not hide a whole token from its shape.
    return this.#redactKnownForms(out);
  }

  /** The known secrets in their other forms: encoded, escaped, cut by whitespace. */
  #redactKnownForms(text: string): string {
    const spans = this.#known.find(text);
    if (spans.length === 0) return text;
    let out = "";
    let at = 0;
    for (const { start, end } of spans) {
      out += text.slice(at, start) + REDACTED;
      at = end;
    }
    return out + text.slice(at);
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
