/**
 * The script of a scripted model: what one reply holds, the steps of a session, what
 * a step can see of the request, and the builders {@linkcode textTurn} and
 * {@linkcode toolTurn}.
 *
 * @module
 */

import type { ScriptedFault } from "./fault_types.ts";

/** One `tool_use` block of a scripted reply. */
export interface ScriptedToolUse {
  /** The tool name, as Claude Code lists it (`Bash`, `Write`, `mcp__server__tool`). */
  name: string;
  /** The tool input; sent as JSON. */
  input: unknown;
  /**
   * The `tool_use` id; the matching `tool_result` carries it back.
   *
   * @default {"toolu_scripted_<server nonce>_<counter>"}, unique per server
   */
  id?: string;
  /**
   * The Responses API only: the namespace of the called function. Codex lists an
   * MCP server's tools in the namespace `mcp__<server>` and calls them by their bare
   * name in it.
   */
  namespace?: string;
}

/** Token counts reported for a scripted reply. */
export interface ScriptedUsage {
  /**
   * Input tokens, sent in `message_start`.
   *
   * @default {100}
   */
  input_tokens?: number;
  /**
   * Output tokens, sent in `message_delta`.
   *
   * @default {20}
   */
  output_tokens?: number;
}

/**
 * One scripted model reply: a text block, tool uses, or both (text first).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer, type ScriptedTurn } from "@finishline/agents/testing";
 *
 * const turn: ScriptedTurn = {
 *   text: "Creating the file.",
 *   toolUses: [{ name: "Bash", input: { command: "echo hi > out.txt" }, id: "toolu_1" }],
 * };
 * await using server = await ScriptedModelServer.start({ scripts: [[turn]] });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const message = await (await fetch(`${server.url}/v1/messages`, request)).json();
 * assert.equal(message.stop_reason, "tool_use");
 * assert.deepEqual(message.content, [
 *   { type: "text", text: "Creating the file." },
 *   { type: "tool_use", id: "toolu_1", name: "Bash", input: { command: "echo hi > out.txt" } },
 * ]);
 * ```
 */
export interface ScriptedTurn {
  /** A text block, sent before any tool use. */
  text?: string;
  /** `tool_use` blocks, in order. */
  toolUses?: ScriptedToolUse[];
  /**
   * The `stop_reason` of the reply.
   *
   * @default {"tool_use" when there are tool uses, else "end_turn"}
   */
  stopReason?: "end_turn" | "tool_use" | "max_tokens";
  /**
   * Milliseconds to wait before answering (before the headers are sent).
   *
   * @default {0}
   */
  delayMs?: number;
  /** Token counts to report. */
  usage?: ScriptedUsage;
  /**
   * Fail instead of (or part way through) sending the reply. A faulty turn still
   * uses up its place in the script, so the client's retry gets the next step.
   * Claude Code 2.1.330 retries after 429, 529 and 500 replies and after a reset,
   * and after malformed SSE it retries without streaming.
   */
  fault?: ScriptedFault;
}

/** Everything a function step can look at to decide its reply. */
export interface TurnContext {
  /** The Claude Code session id (`""` when the request carried none). */
  sessionId: string;
  /**
   * The session's arrival order on this server, from 0, counting sessions from
   * their first main-loop request; -1 for a session that asked only side requests.
   */
  sessionIndex: number;
  /** The step index in the session's script; -1 for side requests. */
  turnIndex: number;
  /** The request being answered. */
  request: RecordedRequest;
  /**
   * The text of the last user message: its text blocks and the contents of its
   * `tool_result` blocks, joined with newlines.
   */
  lastUserText: string;
}

/**
 * One step of a session script: a fixed reply, or a function that builds one from
 * the request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer, type ScriptStep } from "@finishline/agents/testing";
 *
 * const echo: ScriptStep = (ctx) => ({ text: `You said: ${ctx.lastUserText}` });
 * await using server = await ScriptedModelServer.start({ scripts: [[echo]] });
 * const response = await fetch(`${server.url}/v1/messages`, {
 *   method: "POST",
 *   body: JSON.stringify({
 *     tools: [{ name: "Bash" }],
 *     messages: [{ role: "user", content: "ping" }],
 *   }),
 * });
 * assert.equal((await response.json()).content[0].text, "You said: ping");
 * ```
 */
export type ScriptStep =
  | ScriptedTurn
  | ((ctx: TurnContext) => ScriptedTurn | Promise<ScriptedTurn>);

/**
 * The replies for one Claude Code session, one step per main-loop request.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   ScriptedModelServer,
 *   type SessionScript,
 *   textTurn,
 *   toolTurn,
 * } from "@finishline/agents/testing";
 *
 * const script: SessionScript = [toolTurn("Bash", { command: "ls" }), textTurn("Listed.")];
 * await using server = await ScriptedModelServer.start({ scripts: [script] });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const replies = [];
 * for (let turn = 0; turn < 3; turn++) {
 *   replies.push((await (await fetch(`${server.url}/v1/messages`, request)).json()).stop_reason);
 * }
 * // After the script, the fallback ("Done.") answers.
 * assert.deepEqual(replies, ["tool_use", "end_turn", "end_turn"]);
 * ```
 */
export type SessionScript = ScriptStep[];

/** What a function passed as `scripts` is told about a new session. */
export interface SessionContext {
  /** The Claude Code session id. */
  sessionId: string;
  /**
   * The session's arrival order on this server, from 0, counting sessions from
   * their first main-loop request; -1 for a session that asked only side requests.
   */
  sessionIndex: number;
  /** The session's first main-loop request. */
  request: RecordedRequest;
}

/** One request the server received, main-loop or side. */
export interface RecordedRequest {
  /** The Claude Code session id (`""` when the request carried none). */
  sessionId: string;
  /**
   * The session's arrival order on this server (see {@linkcode TurnContext.sessionIndex});
   * -1 when there is no session, or it asked only side requests.
   */
  sessionIndex: number;
  /** The step index in the session's script; -1 for side requests. */
  turnIndex: number;
  /** True for requests that do not advance the script. */
  side: boolean;
  /**
   * Set for the requests of finishline's verifier and reviewer sessions
   * ({@linkcode RoleScripts}): their `sessionIndex` is -1 and `turnIndex`
   * counts in their own script.
   */
  role?: "verifier" | "reviewer";
  /** The HTTP method. */
  method: string;
  /** The URL path, without the query (`/v1/messages`). */
  path: string;
  /** Request headers, lower case; `x-api-key` and `authorization` are redacted. */
  headers: Record<string, string>;
  /** The JSON body (`{}` when there was none). */
  body: Record<string, unknown>;
  /** When the request arrived, in milliseconds since the epoch. */
  receivedAt: number;
  /** Why the reply could not be built, when a function step threw. */
  error?: string;
}

/**
 * Builds a reply holding one text block.
 *
 * @param text The text of the reply.
 * @returns A turn that ends with `end_turn`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { textTurn } from "@finishline/agents/testing";
 *
 * assert.deepEqual(textTurn("Hi"), { text: "Hi" });
 * ```
 */
export function textTurn(text: string): ScriptedTurn {
  return { text };
}

/**
 * Builds a reply that calls one tool, optionally after a text block.
 *
 * @param name The tool name (`Bash`, `Write`, ...).
 * @param input The tool input.
 * @param text A text block to send before the tool use.
 * @returns A turn that ends with `tool_use`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { toolTurn } from "@finishline/agents/testing";
 *
 * assert.deepEqual(toolTurn("Bash", { command: "ls" }, "Looking around."), {
 *   text: "Looking around.",
 *   toolUses: [{ name: "Bash", input: { command: "ls" } }],
 * });
 * ```
 */
export function toolTurn(
  name: string,
  input: unknown,
  text?: string,
): ScriptedTurn {
  return text === undefined
    ? { toolUses: [{ name, input }] }
    : { text, toolUses: [{ name, input }] };
}
