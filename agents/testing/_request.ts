/**
 * Reading a Messages API request: its JSON body, the text of its messages, its
 * session id and its headers. Private to `agents/testing/`.
 *
 * @module
 */

/**
 * Reads the JSON body of a POST request; other requests, and bodies that are not
 * objects, read as `{}`.
 *
 * @throws {SyntaxError} When the body is not JSON.
 */
export async function readBody(request: Request): Promise<Record<string, unknown>> {
  if (request.method !== "POST") return {};
  const parsed: unknown = await request.json();
  return isRecord(parsed) ? parsed : {};
}

/** The Claude Code session id of a request, `""` when it carries none. */
export function sessionIdOf(
  body: Record<string, unknown>,
  headers: Record<string, string>,
): string {
  const metadata = body.metadata;
  if (isRecord(metadata) && typeof metadata.user_id === "string") {
    try {
      const user: unknown = JSON.parse(metadata.user_id);
      if (
        isRecord(user) && typeof user.session_id === "string" && user.session_id
      ) {
        return user.session_id;
      }
    } catch {
      // Not JSON: older clients sent a plain string; fall through to the header.
    }
  }
  return headers["x-claude-code-session-id"] ?? "";
}

/** The text of the last user message: text blocks and tool results, joined. */
export function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.findLast((message) => isRecord(message) && message.role === "user");
  return isRecord(last) ? contentText(last.content) : "";
}

/** Text of a message content: text blocks and tool_result contents, joined. */
export function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content) {
    if (!isRecord(block)) continue;
    if (block.type === "text" && typeof block.text === "string") {
      parts.push(block.text);
    }
    if (block.type === "tool_result") parts.push(contentText(block.content));
  }
  return parts.filter((part) => part !== "").join("\n");
}

/** The text of a system prompt, a string or text blocks. */
export function systemText(system: unknown): string {
  return typeof system === "string" ? system : contentText(system);
}

const SECRET_HEADERS = new Set(["x-api-key", "x-goog-api-key", "authorization"]);

/** The request headers, with the keys (`x-api-key`, `x-goog-api-key`, `authorization`) redacted. */
export function recordHeaders(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, value] of headers) {
    record[name] = SECRET_HEADERS.has(name) ? "[redacted]" : value;
  }
  return record;
}

/** Tells a plain JSON object from arrays, null and primitives. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
