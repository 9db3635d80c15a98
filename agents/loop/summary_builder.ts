/**
 * Building an {@linkcode IterationSummary} from the messages of one agent
 * session (Claude Agent SDK message shapes).
 *
 * @module
 */

import { COMPLETE_TASK_TOOL, type CompleteTaskCall } from "../record/complete_task_call.ts";
import {
  type AgentMessage,
  type ApiRetry,
  type DetectedAction,
  emptySummary,
  type IterationSummary,
} from "../record/iteration.ts";

/** How action blocks are recognised. */
export interface ActionOptions {
  /** Info string of the fenced block. @default "action" */
  outputFormat?: string;
  /** Accepted action types; empty accepts any. @default [] */
  types?: string[];
  /** Whether to look for action blocks at all. @default true */
  enabled?: boolean;
}

/**
 * Find fenced action blocks (code fences with the info string `action`, or
 * the configured one) whose body is a JSON object with a string `type`.
 *
 * @param text Assistant text.
 * @param options Info string and accepted types.
 * @returns The actions, in order; malformed blocks are skipped.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { extractActions } from "./summary_builder.ts";
 *
 * const fence = "`".repeat(3);
 * const text = `Done.\n${fence}action\n{"type": "review", "result": "pass"}\n${fence}\n` +
 *   `${fence}action\nnot json\n${fence}`;
 * assert.deepEqual(extractActions(text), [{ type: "review", result: "pass" }]);
 * assert.deepEqual(extractActions(text, { types: ["deploy"] }), []);
 * ```
 */
export function extractActions(
  text: string,
  options: ActionOptions = {},
): DetectedAction[] {
  if (options.enabled === false) return [];
  const format = options.outputFormat ?? "action";
  const types = options.types ?? [];
  const fence = new RegExp(
    "(^|\\n)[ \\t]*(`{3,}|~{3,})[ \\t]*" + escapeRegExp(format) +
      "[ \\t]*\\r?\\n([\\s\\S]*?)\\r?\\n[ \\t]*\\2",
    "g",
  );
  const actions: DetectedAction[] = [];
  for (const match of text.matchAll(fence)) {
    let body: unknown;
    try {
      body = JSON.parse(match[3]);
    } catch {
      continue;
    }
    const candidates = Array.isArray(body) ? body : [body];
    for (const candidate of candidates) {
      if (
        typeof candidate === "object" && candidate !== null &&
        typeof (candidate as { type?: unknown }).type === "string" &&
        (types.length === 0 ||
          types.includes((candidate as { type: string }).type))
      ) {
        actions.push(candidate as DetectedAction);
      }
    }
  }
  return actions;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Accumulates an iteration's summary message by message, so progress can be
 * shown while the session runs.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SummaryBuilder } from "./summary_builder.ts";
 *
 * const builder = new SummaryBuilder(1);
 * builder.add({
 *   type: "assistant",
 *   session_id: "s1",
 *   message: {
 *     content: [
 *       { type: "text", text: "Running tests" },
 *       { type: "tool_use", id: "t1", name: "Bash", input: { command: "deno test" } },
 *     ],
 *   },
 * });
 * builder.add({
 *   type: "result",
 *   subtype: "success",
 *   total_cost_usd: 0.01,
 *   num_turns: 2,
 *   stop_reason: "end_turn",
 *   usage: { input_tokens: 10, output_tokens: 5 },
 * });
 * const summary = builder.finish(1200);
 * assert.deepEqual(summary.assistantResponses, ["Running tests"]);
 * assert.deepEqual(summary.toolsUsed, ["Bash"]);
 * assert.equal(summary.costUsd, 0.01);
 * assert.equal(summary.stopReason, "end_turn");
 * ```
 */
export class SummaryBuilder {
  #summary: IterationSummary;
  #messages: AgentMessage[] = [];
  #actions: ActionOptions;
  #toolNames = new Map<string, string>();
  #sawResult = false;
  #apiError: string | undefined;
  #rateLimit: { status: string; resetsAt?: number } | undefined;
  #apiRetries = 0;
  #lastApiRetry: ApiRetry | undefined;
  #apiKeySource: string | undefined;

  /**
   * Start an empty summary.
   *
   * @param iteration The iteration number.
   * @param actions How action blocks are recognised.
   */
  constructor(iteration: number, actions: ActionOptions = {}) {
    this.#summary = emptySummary(iteration);
    this.#actions = actions;
  }

  /**
   * The summary so far (live view; do not mutate).
   *
   * @returns The summary being built.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(3);
   * builder.add({
   *   type: "assistant",
   *   message: { content: [{ type: "text", text: "Reading the code" }] },
   * });
   * assert.deepEqual(builder.current.assistantResponses, ["Reading the code"]);
   * assert.equal(builder.current.iteration, 3);
   * ```
   */
  get current(): IterationSummary {
    return this.#summary;
  }

  /**
   * Every message taken so far, in order (live view; do not mutate): what a
   * checker reads as `context.session.messages`.
   *
   * @returns The messages.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({ type: "system", subtype: "init", session_id: "s1" });
   * assert.deepEqual(builder.messages.map((message) => message.type), ["system"]);
   * ```
   */
  get messages(): readonly AgentMessage[] {
    return this.#messages;
  }

  /**
   * Whether the session's result message arrived; a session that ends without
   * one broke off.
   *
   * @returns True after a `result` message.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * assert.equal(builder.sawResult, false);
   * builder.add({ type: "result", subtype: "success", num_turns: 1 });
   * assert.equal(builder.sawResult, true);
   * ```
   */
  get sawResult(): boolean {
    return this.#sawResult;
  }

  /**
   * Take one message into account: text, tool calls, tool errors, the result's
   * cost and tokens, rate limits and API retries.
   *
   * @param message A backend message.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({
   *   type: "assistant",
   *   message: {
   *     content: [
   *       { type: "tool_use", id: "t1", name: "Read", input: { file_path: "missing.ts" } },
   *     ],
   *   },
   * });
   * builder.add({
   *   type: "user",
   *   message: {
   *     content: [
   *       {
   *         type: "tool_result",
   *         tool_use_id: "t1",
   *         is_error: true,
   *         content: "File does not exist.",
   *       },
   *     ],
   *   },
   * });
   * assert.deepEqual(builder.current.errors, ["Read: File does not exist."]);
   * ```
   */
  add(message: AgentMessage): void {
    const summary = this.#summary;
    this.#messages.push(message);
    if (typeof message.session_id === "string" && message.session_id !== "") {
      summary.sessionId = message.session_id;
    }
    switch (message.type) {
      case "assistant":
        this.#assistant(message);
        break;
      case "user":
        this.#user(message);
        break;
      case "result":
        this.#result(message);
        break;
      case "rate_limit_event": {
        const info = message.rate_limit_info as
          | { status?: unknown; resetsAt?: unknown }
          | undefined;
        if (info && typeof info.status === "string") {
          this.#rateLimit = {
            status: info.status,
            resetsAt: typeof info.resetsAt === "number" ? info.resetsAt : undefined,
          };
        }
        break;
      }
      case "system":
        if (message.subtype === "init") {
          if (typeof message.apiKeySource === "string") this.#apiKeySource = message.apiKeySource;
          if (typeof message.model === "string" && message.model) summary.model = message.model;
        } else if (message.subtype === "api_retry") {
          this.#apiRetries++;
          const noResponse = message.no_response as { waited_ms?: unknown } | undefined;
          this.#lastApiRetry = {
            attempt: numberOr(message.attempt),
            maxRetries: numberOr(message.max_retries),
            status: typeof message.error_status === "number" ? message.error_status : null,
            error: typeof message.error === "string" ? message.error : "unknown",
            waitMs: numberOr(message.retry_delay_ms),
            ...(typeof noResponse?.waited_ms === "number"
              ? { noResponseMs: noResponse.waited_ms }
              : {}),
          };
        }
        break;
    }
  }

  /**
   * The last API error code the agent's messages carried (`rate_limit`,
   * `authentication_failed`, ...).
   *
   * @returns The code, or undefined when there was none.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({
   *   type: "assistant",
   *   error: "rate_limit",
   *   message: { content: [{ type: "text", text: "Rate limit reached" }] },
   * });
   * assert.equal(builder.apiError, "rate_limit");
   * assert.deepEqual(builder.current.errors, ["api rate_limit: Rate limit reached"]);
   * ```
   */
  get apiError(): string | undefined {
    return this.#apiError;
  }

  /**
   * The last rate limit event: its status and when the limit resets (epoch seconds).
   *
   * @returns The event, or undefined when there was none.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({
   *   type: "rate_limit_event",
   *   rate_limit_info: { status: "rejected", resetsAt: 1767225600 },
   * });
   * assert.deepEqual(builder.rateLimit, { status: "rejected", resetsAt: 1767225600 });
   * ```
   */
  get rateLimit(): { status: string; resetsAt?: number } | undefined {
    return this.#rateLimit;
  }

  /**
   * How often Claude Code retried an API call by itself in this session.
   *
   * @returns The count of `api_retry` system messages.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({ type: "system", subtype: "api_retry" });
   * builder.add({ type: "system", subtype: "init" });
   * assert.equal(builder.apiRetries, 1);
   * ```
   */
  get apiRetries(): number {
    return this.#apiRetries;
  }

  /**
   * Claude Code's latest retry of an API call in this session: which attempt,
   * the status and error, and the wait before the next try.
   *
   * @returns The retry, or undefined when there was none.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({
   *   type: "system",
   *   subtype: "api_retry",
   *   attempt: 3,
   *   max_retries: 10,
   *   retry_delay_ms: 4800,
   *   error_status: 529,
   *   error: "overloaded",
   * });
   * assert.deepEqual(builder.lastApiRetry, {
   *   attempt: 3,
   *   maxRetries: 10,
   *   status: 529,
   *   error: "overloaded",
   *   waitMs: 4800,
   * });
   * ```
   */
  get lastApiRetry(): ApiRetry | undefined {
    return this.#lastApiRetry;
  }

  /**
   * Where the session's credentials come from, as its `init` message says
   * (`ANTHROPIC_API_KEY`, `oauth`, ...): a login token can be refreshed, an
   * API key cannot.
   *
   * @returns The source, or undefined before the `init` message.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * builder.add({ type: "system", subtype: "init", apiKeySource: "ANTHROPIC_API_KEY" });
   * assert.equal(builder.apiKeySource, "ANTHROPIC_API_KEY");
   * ```
   */
  get apiKeySource(): string | undefined {
    return this.#apiKeySource;
  }

  /**
   * Close the summary.
   *
   * @param durationMs Wall time of the session.
   * @returns The summary.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { SummaryBuilder } from "./summary_builder.ts";
   *
   * const summary = new SummaryBuilder(1).finish(1234.6);
   * assert.equal(summary.durationMs, 1235);
   * ```
   */
  finish(durationMs: number): IterationSummary {
    this.#summary.durationMs = Math.round(durationMs);
    return this.#summary;
  }

  #assistant(message: AgentMessage): void {
    const summary = this.#summary;
    const sub = message.parent_tool_use_id !== null &&
      message.parent_tool_use_id !== undefined;
    const inner = message.message as { content?: unknown } | undefined;
    const content = Array.isArray(inner?.content) ? inner.content : [];
    for (const block of content as Array<Record<string, unknown>>) {
      if (block.type === "text" && typeof block.text === "string" && !sub) {
        summary.assistantResponses.push(block.text);
        summary.detectedActions.push(
          ...extractActions(block.text, this.#actions),
        );
      } else if (block.type === "tool_use" && typeof block.name === "string") {
        if (typeof block.id === "string") {
          this.#toolNames.set(block.id, block.name);
        }
        summary.toolsUsed.push(block.name);
        summary.toolCalls.push({ name: block.name, input: block.input });
        if (block.name === COMPLETE_TASK_TOOL && isRecord(block.input)) {
          summary.completeTask = block.input as unknown as CompleteTaskCall;
        }
      }
    }
    if (typeof message.error === "string" && message.error !== "") {
      this.#apiError = message.error;
      const text = content
        .map((block) => (block as Record<string, unknown>).text)
        .filter((text): text is string => typeof text === "string")
        .join(" ");
      summary.errors.push(
        `api ${message.error}${text ? `: ${text.slice(0, 300)}` : ""}`,
      );
    }
  }

  #user(message: AgentMessage): void {
    const inner = message.message as { content?: unknown } | undefined;
    if (!Array.isArray(inner?.content)) return;
    for (const block of inner.content as Array<Record<string, unknown>>) {
      if (block.type !== "tool_result" || block.is_error !== true) continue;
      const name = typeof block.tool_use_id === "string"
        ? this.#toolNames.get(block.tool_use_id) ?? "tool"
        : "tool";
      this.#summary.errors.push(
        `${name}: ${resultText(block.content).slice(0, 300)}`,
      );
    }
  }

  #result(message: AgentMessage): void {
    const summary = this.#summary;
    this.#sawResult = true;
    // One result per session; follow-up sessions of the same iteration (rescue,
    // status probes) add theirs.
    summary.costUsd += numberOr(message.total_cost_usd);
    summary.turns += numberOr(message.num_turns);
    const usage = isRecord(message.usage) ? message.usage : {};
    summary.tokens = {
      input: summary.tokens.input + numberOr(usage.input_tokens),
      output: summary.tokens.output + numberOr(usage.output_tokens),
      cacheRead: summary.tokens.cacheRead + numberOr(usage.cache_read_input_tokens),
      cacheCreation: summary.tokens.cacheCreation + numberOr(usage.cache_creation_input_tokens),
    };
    const subtype = typeof message.subtype === "string" ? message.subtype : "unknown";
    summary.stopReason = subtype === "success"
      ? (typeof message.stop_reason === "string" ? message.stop_reason : "end_turn")
      : subtype;
    if (subtype !== "success" || message.is_error === true) {
      const details = Array.isArray(message.errors)
        ? message.errors.map(String).join("; ")
        : typeof message.result === "string"
        ? message.result
        : "";
      summary.errors.push(
        `result ${subtype}${details ? `: ${details.slice(0, 300)}` : ""}`,
      );
    }
  }
}

function resultText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => isRecord(part) && typeof part.text === "string" ? part.text : "")
      .join(" ");
  }
  return "";
}

function numberOr(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) ? value : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
