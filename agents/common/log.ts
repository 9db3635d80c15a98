/**
 * The JSONL run log: every agent message and runner event, one JSON object a
 * line, with secrets redacted before anything is written.
 *
 * @module
 */

import { dirname } from "node:path";

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

/** One line of the run log. */
export interface LogRecord {
  /** ISO timestamp. */
  ts: string;
  /** `message` for agent messages, otherwise the runner event's name. */
  kind: string;
  /** Further fields. */
  [field: string]: unknown;
}

/**
 * An append-only JSONL log of one run. Each record is written with one
 * synchronous append, so a crash loses at most the record being written.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { RunLog } from "@finishline/agents";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const log = RunLog.open(`${dir}/run.jsonl`);
 *   log.event("run_started", { note: "gh said ghp_abcdefghijklmnopqrstuvwxyz0123456789" });
 *   log.close();
 *   const record = JSON.parse(await Deno.readTextFile(`${dir}/run.jsonl`));
 *   assert.equal(record.kind, "run_started");
 *   assert.equal(record.note, "gh said [REDACTED]");
 * } finally {
 *   await Deno.remove(dir, { recursive: true });
 * }
 * ```
 */
export class RunLog {
  /** Path of the log file. */
  readonly path: string;
  #file: Deno.FsFile | undefined;
  #redactor: Redactor;
  #encoder = new TextEncoder();

  private constructor(path: string, file: Deno.FsFile, redactor: Redactor) {
    this.path = path;
    this.#file = file;
    this.#redactor = redactor;
  }

  /**
   * Open (create or append to) a log file, creating its folder.
   *
   * @param path The file.
   * @param redactor Secret redaction; a Redactor over the process environment when absent.
   * @returns The log.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor, RunLog } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   const log = RunLog.open(`${dir}/logs/run.jsonl`, new Redactor({}));
   *   assert.equal(log.path, `${dir}/logs/run.jsonl`);
   *   log.close();
   *   assert.equal((await Deno.stat(log.path)).isFile, true);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  static open(path: string, redactor: Redactor = new Redactor()): RunLog {
    Deno.mkdirSync(dirname(path), { recursive: true });
    const file = Deno.openSync(path, { append: true, create: true });
    return new RunLog(path, file, redactor);
  }

  /**
   * Record a runner event.
   *
   * @param kind Event name (`run_started`, `iteration_finished`, ...).
   * @param data Event fields.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor, RunLog } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   const log = RunLog.open(`${dir}/logs/run.jsonl`, new Redactor({}));
   *   log.event("iteration_finished", { iteration: 1, verdict: "continue" });
   *   log.close();
   *   const record = JSON.parse(await Deno.readTextFile(log.path));
   *   assert.deepEqual({ ...record, ts: undefined }, {
   *     ts: undefined,
   *     kind: "iteration_finished",
   *     iteration: 1,
   *     verdict: "continue",
   *   });
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  event(kind: string, data: Record<string, unknown> = {}): void {
    this.#write({ ts: new Date().toISOString(), kind, ...data });
  }

  /**
   * Record an agent message.
   *
   * @param iteration The iteration it belongs to.
   * @param message The message, as the backend yielded it.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor, RunLog } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   const log = RunLog.open(`${dir}/logs/run.jsonl`, new Redactor({}));
   *   log.message(2, { type: "assistant", message: { content: [] } });
   *   log.close();
   *   const record = JSON.parse(await Deno.readTextFile(log.path));
   *   assert.equal(record.kind, "message");
   *   assert.equal(record.iteration, 2);
   *   assert.equal(record.message.type, "assistant");
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  message(iteration: number, message: unknown): void {
    this.#write({
      ts: new Date().toISOString(),
      kind: "message",
      iteration,
      message,
    });
  }

  /**
   * Close the file; later writes are ignored, and closing again is harmless.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { Redactor, RunLog } from "@finishline/agents";
   *
   * const dir = await Deno.makeTempDir();
   * try {
   *   const log = RunLog.open(`${dir}/logs/run.jsonl`, new Redactor({}));
   *   log.event("run_started");
   *   log.close();
   *   log.event("ignored");
   *   log.close();
   *   const lines = (await Deno.readTextFile(log.path)).trim().split("\n");
   *   assert.equal(lines.length, 1);
   * } finally {
   *   await Deno.remove(dir, { recursive: true });
   * }
   * ```
   */
  close(): void {
    this.#file?.close();
    this.#file = undefined;
  }

  #write(record: LogRecord): void {
    if (!this.#file) return;
    const line = JSON.stringify(this.#redactor.redactValue(record)) + "\n";
    const bytes = this.#encoder.encode(line);
    let written = 0;
    while (written < bytes.length) {
      written += this.#file.writeSync(bytes.subarray(written));
    }
  }
}
