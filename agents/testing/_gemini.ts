/**
 * A scripted turn as Gemini API `GenerateContentResponse` chunks, and the parts
 * of a `generateContent` request the scripted Gemini server looks at. Private
 * to `agents/testing/`.
 *
 * @module
 */

import { isRecord } from "./_request.ts";
import type { ScriptedTurn } from "./script.ts";

/** Token counts of a reply. */
export interface GeminiUsage {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
}

/**
 * Builds the `GenerateContentResponse` of a turn: its text part first, then one
 * `functionCall` part per tool use.
 *
 * @param turn The scripted turn.
 * @param options The model version to report and the usage.
 * @returns The response object.
 */
export function geminiResponse(
  turn: ScriptedTurn,
  options: { model: string; usage: GeminiUsage; responseId: string },
): Record<string, unknown> {
  const parts: Record<string, unknown>[] = [];
  if (turn.text !== undefined) parts.push({ text: turn.text });
  for (const use of turn.toolUses ?? []) {
    parts.push({
      functionCall: { ...(use.id ? { id: use.id } : {}), name: use.name, args: use.input ?? {} },
    });
  }
  return {
    candidates: [{
      content: { role: "model", parts },
      finishReason: turn.stopReason === "max_tokens" ? "MAX_TOKENS" : "STOP",
      index: 0,
    }],
    usageMetadata: options.usage,
    modelVersion: options.model,
    responseId: options.responseId,
  };
}

/**
 * Encodes a response as the server-sent events of `streamGenerateContent?alt=sse`:
 * one `data:` event holding the whole response, as the API ends each event with
 * CRLF CRLF.
 *
 * @param response The response object.
 * @returns The SSE text.
 */
export function geminiEvents(response: Record<string, unknown>): string {
  return `data: ${JSON.stringify(response)}\r\n\r\n`;
}

/**
 * The text of the last user turn of a Gemini request: the `text` parts and the
 * `functionResponse.response` of the trailing `user` contents, joined with
 * newlines (a response is its `output` when that is a string, else its JSON).
 *
 * @param body The request body.
 * @returns The text.
 */
export function lastContentsText(body: Record<string, unknown>): string {
  const contents = Array.isArray(body.contents) ? body.contents : [];
  const texts: string[] = [];
  for (let i = contents.length - 1; i >= 0; i--) {
    const content = contents[i];
    if (!isRecord(content) || content.role === "model") break;
    texts.unshift(partsText(content.parts));
  }
  return texts.filter((text) => text !== "").join("\n");
}

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return "";
  return parts.map((part) => {
    if (!isRecord(part)) return "";
    if (typeof part.text === "string") return part.text;
    const call = part.functionResponse;
    if (!isRecord(call)) return "";
    const response = call.response;
    if (isRecord(response) && typeof response.output === "string") return response.output;
    return JSON.stringify(response ?? "");
  }).filter((text) => text !== "").join("\n");
}

/**
 * Whether a Gemini request is one of Gemini CLI's helper calls rather than a
 * turn of the main loop: it offers no tools, or asks for JSON output
 * (`responseJsonSchema`, `responseSchema` or `responseMimeType:
 * application/json`), as the model router, next-speaker check, loop detection
 * and history compression do.
 *
 * @param body The request body.
 * @returns True for a side request.
 */
export function isGeminiSideRequest(body: Record<string, unknown>): boolean {
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const declared = tools.some((tool) =>
    isRecord(tool) && Array.isArray(tool.functionDeclarations) &&
    tool.functionDeclarations.length > 0
  );
  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const json = config.responseJsonSchema !== undefined || config.responseSchema !== undefined ||
    config.responseMimeType === "application/json";
  return !declared || json;
}
