/**
 * The faults a scripted reply can carry, as types: an HTTP error, a reset, a
 * malformed stream, a hang. The replies that play them out are in
 * `faults.ts`.
 *
 * @module
 */

/**
 * A scripted HTTP error reply in the API's error shape, such as 429
 * (`rate_limit_error`), 529 (`overloaded_error`) or 500 (`api_error`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer, textTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ fault: { kind: "http", status: 529 } }, textTurn("Back again")]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const first = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal(first.status, 529);
 * assert.equal((await first.json()).error.type, "overloaded_error");
 * // The fault used up its step, so the retry gets the next one.
 * const retry = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal((await retry.json()).content[0].text, "Back again");
 * ```
 */
export interface HttpFault {
  /** Discriminant. */
  kind: "http";
  /** The HTTP status. */
  status: number;
  /**
   * The error message.
   *
   * @default {"Scripted error <status>"}
   */
  message?: string;
  /** Extra response headers, such as `retry-after` or `x-should-retry`. */
  headers?: Record<string, string>;
}

/**
 * A streamed reply that breaks off: the first `afterEvents` SSE events are sent,
 * then the connection is dropped. A non-streaming request gets no body at all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ text: "Hello", fault: { kind: "reset", afterEvents: 2 } }]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ stream: true, tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const response = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal(response.status, 200);
 * await assert.rejects(response.text());
 * ```
 */
export interface ResetFault {
  /** Discriminant. */
  kind: "reset";
  /**
   * How many SSE events to send before the connection drops.
   *
   * @default {0}
   */
  afterEvents?: number;
}

/**
 * A streamed reply whose event data is not valid JSON: the first `afterEvents`
 * events are sent, then a broken `content_block_delta`, then the stream ends. A
 * non-streaming request gets the first half of its JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ text: "Hello", fault: { kind: "malformed", afterEvents: 1 } }]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ stream: true, tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const text = await (await fetch(`${server.url}/v1/messages`, request)).text();
 * assert.ok(text.startsWith("event: message_start\n"));
 * assert.ok(text.endsWith('data: {"type":"content_block_delta","index":\n\n'));
 * ```
 */
export interface MalformedFault {
  /** Discriminant. */
  kind: "malformed";
  /**
   * How many well-formed SSE events to send before the broken one.
   *
   * @default {0}
   */
  afterEvents?: number;
}

/**
 * A reply that never ends: the first `afterEvents` SSE events are sent, then the
 * stream stays open until the client gives up or the server closes. A
 * non-streaming request gets headers and no body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ fault: { kind: "hang", afterEvents: 1 } }]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ stream: true, tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const response = await fetch(`${server.url}/v1/messages`, {
 *   ...request,
 *   signal: AbortSignal.timeout(200),
 * });
 * const reader = response.body!.getReader();
 * assert.equal((await reader.read()).done, false);
 * // Nothing follows the first event; the client's timeout ends the wait.
 * await assert.rejects(reader.read());
 * ```
 */
export interface HangFault {
  /** Discriminant. */
  kind: "hang";
  /**
   * How many SSE events to send before the stream stalls.
   *
   * @default {0}
   */
  afterEvents?: number;
}

/**
 * A way for a scripted reply to fail, for testing retries and error handling.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ScriptedFault, ScriptedModelServer } from "@finishline/agents/testing";
 *
 * const fault: ScriptedFault = { kind: "http", status: 429, headers: { "retry-after": "0" } };
 * await using server = await ScriptedModelServer.start({ scripts: [[{ fault }]] });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const response = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal(response.status, 429);
 * assert.equal(response.headers.get("retry-after"), "0");
 * assert.equal((await response.json()).error.type, "rate_limit_error");
 * ```
 */
export type ScriptedFault = HttpFault | ResetFault | MalformedFault | HangFault;

/** A fault that breaks a reply's body rather than its status. */
export type StreamFault = ResetFault | MalformedFault | HangFault;
