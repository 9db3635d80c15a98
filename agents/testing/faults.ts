/**
 * Faults a scripted reply can carry (an HTTP error, a reset, malformed SSE, a hang)
 * and the response bodies that play them out, for testing retries and error handling.
 *
 * @module
 */

import { type AssistantMessage, SSE_HEADERS, sseEvents } from "./_sse.ts";

export type {
  HangFault,
  HttpFault,
  MalformedFault,
  ResetFault,
  ScriptedFault,
  StreamFault,
} from "./fault_types.ts";
import type { StreamFault } from "./fault_types.ts";

/** The error that cuts a faulty reply's connection. */
export class ScriptedCut extends Error {}

const JSON_HEADERS = { "content-type": "application/json" };
/** The frame a malformed stream ends with: its data breaks off mid-JSON. */
const MALFORMED_EVENT =
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":\n\n';

/**
 * Builds a 200 reply to `message` that `fault` breaks part way through.
 *
 * @param fault The fault to play out.
 * @param message The reply the fault breaks.
 * @param options `stream` for an SSE reply, else JSON; `signal` ends a hang.
 * @returns The faulty response.
 */
export function faultyReply(
  fault: StreamFault,
  message: AssistantMessage,
  options: { stream: boolean; signal: AbortSignal },
): Response {
  if (!options.stream) {
    const json = JSON.stringify(message);
    const sent = fault.kind === "malformed" ? [json.slice(0, json.length >> 1)] : [];
    return new Response(faultStream(sent, fault.kind, options.signal), {
      headers: JSON_HEADERS,
    });
  }
  const sent = sseEvents(message).slice(0, fault.afterEvents ?? 0);
  if (fault.kind === "malformed") sent.push(MALFORMED_EVENT);
  return new Response(faultStream(sent, fault.kind, options.signal), {
    headers: SSE_HEADERS,
  });
}

/** A body that sends `chunks` one by one, then ends as the fault asks. */
function faultStream(
  chunks: string[],
  kind: "reset" | "malformed" | "hang",
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  let stop: (() => void) | undefined;
  return new ReadableStream<Uint8Array>({
    // pull, not start: an error discards chunks still queued, so each chunk must be
    // read by the server before the next step decides to cut the connection.
    async pull(controller) {
      if (next < chunks.length) {
        controller.enqueue(encoder.encode(chunks[next++]));
        return;
      }
      if (kind === "malformed") return controller.close();
      if (kind === "hang" && !signal.aborted) {
        await new Promise<void>((resolve) => {
          stop = resolve;
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
      controller.error(
        new ScriptedCut(
          `Scripted ${kind === "hang" ? "hang ended" : "connection reset"}`,
        ),
      );
    },
    cancel() {
      stop?.();
    },
  });
}
