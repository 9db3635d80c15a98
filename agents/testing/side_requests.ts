/**
 * The rule that tells a Claude Code main-loop request from a side request
 * (subagents, prompt suggestions, prompt hooks and other helper queries); only
 * main-loop requests advance a session's script.
 *
 * @module
 */

import { contentText, isRecord, systemText } from "./_request.ts";

/** The start of the user message Claude Code sends to fork a prompt suggestion. */
const SUGGESTION_MARKER = "[SUGGESTION MODE:";
/** The billing header flag Claude Code puts in a subagent's system prompt. */
const SUBAGENT_MARKER = "cc_is_subagent=true";

/**
 * Tells whether a Messages API request is a side request rather than a turn of the
 * session's main loop; side requests do not advance the session's script.
 *
 * Found by logging what Claude Code 2.1.330 (Agent SDK 0.3.330) sends. A request is
 * a side request when any of these holds:
 * - it has no tools (seen for prompt-type hooks; Claude Code's other one-shot
 *   helper queries are expected to look the same);
 * - it carries an `x-claude-code-agent-id` header or its system prompt holds
 *   `cc_is_subagent=true` (a subagent started by the Agent tool, which shares the
 *   session id);
 * - its last message is a user message starting with `[SUGGESTION MODE:` (the prompt
 *   suggestion fork, which carries the main loop's full tool list).
 *
 * @param body The JSON request body.
 * @param headers The request headers, lower case.
 * @returns True for side requests.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { isSideRequest } from "@finishline/agents/testing";
 *
 * const main = { tools: [{ name: "Bash" }], messages: [{ role: "user", content: "Hi" }] };
 * assert.equal(isSideRequest(main, {}), false);
 * assert.equal(isSideRequest({ ...main, tools: [] }, {}), true);
 * assert.equal(isSideRequest(main, { "x-claude-code-agent-id": "a1" }), true);
 * ```
 */
export function isSideRequest(
  body: Record<string, unknown>,
  headers: Record<string, string>,
): boolean {
  if (!Array.isArray(body.tools) || body.tools.length === 0) return true;
  if (headers["x-claude-code-agent-id"]) return true;
  if (systemText(body.system).includes(SUBAGENT_MARKER)) return true;
  const last = Array.isArray(body.messages) ? body.messages.at(-1) : undefined;
  return isRecord(last) && last.role === "user" &&
    contentText(last.content).trimStart().startsWith(SUGGESTION_MARKER);
}
