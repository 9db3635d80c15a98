/**
 * A local server that speaks the Anthropic Messages API and answers from a script,
 * so that the real Claude Code binary can run offline in tests.
 *
 * Claude Code keys every request with its session id (`metadata.user_id`, a JSON
 * string holding `session_id`), so the server keeps one script and one turn counter
 * per session. Only main-loop requests advance a script: see {@linkcode isSideRequest}
 * for the rule that tells them from side requests (subagents, prompt suggestions,
 * prompt hooks and other helper queries).
 *
 * @module
 */

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
 * A scripted HTTP error reply in the API's error shape, such as 429
 * (`rate_limit_error`), 529 (`overloaded_error`) or 500 (`api_error`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer, textTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ fault: { kind: "http", status: 529 } }, textTurn("Back again")]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const first = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal(first.status, 529);
 * assert.equal((await first.json()).error.type, "overloaded_error");
 * // The fault used up its step, so the retry gets the next one.
 * const retry = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal((await retry.json()).content[0].text, "Back again");
 * ```
 */
export interface HttpFault {
  /** Discriminant. */
  kind: "http";
  /** The HTTP status. */
  status: number;
  /**
   * The error message.
   *
   * @default {"Scripted error <status>"}
   */
  message?: string;
  /** Extra response headers, such as `retry-after` or `x-should-retry`. */
  headers?: Record<string, string>;
}

/**
 * A streamed reply that breaks off: the first `afterEvents` SSE events are sent,
 * then the connection is dropped. A non-streaming request gets no body at all.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ text: "Hello", fault: { kind: "reset", afterEvents: 2 } }]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ stream: true, tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const response = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal(response.status, 200);
 * await assert.rejects(response.text());
 * ```
 */
export interface ResetFault {
  /** Discriminant. */
  kind: "reset";
  /**
   * How many SSE events to send before the connection drops.
   *
   * @default {0}
   */
  afterEvents?: number;
}

/**
 * A streamed reply whose event data is not valid JSON: the first `afterEvents`
 * events are sent, then a broken `content_block_delta`, then the stream ends. A
 * non-streaming request gets the first half of its JSON.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ text: "Hello", fault: { kind: "malformed", afterEvents: 1 } }]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ stream: true, tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const text = await (await fetch(`${server.url}/v1/messages`, request)).text();
 * assert.ok(text.startsWith("event: message_start\n"));
 * assert.ok(text.endsWith('data: {"type":"content_block_delta","index":\n\n'));
 * ```
 */
export interface MalformedFault {
  /** Discriminant. */
  kind: "malformed";
  /**
   * How many well-formed SSE events to send before the broken one.
   *
   * @default {0}
   */
  afterEvents?: number;
}

/**
 * A reply that never ends: the first `afterEvents` SSE events are sent, then the
 * stream stays open until the client gives up or the server closes. A
 * non-streaming request gets headers and no body.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({
 *   scripts: [[{ fault: { kind: "hang", afterEvents: 1 } }]],
 * });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ stream: true, tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const response = await fetch(`${server.url}/v1/messages`, {
 *   ...request,
 *   signal: AbortSignal.timeout(200),
 * });
 * const reader = response.body!.getReader();
 * assert.equal((await reader.read()).done, false);
 * // Nothing follows the first event; the client's timeout ends the wait.
 * await assert.rejects(reader.read());
 * ```
 */
export interface HangFault {
  /** Discriminant. */
  kind: "hang";
  /**
   * How many SSE events to send before the stream stalls.
   *
   * @default {0}
   */
  afterEvents?: number;
}

/**
 * A way for a scripted reply to fail, for testing retries and error handling.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { type ScriptedFault, ScriptedModelServer } from "@finishline/agents/testing";
 *
 * const fault: ScriptedFault = { kind: "http", status: 429, headers: { "retry-after": "0" } };
 * await using server = await ScriptedModelServer.start({ scripts: [[{ fault }]] });
 * const request = {
 *   method: "POST",
 *   body: JSON.stringify({ tools: [{ name: "Bash" }], messages: [] }),
 * };
 * const response = await fetch(`${server.url}/v1/messages`, request);
 * assert.equal(response.status, 429);
 * assert.equal(response.headers.get("retry-after"), "0");
 * assert.equal((await response.json()).error.type, "rate_limit_error");
 * ```
 */
export type ScriptedFault = HttpFault | ResetFault | MalformedFault | HangFault;

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
  /** The session's arrival order on this server, from 0. */
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
  /** The session's arrival order on this server, from 0. */
  sessionIndex: number;
  /** The session's first main-loop request. */
  request: RecordedRequest;
}

/** Options of {@linkcode ScriptedModelServer.start}. */
export interface ScriptedServerOptions {
  /**
   * Scripts by session arrival order (0 = first session seen), or a function that
   * chooses one per new session. The script is chosen at the session's first
   * main-loop request. A session without a script gets the fallback.
   *
   * @default {[]}
   */
  scripts?:
    | SessionScript[]
    | ((ctx: SessionContext) => SessionScript | Promise<SessionScript>);
  /**
   * The reply to main-loop requests once a session's script is exhausted.
   *
   * @default {textTurn("Done.")}
   */
  fallback?: ScriptStep;
  /**
   * The reply to side requests (see {@linkcode isSideRequest}); as a function it sees
   * `turnIndex` -1.
   *
   * @default {textTurn("OK.")}
   */
  sideReply?: ScriptStep;
  /**
   * Tells side requests from main-loop requests.
   *
   * @default {isSideRequest}
   */
  isSideRequest?: (
    body: Record<string, unknown>,
    headers: Record<string, string>,
  ) => boolean;
  /**
   * The port to listen on; 0 picks a free one.
   *
   * @default {0}
   */
  port?: number;
  /**
   * The interface to listen on.
   *
   * @default {"127.0.0.1"}
   */
  hostname?: string;
}

/** One request the server received, main-loop or side. */
export interface RecordedRequest {
  /** The Claude Code session id (`""` when the request carried none). */
  sessionId: string;
  /** The session's arrival order on this server; -1 when there is no session. */
  sessionIndex: number;
  /** The step index in the session's script; -1 for side requests. */
  turnIndex: number;
  /** True for requests that do not advance the script. */
  side: boolean;
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

/**
 * A local Messages API server that answers Claude Code from per-session scripts.
 *
 * Sessions are told apart by the `session_id` in `metadata.user_id` (falling back to
 * the `x-claude-code-session-id` header). A session resumed with the SDK's `resume`
 * option keeps its id, so its script continues at the next step; a fork
 * (`forkSession: true`) gets a new id and so counts as a new session.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ScriptedModelServer, textTurn } from "@finishline/agents/testing";
 *
 * await using server = await ScriptedModelServer.start({ scripts: [[textTurn("Hello")]] });
 * const response = await fetch(`${server.url}/v1/messages`, {
 *   method: "POST",
 *   body: JSON.stringify({ model: "m", tools: [{ name: "Bash" }], messages: [] }),
 * });
 * const message = await response.json();
 * assert.equal(message.content[0].text, "Hello");
 * assert.equal(server.requests.length, 1);
 * assert.equal(server.requests[0].turnIndex, 0);
 * ```
 */
export class ScriptedModelServer implements AsyncDisposable {
  /** The base URL, `http://HOST:PORT`, to put in `ANTHROPIC_BASE_URL`. */
  readonly url: string;
  /** Every request received, main-loop and side, in arrival order. */
  readonly requests: RecordedRequest[] = [];

  #server: Deno.HttpServer<Deno.NetAddr> | undefined;
  #closing = new AbortController();
  #closed: Promise<void> | undefined;
  #options: ScriptedServerOptions;
  #isSide: (
    body: Record<string, unknown>,
    headers: Record<string, string>,
  ) => boolean;
  #sessions = new Map<string, SessionState>();
  #nonce = crypto.randomUUID().slice(0, 8);
  #counter = 0;

  private constructor(options: ScriptedServerOptions) {
    this.#options = options;
    this.#isSide = options.isSideRequest ?? isSideRequest;
    this.#server = Deno.serve({
      port: options.port ?? 0,
      hostname: options.hostname ?? "127.0.0.1",
      onListen() {},
      onError: (error) => {
        // A scripted reset or hang ends by erroring the body stream; Deno reports
        // that here, and it is the intended outcome, not a failure of the server.
        if (error instanceof ScriptedCut) {
          return new Response(null, { status: 500 });
        }
        console.error(error);
        return errorResponse(
          500,
          `Scripted server failed: ${messageOf(error)}`,
        );
      },
    }, (request) => this.#handle(request));
    const { hostname, port } = this.#server.addr;
    this.url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  }

  /**
   * Starts a server listening on a free local port.
   *
   * @param options Scripts, fallback and side replies, address.
   * @returns The running server; close it (or use `await using`).
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedModelServer } from "@finishline/agents/testing";
   *
   * const server = await ScriptedModelServer.start();
   * try {
   *   assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
   * } finally {
   *   await server.close();
   * }
   * ```
   */
  static start(
    options: ScriptedServerOptions = {},
  ): Promise<ScriptedModelServer> {
    return Promise.resolve(new ScriptedModelServer(options));
  }

  /**
   * Lists the distinct session ids seen, in arrival order (index = `sessionIndex`).
   *
   * @returns The session ids.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedModelServer } from "@finishline/agents/testing";
   *
   * await using server = await ScriptedModelServer.start();
   * assert.deepEqual(server.sessionIds(), []);
   * await fetch(`${server.url}/v1/messages`, {
   *   method: "POST",
   *   body: JSON.stringify({
   *     metadata: { user_id: JSON.stringify({ session_id: "session-a" }) },
   *     tools: [{ name: "Bash" }],
   *     messages: [],
   *   }),
   * });
   * assert.deepEqual(server.sessionIds(), ["session-a"]);
   * ```
   */
  sessionIds(): string[] {
    return [...this.#sessions.keys()];
  }

  /**
   * Builds the environment variables that point a Claude Code child at this server.
   *
   * The SDK's `env` option replaces the child's environment, so spread the parent's
   * environment first.
   *
   * @param home A temporary directory to use as `HOME`; Claude Code keeps its
   *   configuration and session transcripts in `<home>/.claude`.
   * @returns `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
   *   `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `HOME` and `CLAUDE_CONFIG_DIR`.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedModelServer } from "@finishline/agents/testing";
   *
   * await using server = await ScriptedModelServer.start();
   * const env = { ...Deno.env.toObject(), ...server.env("/tmp/home") };
   * assert.equal(env.ANTHROPIC_BASE_URL, server.url);
   * assert.equal(env.CLAUDE_CONFIG_DIR, "/tmp/home/.claude");
   * ```
   */
  env(home: string): Record<string, string> {
    return {
      ANTHROPIC_BASE_URL: this.url,
      ANTHROPIC_API_KEY: "sk-test",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      HOME: home,
      CLAUDE_CONFIG_DIR: `${home.replace(/[\\/]+$/, "")}/.claude`,
    };
  }

  /**
   * Stops the server; streams still open (hanging or delayed replies) are cut.
   *
   * @returns Resolves once the server has stopped; calling it again is harmless.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedModelServer } from "@finishline/agents/testing";
   *
   * const server = await ScriptedModelServer.start();
   * await server.close();
   * await server.close();
   * await assert.rejects(fetch(`${server.url}/v1/messages`, { method: "POST", body: "{}" }));
   * ```
   */
  close(): Promise<void> {
    if (this.#closed) return this.#closed;
    this.#closing.abort();
    const server = this.#server;
    this.#server = undefined;
    this.#closed = server ? server.shutdown() : Promise.resolve();
    return this.#closed;
  }

  /**
   * Closes the server, for `await using`.
   *
   * @returns Resolves once the server has stopped.
   *
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { ScriptedModelServer } from "@finishline/agents/testing";
   *
   * let url: string;
   * {
   *   await using server = await ScriptedModelServer.start();
   *   url = server.url;
   * }
   * // Leaving the block closed the server.
   * await assert.rejects(fetch(`${url}/v1/messages`, { method: "POST", body: "{}" }));
   * ```
   */
  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  async #handle(request: Request): Promise<Response> {
    const url = new URL(request.url);
    let body: Record<string, unknown> = {};
    if (request.method === "POST") {
      try {
        const parsed: unknown = await request.json();
        if (isRecord(parsed)) body = parsed;
      } catch (error) {
        return errorResponse(
          400,
          `Cannot parse the request body as JSON: ${messageOf(error)}`,
        );
      }
    }
    const headers = recordHeaders(request.headers);
    const isMessages = request.method === "POST" &&
      url.pathname === "/v1/messages";
    const sessionId = sessionIdOf(body, headers);
    const session = isMessages || sessionId !== "" ? this.#session(sessionId) : undefined;
    const side = !isMessages || this.#isSide(body, headers);
    const turnIndex = side || !session ? -1 : session.nextTurn++;
    const record: RecordedRequest = {
      sessionId,
      sessionIndex: session?.index ?? -1,
      turnIndex,
      side,
      method: request.method,
      path: url.pathname,
      headers,
      body,
      receivedAt: Date.now(),
    };
    this.requests.push(record);

    if (
      request.method === "POST" && url.pathname === "/v1/messages/count_tokens"
    ) {
      return Response.json({
        input_tokens: Math.ceil(JSON.stringify(body).length / 4),
      });
    }
    if (!isMessages || !session) {
      return errorResponse(
        404,
        `No route for "${request.method} ${url.pathname}"`,
      );
    }

    const ctx: TurnContext = {
      sessionId,
      sessionIndex: session.index,
      turnIndex,
      request: record,
      lastUserText: lastUserText(body),
    };
    let turn: ScriptedTurn;
    try {
      const step = side ? this.#options.sideReply ?? SIDE_REPLY : await this.#step(session, ctx);
      turn = typeof step === "function" ? await step(ctx) : step;
    } catch (error) {
      record.error = messageOf(error);
      // 400 rather than 5xx: Claude Code retries server errors with backoff, which
      // would stall the test instead of failing it.
      return errorResponse(
        400,
        `Cannot build scripted turn ${turnIndex}: ${record.error}`,
      );
    }
    return await this.#reply(turn, body);
  }

  #session(sessionId: string): SessionState {
    let session = this.#sessions.get(sessionId);
    if (!session) {
      session = { index: this.#sessions.size, nextTurn: 0 };
      this.#sessions.set(sessionId, session);
    }
    return session;
  }

  async #step(session: SessionState, ctx: TurnContext): Promise<ScriptStep> {
    if (!session.script) {
      const scripts = this.#options.scripts ?? [];
      const chosen = typeof scripts === "function"
        ? scripts({
          sessionId: ctx.sessionId,
          sessionIndex: ctx.sessionIndex,
          request: ctx.request,
        })
        : scripts[ctx.sessionIndex] ?? [];
      session.script ??= await chosen;
    }
    return session.script[ctx.turnIndex] ?? this.#options.fallback ?? FALLBACK;
  }

  async #reply(
    turn: ScriptedTurn,
    body: Record<string, unknown>,
  ): Promise<Response> {
    // Only the server's own signal: a hanging stream learns of a client that left
    // through its cancel(), and a delayed reply to a client that left is harmless.
    const signal = this.#closing.signal;
    if (turn.delayMs && !(await sleep(turn.delayMs, signal))) {
      return errorResponse(503, "The scripted server is closing");
    }
    const fault = turn.fault;
    if (fault?.kind === "http") {
      return errorResponse(
        fault.status,
        fault.message ?? `Scripted error ${fault.status}`,
        fault.headers,
      );
    }
    const message = this.#message(
      turn,
      typeof body.model === "string" ? body.model : "scripted",
    );
    if (body.stream !== true) {
      if (!fault) return Response.json(message);
      const json = JSON.stringify(message);
      const sent = fault.kind === "malformed" ? [json.slice(0, json.length >> 1)] : [];
      return new Response(faultStream(sent, fault.kind, signal), {
        headers: JSON_HEADERS,
      });
    }
    const events = sseEvents(message);
    if (!fault) return new Response(events.join(""), { headers: SSE_HEADERS });
    const sent = events.slice(0, fault.afterEvents ?? 0);
    if (fault.kind === "malformed") {
      sent.push(
        'event: content_block_delta\ndata: {"type":"content_block_delta","index":\n\n',
      );
    }
    return new Response(faultStream(sent, fault.kind, signal), {
      headers: SSE_HEADERS,
    });
  }

  #message(turn: ScriptedTurn, model: string): AssistantMessage {
    const content: ContentBlock[] = [];
    if (turn.text !== undefined) {
      content.push({ type: "text", text: turn.text });
    }
    for (const use of turn.toolUses ?? []) {
      content.push({
        type: "tool_use",
        id: use.id ?? `toolu_scripted_${this.#nonce}_${++this.#counter}`,
        name: use.name,
        input: use.input ?? {},
      });
    }
    return {
      id: `msg_scripted_${this.#nonce}_${++this.#counter}`,
      type: "message",
      role: "assistant",
      model,
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
}

interface SessionState {
  index: number;
  nextTurn: number;
  script?: SessionScript;
}

type ContentBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: unknown };

interface AssistantMessage {
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

const FALLBACK: ScriptedTurn = { text: "Done." };
const SIDE_REPLY: ScriptedTurn = { text: "OK." };
const SSE_HEADERS = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};
const JSON_HEADERS = { "content-type": "application/json" };
const ERROR_TYPES: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  529: "overloaded_error",
};

function sseEvents(message: AssistantMessage): string[] {
  const event = (name: string, data: Record<string, unknown>) =>
    `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
  const events = [
    event("message_start", {
      message: {
        ...message,
        content: [],
        stop_reason: null,
        usage: { ...message.usage, output_tokens: 0 },
      },
    }),
  ];
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      events.push(
        event("content_block_start", {
          index,
          content_block: { type: "text", text: "" },
        }),
      );
      events.push(
        event("content_block_delta", {
          index,
          delta: { type: "text_delta", text: block.text },
        }),
      );
    } else {
      events.push(
        event("content_block_start", {
          index,
          content_block: { ...block, input: {} },
        }),
      );
      events.push(event("content_block_delta", {
        index,
        delta: {
          type: "input_json_delta",
          partial_json: JSON.stringify(block.input),
        },
      }));
    }
    events.push(event("content_block_stop", { index }));
  });
  events.push(event("message_delta", {
    delta: { stop_reason: message.stop_reason, stop_sequence: null },
    usage: { output_tokens: message.usage.output_tokens },
  }));
  events.push(event("message_stop", {}));
  return events;
}

/** The error that cuts a faulty reply's connection. */
class ScriptedCut extends Error {}

/** A body that sends `chunks` one by one, then ends as the fault asks. */
function faultStream(
  chunks: string[],
  kind: "reset" | "malformed" | "hang",
  signal: AbortSignal,
): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let next = 0;
  let stop: (() => void) | undefined;
  return new ReadableStream<Uint8Array>({
    // pull, not start: an error discards chunks still queued, so each chunk must be
    // read by the server before the next step decides to cut the connection.
    async pull(controller) {
      if (next < chunks.length) {
        controller.enqueue(encoder.encode(chunks[next++]));
        return;
      }
      if (kind === "malformed") return controller.close();
      if (kind === "hang" && !signal.aborted) {
        await new Promise<void>((resolve) => {
          stop = resolve;
          signal.addEventListener("abort", () => resolve(), { once: true });
        });
      }
      controller.error(
        new ScriptedCut(
          `Scripted ${kind === "hang" ? "hang ended" : "connection reset"}`,
        ),
      );
    },
    cancel() {
      stop?.();
    },
  });
}

function errorResponse(
  status: number,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const type = ERROR_TYPES[status] ?? "api_error";
  return Response.json({ type: "error", error: { type, message } }, {
    status,
    headers,
  });
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

function sessionIdOf(
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

function lastUserText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.findLast((message) => isRecord(message) && message.role === "user");
  return isRecord(last) ? contentText(last.content) : "";
}

/** Text of a message content: text blocks and tool_result contents, joined. */
function contentText(content: unknown): string {
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

function systemText(system: unknown): string {
  return typeof system === "string" ? system : contentText(system);
}

function recordHeaders(headers: Headers): Record<string, string> {
  const record: Record<string, string> = {};
  for (const [name, value] of headers) {
    record[name] = name === "x-api-key" || name === "authorization" ? "[redacted]" : value;
  }
  return record;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
