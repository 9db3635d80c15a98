/**
 * The assistant message a scripted turn becomes, and its encoding as the Messages
 * API's server-sent events: `message_start`, then `content_block_start`,
 * `content_block_delta` and `content_block_stop` for each block, then
 * `message_delta` and `message_stop`.
 *
 * @module
 */

import type { ScriptedTurn } from "./script.ts";

/** One content block of an assistant message. */
export type ContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

/** An assistant message as the Messages API returns it. */
export interface AssistantMessage {
  id: string;
  type: "message";
  role: "assistant";
  model: string;
  content: ContentBlock[];
  stop_reason: string;
  stop_sequence: null;
  usage: {
    input_tokens: number;
    output_tokens: number;
    cache_creation_input_tokens: number;
    cache_read_input_tokens: number;
  };
}

/** The headers of a streamed reply. */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

/**
 * Builds the assistant message of a turn: its text block first, then its tool uses.
 *
 * @param turn The scripted turn.
 * @param options `model` to echo; `nextId` makes a fresh id from a prefix (`toolu`,
 *   `msg`), called for each tool use without an id, then for the message.
 * @returns The message.
 */
export function assistantMessage(
  turn: ScriptedTurn,
  options: { model: string; nextId: (prefix: string) => string },
): AssistantMessage {
  const content: ContentBlock[] = [];
  if (turn.text !== undefined) {
    content.push({ type: "text", text: turn.text });
  }
  for (const use of turn.toolUses ?? []) {
    content.push({
      type: "tool_use",
      id: use.id ?? options.nextId("toolu"),
      name: use.name,
      input: use.input ?? {},
    });
  }
  return {
    id: options.nextId("msg"),
    type: "message",
    role: "assistant",
    model: options.model,
    content,
    stop_reason: turn.stopReason ??
      (turn.toolUses?.length ? "tool_use" : "end_turn"),
    stop_sequence: null,
    usage: {
      input_tokens: turn.usage?.input_tokens ?? 100,
      output_tokens: turn.usage?.output_tokens ?? 20,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    },
  };
}

/**
 * Encodes a message as SSE frames, one string per event.
 *
 * @param message The message to stream.
 * @returns The frames, each `event: NAME\ndata: JSON\n\n`.
 */
export function sseEvents(message: AssistantMessage): string[] {
  const events = [
    sseEvent("message_start", {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...message.usage, output_tokens: 0 },
      },
    }),
  ];
  message.content.forEach((block, index) => events.push(...blockEvents(block, index)));
  events.push(sseEvent("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  }));
  events.push(sseEvent("message_stop", {}));
  return events;
}

/** The start, one delta and the stop of one content block. */
function blockEvents(block: ContentBlock, index: number): string[] {
  const [start, delta] = block.type === "text"
    ? [{ type: "text", text: "" }, { type: "text_delta", text: block.text }]
    : [{ ...block, input: {} }, {
      type: "input_json_delta",
      partial_json: JSON.stringify(block.input),
    }];
  return [
    sseEvent("content_block_start", { index, content_block: start }),
    sseEvent("content_block_delta", { index, delta }),
    sseEvent("content_block_stop", { index }),
  ];
}

function sseEvent(name: string, data: Record<string, unknown>): string {
  return `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
}
