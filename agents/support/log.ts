/**
 * The JSONL run log: every agent message and runner event, one JSON object a
 * line, with secrets redacted before anything is written.
 *
 * @module
 */

import { dirname } from "node:path";
import { type Redactor, redactorOfProcess } from "./redact.ts";

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
 * import { RunLog } from "./log.ts";
 *
 * const dir = await Deno.makeTempDir();
 * try {
 *   const log = RunLog.open(`${dir}/run.jsonl`);
 *   log.event("run_started", { note: "gh said ghp_abcdefghijklmnopqrstuvwxyz0123456789" });
 *   log.close();
 *   const record = JSON.parse(await Deno.readTextFile(`${dir}/run.jsonl`));
 *   assert.equal(record.kind, "run_started");
 *   assert.equal(record.note, "gh said ghp_…6789 [redacted]");
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
   * import { Redactor } from "./redact.ts";
   * import { RunLog } from "./log.ts";
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
  static open(path: string, redactor: Redactor = redactorOfProcess()): RunLog {
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
   * import { Redactor } from "./redact.ts";
   * import { RunLog } from "./log.ts";
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
   * import { Redactor } from "./redact.ts";
   * import { RunLog } from "./log.ts";
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
   * import { Redactor } from "./redact.ts";
   * import { RunLog } from "./log.ts";
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

  /**
   * Called once, at the first write that fails (a full disk, a lost mount).
   * The log stops there and counts the lines it could not write: the room
   * left on a full disk is the run history's, which records the iterations.
   */
  onFault: ((error: string) => void) | undefined;

  /** How many lines could not be written. */
  get failedWrites(): number {
    return this.#failed;
  }

  #failed = 0;

  #write(record: LogRecord): void {
    if (!this.#file) return;
    if (this.#failed > 0) {
      this.#failed++;
      return;
    }
    const line = JSON.stringify(this.#redactor.redactValue(record)) + "\n";
    const bytes = this.#encoder.encode(line);
    let written = 0;
    try {
      while (written < bytes.length) {
        written += this.#file.writeSync(bytes.subarray(written));
      }
    } catch (error) {
      // A log that cannot be written never stops the run: counted, said once.
      this.#failed++;
      this.onFault?.(error instanceof Error ? error.message.split("\n")[0] : String(error));
    }
  }
}
