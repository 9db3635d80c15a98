/**
 * A local server that speaks the OpenAI Responses API (`POST /v1/responses`) and
 * the Chat Completions API (`POST /v1/chat/completions`), streaming or not, and
 * answers from the same scripts as `ScriptedModelServer`, so that real
 * non-Claude agents (Codex, opencode) can run offline in tests.
 *
 * @module
 */

import {
  chatChunks,
  lastInputText,
  type NextId,
  outputItems,
  responseEvents,
  type Usage,
} from "./_responses_sse.ts";
import { type RequestPlace, ScriptedApi, SSE_HEADERS } from "./_scripted_api_server.ts";
import type { RoleScripts } from "./roles.ts";
import type { RecordedRequest, ScriptedTurn, ScriptStep, SessionScript } from "./script.ts";

/** Options of {@linkcode ScriptedResponsesServer.start}. */
export interface ScriptedResponsesServerOptions {
  /**
   * Scripts by session arrival order (0 = first session seen). Sessions are told
   * apart by the `session-id` header (Codex 0.169 sends it; `session_id` also counts), the
   * `x-session-id` header (opencode 1.18 sends it), else
   * the body's `prompt_cache_key`, else they all share the session `""`.
   *
   * @default {[]}
   */
  scripts?: SessionScript[];
  /**
   * Scripts of finishline's verifier and reviewer sessions, told by their
   * system prompt; they take no index among the sessions of `scripts`.
   *
   * @default {{}} (the verifier writes no test; the reviewer accepts every declaration)
   */
  roles?: RoleScripts;
  /**
   * The reply once a session's script is exhausted.
   *
   * @default {textTurn("Done.")}
   */
  fallback?: ScriptStep;
  /**
   * Tells side requests, which get `sideReply` and do not advance the script, from
   * main-loop ones. opencode 1.18 asks for a session title with a request that has
   * no `tools`: `(body) => !Array.isArray(body.tools)` tells it apart.
   *
   * @default {() => false}
   */
  isSideRequest?: (body: Record<string, unknown>, headers: Record<string, string>) => boolean;
  /**
   * The reply to side requests.
   *
   * @default {textTurn("OK.")}
   */
  sideReply?: ScriptStep;
  /**
   * The port to listen on; 0 picks a free one.
   *
   * @default {0}
   */
  port?: number;
}

/**
 * A local OpenAI-compatible model server that answers from per-session scripts.
 *
 * A turn's text becomes an assistant `message` output item (or `content` in Chat
 * Completions), and each tool use a `function_call` item (a `tool_calls` entry)
 * whose `arguments` are the JSON of its input. Codex 0.169's shell tool is the
 * function `exec_command` with `{ "cmd": "..." }`. A turn's `delayMs` and `usage`
 * apply; of the faults only `http` is supported (others answer 400).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedResponsesServer, toolTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedResponsesServer.start({
 *   scripts: [[toolTurn("exec_command", { cmd: "ls" })]],
 * });
 * const response = await fetch(`${server.url}/v1/responses`, {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", input: "list files", stream: false }),
 * });
 * const body = await response.json();
 * assert.equal(body.output[0].type, "function_call");
 * assert.equal(body.output[0].name, "exec_command");
 * assert.equal(server.requests.length, 1);
 * ```
 */
export class ScriptedResponsesServer implements AsyncDisposable {
  /** The base URL, `http://HOST:PORT`; the API lives under `/v1`. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];

  #api: ScriptedApi<"responses" | "chat">;
  #options: ScriptedResponsesServerOptions;
  #sessions = new Map<string, { index: number; nextTurn: number }>();

  private constructor(options: ScriptedResponsesServerOptions) {
    this.#options = options;
    this.#api = new ScriptedApi(options.port, {
      steps: options,
      sideReply: SIDE_REPLY,
      error: apiError,
      route: routeOf,
      place: (body, headers, isModel) => this.#place(body, headers, isModel),
      lastUserText: lastInputText,
      reply: (turn, body, api) =>
        api === "responses" ? this.#responses(turn, body) : this.#chat(turn, body),
    });
    this.url = this.#api.listener.url;
    this.requests = this.#api.requests;
  }

  /**
   * Starts a server listening on a free local port.
   *
   * @param options Scripts, fallback, port.
   * @returns The running server; close it (or use `await using`).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedResponsesServer } from "@finishline/agents/testing";
   *
   * await using server = await ScriptedResponsesServer.start();
   * assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
   * ```
   */
  static start(
    options: ScriptedResponsesServerOptions = {},
  ): Promise<ScriptedResponsesServer> {
    return Promise.resolve(new ScriptedResponsesServer(options));
  }

  /**
   * Lists the distinct session ids seen, in arrival order (index = `sessionIndex`).
   *
   * @returns The session ids.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedResponsesServer } from "@finishline/agents/testing";
   *
   * await using server = await ScriptedResponsesServer.start();
   * await (await fetch(`${server.url}/v1/responses`, {
   *   method: "POST",
   *   headers: { "session-id": "s-1" },
   *   body: JSON.stringify({ input: "hi", stream: false }),
   * })).body?.cancel();
   * assert.deepEqual(server.sessionIds(), ["s-1"]);
   * ```
   */
  sessionIds(): string[] {
    return [...this.#sessions.keys()];
  }

  /**
   * Stops the server.
   *
   * @returns Resolves once the server has stopped; calling it again is harmless.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedResponsesServer } from "@finishline/agents/testing";
   *
   * const server = await ScriptedResponsesServer.start();
   * await server.close();
   * await assert.rejects(fetch(`${server.url}/v1/responses`, { method: "POST", body: "{}" }));
   * ```
   */
  close(): Promise<void> {
    return this.#api.listener.close();
  }

  /**
   * Closes the server, for `await using`.
   *
   * @returns Resolves once the server has stopped.
   *
   * @example
   * ```ts
   * import { ScriptedResponsesServer } from "@finishline/agents/testing";
   *
   * await using _server = await ScriptedResponsesServer.start();
   * ```
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #place(
    body: Record<string, unknown>,
    headers: Record<string, string>,
    isModel: boolean,
  ): RequestPlace {
    const sessionId = headers["session-id"] ?? headers["session_id"] ?? headers["x-session-id"] ??
      (typeof body.prompt_cache_key === "string" ? body.prompt_cache_key : "");
    let session = this.#sessions.get(sessionId);
    if (isModel && !session) {
      session = { index: this.#sessions.size, nextTurn: 0 };
      this.#sessions.set(sessionId, session);
    }
    const side = !isModel || (this.#options.isSideRequest?.(body, headers) ?? false);
    return {
      sessionId,
      sessionIndex: session?.index ?? -1,
      turnIndex: !side && session ? session.nextTurn++ : -1,
      side,
    };
  }

  #responses(turn: ScriptedTurn, body: Record<string, unknown>): Response {
    const usage = usageOf(turn);
    const response = {
      id: this.#nextId("resp"),
      object: "response",
      created_at: Math.floor(Date.now() / 1000),
      status: "completed",
      model: typeof body.model === "string" ? body.model : "scripted",
      output: outputItems(turn, this.#nextId),
      usage: {
        input_tokens: usage.input_tokens,
        input_tokens_details: { cached_tokens: 0 },
        output_tokens: usage.output_tokens,
        output_tokens_details: { reasoning_tokens: 0 },
        total_tokens: usage.input_tokens + usage.output_tokens,
      },
    };
    if (body.stream === false) return Response.json(response);
    return new Response(responseEvents(response), { headers: SSE_HEADERS });
  }

  #chat(turn: ScriptedTurn, body: Record<string, unknown>): Response {
    const model = typeof body.model === "string" ? body.model : "scripted";
    const id = this.#nextId("chatcmpl");
    if (body.stream === true) {
      const text = chatChunks(turn, { model, id, nextId: this.#nextId, usage: usageOf(turn) });
      return new Response(text, { headers: SSE_HEADERS });
    }
    return Response.json(chatCompletion(turn, { model, id, nextId: this.#nextId }));
  }

  #nextId: NextId = (prefix) => this.#api.listener.nextId(prefix);
}

function chatCompletion(
  turn: ScriptedTurn,
  options: { model: string; id: string; nextId: NextId },
): Record<string, unknown> {
  const usage = usageOf(turn);
  const toolCalls = (turn.toolUses ?? []).map((use) => ({
    id: use.id ?? options.nextId("call"),
    type: "function",
    function: { name: use.name, arguments: JSON.stringify(use.input ?? {}) },
  }));
  return {
    id: options.id,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: options.model,
    choices: [{
      index: 0,
      message: {
        role: "assistant",
        content: turn.text ?? null,
        ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
      },
      finish_reason: toolCalls.length ? "tool_calls" : "stop",
    }],
    usage: {
      prompt_tokens: usage.input_tokens,
      completion_tokens: usage.output_tokens,
      total_tokens: usage.input_tokens + usage.output_tokens,
    },
  };
}

function usageOf(turn: ScriptedTurn): Usage {
  return {
    input_tokens: turn.usage?.input_tokens ?? 100,
    output_tokens: turn.usage?.output_tokens ?? 20,
  };
}

function apiError(status: number, message: string): Response {
  return Response.json({ error: { message, type: "invalid_request_error", code: null } }, {
    status,
  });
}

/** Answers model lists at once; tells which API a POST is for. */
function routeOf(method: string, path: string): Response | "responses" | "chat" | undefined {
  if (method === "GET" && path.endsWith("/models")) {
    return Response.json({ object: "list", data: [] });
  }
  return method === "POST" ? API_OF[path.replace(/^\/v1/, "")] : undefined;
}

const API_OF: Record<string, "responses" | "chat"> = {
  "/responses": "responses",
  "/chat/completions": "chat",
};

const SIDE_REPLY: ScriptedTurn = { text: "OK." };
