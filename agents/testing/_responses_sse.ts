/**
 * A scripted turn as OpenAI Responses API output items, and its encoding as that
 * API's server-sent events, plus the Chat Completions streaming chunks.
 *
 * @module
 */

import { isRecord } from "./_request.ts";
import type { ScriptedTurn } from "./script.ts";

/** One output item of a response. */
export type OutputItem =
  | {
    type: "message";
    id: string;
    role: "assistant";
    status: "completed";
    content: { type: "output_text"; text: string; annotations: [] }[];
  }
  | {
    type: "function_call";
    id: string;
    call_id: string;
    name: string;
    namespace?: string;
    arguments: string;
    status: "completed";
  };

/** Makes a fresh id from a prefix. */
export type NextId = (prefix: string) => string;

/**
 * Builds the output items of a turn: its message first, then its function calls.
 *
 * @param turn The scripted turn.
 * @param nextId Makes fresh ids.
 * @returns The items.
 */
export function outputItems(turn: ScriptedTurn, nextId: NextId): OutputItem[] {
  const items: OutputItem[] = [];
  if (turn.text !== undefined) {
    items.push({
      type: "message",
      id: nextId("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    });
  }
  for (const use of turn.toolUses ?? []) {
    items.push({
      type: "function_call",
      id: nextId("fc"),
      call_id: use.id ?? nextId("call"),
      name: use.name,
      ...(use.namespace ? { namespace: use.namespace } : {}),
      arguments: JSON.stringify(use.input ?? {}),
      status: "completed",
    });
  }
  return items;
}

/**
 * Encodes a response as Responses API events, in the order the API streams them.
 *
 * @param response The completed response object (`id`, `model`, `output`, `usage`).
 * @returns The SSE text.
 */
export function responseEvents(response: Record<string, unknown>): string {
  const output = response.output as OutputItem[];
  const events: Record<string, unknown>[] = [];
  const inProgress = { ...response, status: "in_progress", output: [] };
  events.push({ type: "response.created", response: inProgress });
  events.push({ type: "response.in_progress", response: inProgress });
  output.forEach((item, index) => events.push(...itemEvents(item, index)));
  events.push({ type: "response.completed", response });
  return events.map((event, sequence) =>
    `event: ${event.type}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`
  ).join("");
}

function itemEvents(item: OutputItem, index: number): Record<string, unknown>[] {
  const base = { output_index: index, item_id: item.id };
  if (item.type === "message") {
    const text = item.content[0].text;
    const part = { type: "output_text", text: "", annotations: [] };
    return [
      { type: "response.output_item.added", output_index: index, item: { ...item, content: [] } },
      { type: "response.content_part.added", ...base, content_index: 0, part },
      { type: "response.output_text.delta", ...base, content_index: 0, delta: text },
      { type: "response.output_text.done", ...base, content_index: 0, text },
      { type: "response.content_part.done", ...base, content_index: 0, part: item.content[0] },
      { type: "response.output_item.done", output_index: index, item },
    ];
  }
  return [
    { type: "response.output_item.added", output_index: index, item: { ...item, arguments: "" } },
    { type: "response.function_call_arguments.delta", ...base, delta: item.arguments },
    { type: "response.function_call_arguments.done", ...base, arguments: item.arguments },
    { type: "response.output_item.done", output_index: index, item },
  ];
}

/**
 * Encodes a turn as Chat Completions streaming chunks (`data: {...}` lines, then
 * `data: [DONE]`).
 *
 * @param turn The scripted turn.
 * @param options `model`, `id`, the usage to report, and `nextId` for call ids.
 * @returns The SSE text.
 */
export function chatChunks(
  turn: ScriptedTurn,
  options: { model: string; id: string; nextId: NextId; usage: Usage },
): string {
  const chunk = (delta: unknown, finish: string | null, extra = {}) => ({
    id: options.id,
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: options.model,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  });
  const chunks: unknown[] = [chunk({ role: "assistant", content: "" }, null)];
  if (turn.text !== undefined) chunks.push(chunk({ content: turn.text }, null));
  (turn.toolUses ?? []).forEach((use, index) =>
    chunks.push(chunk({
      tool_calls: [{
        index,
        id: use.id ?? options.nextId("call"),
        type: "function",
        function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) },
      }],
    }, null))
  );
  const finish = turn.toolUses?.length ? "tool_calls" : "stop";
  chunks.push(chunk({}, finish, {
    usage: {
      prompt_tokens: options.usage.input_tokens,
      completion_tokens: options.usage.output_tokens,
      total_tokens: options.usage.input_tokens + options.usage.output_tokens,
    },
  }));
  return chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join("") + "data: [DONE]\n\n";
}

/** Token counts of a reply. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

/**
 * The text of the last user turn of a Responses or Chat Completions request: its
 * text parts and the outputs of the function calls after the last assistant item.
 *
 * @param body The request body.
 * @returns The text, joined with newlines.
 */
export function lastInputText(body: Record<string, unknown>): string {
  const items = Array.isArray(body.input)
    ? body.input
    : Array.isArray(body.messages)
    ? body.messages
    : typeof body.input === "string"
    ? [{ role: "user", content: body.input }]
    : [];
  const texts: string[] = [];
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i];
    if (!isRecord(item) || item.role === "assistant" || item.type === "function_call") break;
    if (item.role === "system" || item.role === "developer") continue;
    texts.unshift(itemText(item));
  }
  return texts.filter((t) => t !== "").join("\n");
}

function itemText(item: Record<string, unknown>): string {
  if (typeof item.output === "string") return item.output;
  if (typeof item.content === "string") return item.content;
  if (!Array.isArray(item.content)) return "";
  return item.content
    .map((part) => isRecord(part) && typeof part.text === "string" ? part.text : "")
    .filter((t) => t !== "")
    .join("\n");
}
