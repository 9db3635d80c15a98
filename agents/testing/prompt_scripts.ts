/**
 * Scripts chosen by what a session is asked, not by the order sessions
 * arrive: for several Claude Code processes talking to one server at once
 * (a fleet of runs), where arrival order is a race.
 *
 * @module
 */

import { contentText, isRecord } from "./_request.ts";
import type { SessionContext, SessionScript } from "./script.ts";

/**
 * A `scripts` function for {@linkcode ScriptedModelServer.start} that picks
 * each new session's script by the text of its first request's user
 * messages: the first key found in it names a list of scripts, used one per
 * session in order (a second session on the same key gets the second
 * script). A session whose text holds no key, or whose key's scripts are
 * used up, gets `fallback`.
 *
 * @param scripts Scripts by a text their prompt contains, in the order of sessions.
 * @param fallback The script of any other session.
 * @returns The function to pass as `scripts`.
 * @example Two sessions told apart by their prompts, whatever their order
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer, scriptsByPrompt, textTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: scriptsByPrompt({
 *     "issue #1:": [[textTurn("one")]],
 *     "issue #2:": [[textTurn("two")]],
 *   }),
 * });
 * const ask = async (session: string, prompt: string) => {
 *   const body = {
 *     metadata: { user_id: JSON.stringify({ session_id: session }) },
 *     tools: [{ name: "Bash" }],
 *     messages: [{ role: "user", content: prompt }],
 *   };
 *   const response = await fetch(`${server.url}/v1/messages`, { method: "POST", body: JSON.stringify(body) });
 *   return (await response.json()).content[0].text;
 * };
 * assert.equal(await ask("b", "Work on issue #2: the logout"), "two");
 * assert.equal(await ask("a", "Work on issue #1: the login"), "one");
 * ```
 */
export function scriptsByPrompt(
  scripts: Record<string, SessionScript[]>,
  fallback: SessionScript = [],
): (ctx: SessionContext) => SessionScript {
  const left = new Map(Object.entries(scripts).map(([key, list]) => [key, [...list]]));
  return (ctx) => {
    const text = userText(ctx.request.body);
    for (const [key, list] of left) {
      if (text.includes(key)) return list.shift() ?? fallback;
    }
    return fallback;
  };
}

/** The text of every user message of a request. */
function userText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return messages
    .filter((message) => isRecord(message) && message.role === "user")
    .map((message) => contentText((message as Record<string, unknown>).content))
    .join("\n");
}
