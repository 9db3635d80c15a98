/**
 * Helpers for tests of the scripted server: requests shaped like Claude Code's, and
 * a strict reader of its SSE replies.
 *
 * @module
 */

import assert from "node:assert/strict";
import type { ScriptedModelServer } from "../../agents/testing/mod.ts";

/** One server-sent event: its name and its JSON data. */
export interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** A request body shaped like a main-loop request of Claude Code. */
export function mainBody(
  sessionId: string,
  messages: unknown[] = [{ role: "user", content: "Hi" }],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    model: "claude-test",
    messages,
    system: [{ type: "text", text: "You are a Claude agent." }],
    tools: [{ name: "Bash", input_schema: { type: "object" } }],
    metadata: {
      user_id: JSON.stringify({
        device_id: "d",
        account_uuid: "",
        session_id: sessionId,
      }),
    },
    max_tokens: 1000,
    stream: true,
    ...extra,
  };
}

/** Posts `body` as JSON to the server, with an API key to redact. */
export function post(
  server: ScriptedModelServer,
  body: unknown,
  options: { path?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${server.url}${options.path ?? "/v1/messages?beta=true"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-secret",
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
}

/** Parses an SSE body strictly: every frame is `event: NAME\ndata: JSON`. */
export function parseSse(text: string): SseEvent[] {
  assert.ok(text.endsWith("\n\n"), "the stream ends with a blank line");
  return text.slice(0, -2).split("\n\n").map((frame) => {
    const match = /^event: ([a-z_]+)\ndata: (.*)$/.exec(frame);
    assert.ok(match, `malformed SSE frame: ${JSON.stringify(frame)}`);
    const data = JSON.parse(match[2]);
    assert.equal(data.type, match[1], "the data type repeats the event name");
    return { event: match[1], data };
  });
}

/** Reads a 200 SSE reply into its events. */
export async function readSse(response: Response): Promise<SseEvent[]> {
  assert.equal(response.status, 200);
  assert.match(
    response.headers.get("content-type") ?? "",
    /^text\/event-stream/,
  );
  return parseSse(await response.text());
}

/** Rebuilds the assistant message from its stream, as the Anthropic SDK does. */
export function assemble(events: SseEvent[]): Record<string, unknown> {
  const start = events[0].data.message as Record<string, unknown>;
  const content: Record<string, unknown>[] = [];
  const json: string[] = [];
  let stopReason: unknown = null;
  let outputTokens: unknown;
  for (const { event, data } of events) {
    const index = data.index as number;
    const delta = data.delta as Record<string, unknown>;
    if (event === "content_block_start") {
      content[index] = { ...(data.content_block as Record<string, unknown>) };
      json[index] = "";
    } else if (event === "content_block_delta" && delta.type === "text_delta") {
      content[index].text += delta.text as string;
    } else if (
      event === "content_block_delta" && delta.type === "input_json_delta"
    ) {
      json[index] += delta.partial_json as string;
    } else if (
      event === "content_block_stop" && content[index].type === "tool_use"
    ) {
      content[index].input = JSON.parse(json[index]);
    } else if (event === "message_delta") {
      stopReason = delta.stop_reason;
      outputTokens = (data.usage as Record<string, unknown>).output_tokens;
    }
  }
  return {
    ...start,
    content,
    stop_reason: stopReason,
    output_tokens: outputTokens,
  };
}

/** Posts `body` and rebuilds the streamed reply. */
export async function replyOf(
  server: ScriptedModelServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  return assemble(await readSse(await post(server, body, { headers })));
}

/** Posts `body` and joins the text of the streamed reply. */
export async function replyText(
  server: ScriptedModelServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const message = await replyOf(server, body, headers);
  return (message.content as { text?: string }[]).map((block) => block.text ?? "").join("");
}

/** Resolves after `ms` milliseconds. */
export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
