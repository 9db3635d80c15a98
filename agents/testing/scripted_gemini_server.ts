/**
 * A local server that speaks the Gemini API (`generateContent` and
 * `streamGenerateContent` under `/v1beta/models/`) and answers from the same
 * scripts as `ScriptedModelServer`, so that the real Gemini CLI can run offline
 * in tests (`GOOGLE_GEMINI_BASE_URL` pointing at it).
 *
 * @module
 */

import { geminiEvents, geminiResponse, isGeminiSideRequest, lastContentsText } from "./_gemini.ts";
import { type RequestPlace, ScriptedApi, SSE_HEADERS } from "./_scripted_api_server.ts";
import type { RoleScripts } from "./roles.ts";
import type { RecordedRequest, ScriptedTurn, ScriptStep, SessionScript } from "./script.ts";

/** Options of {@linkcode ScriptedGeminiServer.start}. */
export interface ScriptedGeminiServerOptions {
  /**
   * Scripts by session arrival order (0 = first session seen). The Gemini API
   * carries no session id (Gemini CLI 0.61 sends none), so sessions are told
   * apart by their history: a main request whose `contents` hold one entry
   * starts a new session; a longer one continues the latest session that began
   * with the same first entry and has sent fewer entries so far. Sessions are
   * named `gemini-1`, `gemini-2`, ... in arrival order.
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
   * Tells side requests, which get `sideReply` and belong to no session, from
   * main-loop ones. The default takes a request for a side request when it
   * declares no functions or asks for JSON output (`responseJsonSchema`,
   * `responseSchema`, `responseMimeType: "application/json"`): Gemini CLI 0.61's
   * model router, next-speaker check, loop detection and history compression.
   *
   * @default {a request without function declarations or asking for JSON}
   */
  isSideRequest?: (body: Record<string, unknown>, headers: Record<string, string>) => boolean;
  /**
   * The reply to side requests. Gemini CLI parses the text of a JSON side
   * request as JSON and falls back to its defaults when it cannot.
   *
   * @default {textTurn("{}")}
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
 * A local Gemini API server that answers from per-session scripts.
 *
 * A turn's text becomes a `text` part of the candidate's content and each tool
 * use a `functionCall` part (`{ name, args }`, with `id` when the tool use has
 * one). `streamGenerateContent?alt=sse` sends the response as one SSE event;
 * `generateContent` sends it as JSON; `countTokens` answers a rough count.
 * Gemini CLI 0.61's shell tool is the function `run_shell_command` with
 * `{ "command": "..." }`, and it names an MCP tool `mcp_<server>_<tool>`. A
 * turn's `delayMs` and `usage` apply; of the faults only `http` is supported
 * (others answer 400).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedGeminiServer, toolTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedGeminiServer.start({
 *   scripts: [[toolTurn("run_shell_command", { command: "ls" })]],
 * });
 * const response = await fetch(`${server.url}/v1beta/models/m:generateContent`, {
 *   method: "POST",
 *   body: JSON.stringify({
 *     contents: [{ role: "user", parts: [{ text: "list files" }] }],
 *     tools: [{ functionDeclarations: [{ name: "run_shell_command" }] }],
 *   }),
 * });
 * const body = await response.json();
 * assert.deepEqual(body.candidates[0].content.parts, [
 *   { functionCall: { name: "run_shell_command", args: { command: "ls" } } },
 * ]);
 * assert.equal(server.requests[0].turnIndex, 0);
 * ```
 */
export class ScriptedGeminiServer implements AsyncDisposable {
  /** The base URL, `http://HOST:PORT`; the API lives under `/v1beta`. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];

  #api: ScriptedApi<GeminiRoute>;
  #options: ScriptedGeminiServerOptions;
  #sessions: GeminiSession[] = [];

  private constructor(options: ScriptedGeminiServerOptions) {
    this.#options = options;
    this.#api = new ScriptedApi(options.port, {
      steps: options,
      sideReply: SIDE_REPLY,
      error: apiError,
      route: routeOf,
      place: (body, headers, isModel) => this.#place(body, headers, isModel),
      lastUserText: lastContentsText,
      reply: (turn, _body, route) => this.#reply(turn, route),
    });
    this.url = this.#api.listener.url;
    this.requests = this.#api.requests;
  }

  /**
   * Starts a server listening on a free local port.
   *
   * @param options Scripts, fallback, side requests, port.
   * @returns The running server; close it (or use `await using`).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedGeminiServer } from "@finishline/agents/testing";
   *
   * await using server = await ScriptedGeminiServer.start();
   * assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
   * ```
   */
  static start(options: ScriptedGeminiServerOptions = {}): Promise<ScriptedGeminiServer> {
    return Promise.resolve(new ScriptedGeminiServer(options));
  }

  /**
   * Lists the session ids given so far, in arrival order (index = `sessionIndex`).
   *
   * @returns The session ids.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedGeminiServer } from "@finishline/agents/testing";
   *
   * await using server = await ScriptedGeminiServer.start();
   * await (await fetch(`${server.url}/v1beta/models/m:generateContent`, {
   *   method: "POST",
   *   body: JSON.stringify({
   *     contents: [{ role: "user", parts: [{ text: "hi" }] }],
   *     tools: [{ functionDeclarations: [{ name: "run_shell_command" }] }],
   *   }),
   * })).body?.cancel();
   * assert.deepEqual(server.sessionIds(), ["gemini-1"]);
   * ```
   */
  sessionIds(): string[] {
    return this.#sessions.map((session) => session.id);
  }

  /**
   * Stops the server.
   *
   * @returns Resolves once the server has stopped; calling it again is harmless.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedGeminiServer } from "@finishline/agents/testing";
   *
   * const server = await ScriptedGeminiServer.start();
   * await server.close();
   * await assert.rejects(fetch(`${server.url}/v1beta/models`));
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
   * import { ScriptedGeminiServer } from "@finishline/agents/testing";
   *
   * await using _server = await ScriptedGeminiServer.start();
   * ```
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  #reply(turn: ScriptedTurn, route: GeminiRoute): Response {
    const input = turn.usage?.input_tokens ?? 100;
    const output = turn.usage?.output_tokens ?? 20;
    const response = geminiResponse(turn, {
      model: route.model,
      responseId: this.#api.listener.nextId("resp"),
      usage: {
        promptTokenCount: input,
        candidatesTokenCount: output,
        totalTokenCount: input + output,
      },
    });
    if (route.method === "generateContent") return Response.json(response);
    return new Response(geminiEvents(response), { headers: SSE_HEADERS });
  }

  #place(
    body: Record<string, unknown>,
    headers: Record<string, string>,
    isModel: boolean,
  ): RequestPlace {
    const side = !isModel ||
      (this.#options.isSideRequest ?? isGeminiSideRequest)(body, headers);
    const session = side ? undefined : this.#sessionOf(body);
    return {
      sessionId: session?.id ?? "",
      sessionIndex: session ? this.#sessions.indexOf(session) : -1,
      turnIndex: session ? session.nextTurn++ : -1,
      side,
    };
  }

  /** The session a main request belongs to, by its history (see `scripts`). */
  #sessionOf(body: Record<string, unknown>): GeminiSession {
    const contents = Array.isArray(body.contents) ? body.contents : [];
    const first = JSON.stringify(contents[0] ?? null);
    let session = contents.length > 1
      ? this.#sessions.findLast((known) => known.first === first && known.length < contents.length)
      : undefined;
    if (!session) {
      session = { id: `gemini-${this.#sessions.length + 1}`, first, length: 0, nextTurn: 0 };
      this.#sessions.push(session);
    }
    session.length = contents.length;
    return session;
  }
}

interface GeminiSession {
  id: string;
  /** The JSON of the session's first `contents` entry. */
  first: string;
  /** How many `contents` entries its latest request held. */
  length: number;
  nextTurn: number;
}

function apiError(status: number, message: string): Response {
  return Response.json({ error: { code: status, message, status: "INVALID_ARGUMENT" } }, {
    status,
  });
}

/** A model call: `generateContent` or `streamGenerateContent`, and the model. */
interface GeminiRoute {
  method: "generateContent" | "streamGenerateContent";
  model: string;
}

/** Answers model lists and token counts at once; tells which model call a request is. */
function routeOf(
  method: string,
  path: string,
  body: Record<string, unknown>,
): Response | GeminiRoute | undefined {
  if (method === "GET" && /^\/v1(beta)?\/models\/?$/.test(path)) {
    return Response.json({ models: [] });
  }
  const route = /^\/v1(?:beta)?\/models\/([^/:]+):(\w+)$/.exec(path);
  const call = method === "POST" ? route?.[2] : undefined;
  if (call === "countTokens") {
    return Response.json({ totalTokens: Math.ceil(JSON.stringify(body).length / 4) });
  }
  if (call !== "generateContent" && call !== "streamGenerateContent") return undefined;
  return { method: call, model: route?.[1] ?? "scripted" };
}

const SIDE_REPLY: ScriptedTurn = { text: "{}" };
