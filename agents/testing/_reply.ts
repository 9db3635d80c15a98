/**
 * How a scripted turn becomes an HTTP response: after its delay, an API error, one
 * JSON message, an SSE stream, or a stream its fault breaks.
 *
 * @module
 */

import { faultyReply } from "./faults.ts";
import type { ScriptedTurn } from "./script.ts";
import { assistantMessage, SSE_HEADERS, sseEvents } from "./_sse.ts";

const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

/**
 * Answers a Messages API request with a scripted turn.
 *
 * @param turn The turn to send.
 * @param body The request body: its `model` is echoed, its `stream` chooses SSE.
 * @param options `signal` aborts when the server closes, cutting delays and hangs;
 *   `nextId` makes a fresh id from a prefix.
 * @returns The response.
 */
export async function replyTo(
  turn: ScriptedTurn,
  body: Record<string, unknown>,
  options: { signal: AbortSignal; nextId: (prefix: string) => string },
): Promise<Response> {
  // Only the server's own signal: a hanging stream learns of a client that left
  // through its cancel(), and a delayed reply to a client that left is harmless.
  const { signal, nextId } = options;
  if (turn.delayMs && !(await sleep(turn.delayMs, signal))) {
    return errorResponse(503, "The scripted server is closing");
  }
  const fault = turn.fault;
  if (fault?.kind === "http") {
    return errorResponse(
      fault.status,
      fault.message ?? `Scripted error ${fault.status}`,
      fault.headers,
    );
  }
  const model = typeof body.model === "string" ? body.model : "scripted";
  const message = assistantMessage(turn, { model, nextId });
  const stream = body.stream === true;
  if (fault) return faultyReply(fault, message, { stream, signal });
  if (!stream) return Response.json(message);
  return new Response(sseEvents(message).join(""), { headers: SSE_HEADERS });
}

/**
 * Builds an error reply in the Messages API's shape.
 *
 * @param status The HTTP status; it chooses the error type.
 * @param message The error message.
 * @param headers Extra response headers.
 * @returns The response.
 */
export function errorResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const type = ERROR_TYPES[status] ?? "api_error";
  return Response.json({ type: "error", error: { type, message } }, {
    status,
    headers,
  });
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
