/**
 * Secret redaction: what the run log and the run history remove from every
 * string before they write it.
 *
 * @module
 */

const SECRET_NAME = /(key|secret|password|passwd|token|credentials?|authorization|auth)$/i;
const MIN_SECRET_LENGTH = 8;
const SECRET_PATTERNS: RegExp[] = [
  /sk-ant-[A-Za-z0-9_\-]{8,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{20,}/g,
  /\bgithub_pat_[A-Za-z0-9_]{20,}/g,
  /\b(token\s+)[0-9a-f]{40}\b/gi,
  /\b((?:Bearer|Basic)\s+)[A-Za-z0-9._~+\/=\-]{8,}/gi,
  /("?(?:authorization|x-api-key)"?\s*[:=]\s*"?)[^"\s,}]{8,}/gi,
];

/** What redacted secrets are replaced with. */
export const REDACTED = "[REDACTED]";

/**
 * Removes secrets from strings and structures: values of environment
 * variables whose names look secret (keys, tokens, passwords), and anything
 * shaped like an Anthropic or GitHub token or an Authorization header.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Redactor } from "@finishline/agents";
 *
 * const redactor = new Redactor({ MY_API_KEY: "abc123secret", HOME: "/home/ada" });
 * assert.equal(
 *   redactor.redact("key=abc123secret home=/home/ada"),
 *   "key=[REDACTED] home=/home/ada",
 * );
 * assert.equal(redactor.redact("using sk-ant-api03-abcdefghijkl"), "using [REDACTED]");
 * ```
 */
export class Redactor {
  #values: string[];

  /**
   * Collect the secret values to look for.
   *
   * @param env Environment whose values under secret-looking names (`*_KEY`, `*_TOKEN`,
   *   `*PASSWORD`, ...) are redacted; the process environment when absent.
   */
  constructor(env: Record<string, string> = safeEnv()) {
    this.#values = Object.entries(env)
      .filter(([name, value]) => SECRET_NAME.test(name) && value.length >= MIN_SECRET_LENGTH)
      .map(([, value]) => value)
      .sort((a, b) => b.length - a.length);
  }

  /**
   * Redact one string.
   *
   * @param text Any text.
   * @returns The text with secrets replaced.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor } from "@finishline/agents";
   *
   * const redactor = new Redactor({});
   * assert.equal(
   *   redactor.redact("Authorization: Bearer abcdefghijklmnop"),
   *   "Authorization: Bearer [REDACTED]",
   * );
   * assert.equal(redactor.redact("nothing secret"), "nothing secret");
   * ```
   */
  redact(text: string): string {
    let out = text;
    for (const value of this.#values) {
      if (out.includes(value)) out = out.split(value).join(REDACTED);
    }
    for (const pattern of SECRET_PATTERNS) {
      out = out.replace(
        pattern,
        (match, prefix?: string) =>
          typeof prefix === "string" && match.startsWith(prefix) &&
            prefix !== match
            ? `${prefix}${REDACTED}`
            : REDACTED,
      );
    }
    return out;
  }

  /**
   * Redact every string inside a JSON-like value (a copy is returned).
   *
   * @param value Any JSON-like value.
   * @returns The redacted copy.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor } from "@finishline/agents";
   *
   * const redactor = new Redactor({});
   * const event = { env: { GH_TOKEN: "not-a-real-token" }, args: ["--issue", "7"] };
   * assert.deepEqual(redactor.redactValue(event), {
   *   env: { GH_TOKEN: "[REDACTED]" },
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
        out[key] = SECRET_NAME.test(key) && typeof item === "string" &&
            item.length >= MIN_SECRET_LENGTH
          ? REDACTED
          : this.#walk(item, seen);
      }
      return out;
    } finally {
      seen.delete(value);
    }
  }
}

function safeEnv(): Record<string, string> {
  try {
    return Deno.env.toObject();
  } catch {
    return {};
  }
}
