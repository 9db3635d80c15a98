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

import { lastUserText, readBody, recordHeaders, sessionIdOf } from "./_request.ts";
import { ScriptedCut } from "./faults.ts";
import { errorResponse, replyTo } from "./_reply.ts";
import {
  FALLBACK,
  messageOf,
  recordOf,
  ScriptedListener,
  turnContext,
} from "./_scripted_api_server.ts";
import type {
  RecordedRequest,
  ScriptedTurn,
  ScriptStep,
  SessionContext,
  SessionScript,
  TurnContext,
} from "./script.ts";
import { isSideRequest } from "./side_requests.ts";
import { roleOf, roleScript, type RoleScripts, type SessionRole } from "./roles.ts";

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
   * Scripts of finishline's verifier and reviewer sessions, told by their
   * system prompt; they take no index among the sessions of `scripts`.
   *
   * @default {{}} (the verifier writes no test; the reviewer accepts every declaration)
   */
  roles?: RoleScripts;
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

  #listener: ScriptedListener;
  #options: ScriptedServerOptions;
  #isSide: (
    body: Record<string, unknown>,
    headers: Record<string, string>,
  ) => boolean;
  #sessions = new Map<string, SessionState>();
  #roles = new Map<string, SessionState>();

  private constructor(options: ScriptedServerOptions) {
    this.#options = options;
    this.#isSide = options.isSideRequest ?? isSideRequest;
    this.#listener = new ScriptedListener({
      port: options.port,
      hostname: options.hostname,
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
    this.url = this.#listener.url;
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
   * Lists the distinct session ids seen with a main-loop request, in arrival order
   * (index = `sessionIndex`); sessions that asked only side requests are not listed.
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
   *   configuration and session transcripts in `<home>/.claude`, and its
   *   temporary files (`claude-<uid>/`, `cc-socks/`) in `<home>/tmp`, so that
   *   removing `home` removes everything it wrote.
   * @returns `ANTHROPIC_BASE_URL`, `ANTHROPIC_API_KEY`,
   *   `CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC`, `HOME`, `CLAUDE_CONFIG_DIR` and
   *   `CLAUDE_CODE_TMPDIR`.
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
   * assert.equal(env.CLAUDE_CODE_TMPDIR, "/tmp/home/tmp");
   * ```
   */
  env(home: string): Record<string, string> {
    const root = home.replace(/[\\/]+$/, "");
    return {
      ANTHROPIC_BASE_URL: this.url,
      ANTHROPIC_API_KEY: "sk-test",
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      HOME: home,
      CLAUDE_CONFIG_DIR: `${root}/.claude`,
      CLAUDE_CODE_TMPDIR: `${root}/tmp`,
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
    return this.#listener.close();
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
    let body: Record<string, unknown>;
    try {
      body = await readBody(request);
    } catch (error) {
      return errorResponse(
        400,
        `Cannot parse the request body as JSON: ${messageOf(error)}`,
      );
    }
    const { record, session } = this.#record(request, url.pathname, body);
    if (
      request.method === "POST" && url.pathname === "/v1/messages/count_tokens"
    ) {
      return Response.json({
        input_tokens: Math.ceil(JSON.stringify(body).length / 4),
      });
    }
    if (!session) {
      return errorResponse(
        404,
        `No route for "${request.method} ${url.pathname}"`,
      );
    }
    return await this.#answer(session, record);
  }

  /** Records a request; the session is given for Messages requests only. */
  #record(
    request: Request,
    path: string,
    body: Record<string, unknown>,
  ): { record: RecordedRequest; session?: SessionState } {
    const headers = recordHeaders(request.headers);
    const isMessages = request.method === "POST" && path === "/v1/messages";
    const sessionId = sessionIdOf(body, headers);
    const side = !isMessages || this.#isSide(body, headers);
    const role = isMessages && !side ? roleOf(roleText(body)) : undefined;
    // A session gets its index with its first main-loop request: one that only asks side
    // questions (a tool-less judge or finish step) takes no script and shifts no index,
    // nor does a verifier or reviewer session, which plays its role's script.
    const session = isMessages || sessionId !== ""
      ? role
        ? this.#roleSession(sessionId, role)
        : side
        ? this.#sessions.get(sessionId) ?? { index: -1, nextTurn: 0 }
        : this.#session(sessionId)
      : undefined;
    const record = recordOf(request, { path, headers, body }, {
      sessionId,
      sessionIndex: session?.index ?? -1,
      turnIndex: side || !session ? -1 : session.nextTurn++,
      side,
      ...(role ? { role } : {}),
    });
    this.requests.push(record);
    return { record, session: isMessages ? session : undefined };
  }

  /** Answers a Messages request with the session's next step, or the side reply. */
  async #answer(
    session: SessionState,
    record: RecordedRequest,
  ): Promise<Response> {
    const ctx = turnContext(record, lastUserText(record.body));
    let turn: ScriptedTurn;
    try {
      const step = record.side
        ? this.#options.sideReply ?? SIDE_REPLY
        : await this.#step(session, ctx);
      turn = typeof step === "function" ? await step(ctx) : step;
    } catch (error) {
      record.error = messageOf(error);
      // 400 rather than 5xx: Claude Code retries server errors with backoff, which
      // would stall the test instead of failing it.
      return errorResponse(
        400,
        `Cannot build scripted turn ${record.turnIndex}: ${record.error}`,
      );
    }
    return await replyTo(turn, record.body, {
      signal: this.#listener.closing,
      nextId: (prefix) => this.#listener.nextId(prefix),
    });
  }

  #roleSession(sessionId: string, role: SessionRole): SessionState {
    let session = this.#roles.get(sessionId);
    if (!session) {
      session = { index: -1, nextTurn: 0, script: roleScript(role, this.#options.roles) };
      this.#roles.set(sessionId, session);
    }
    return session;
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
}

/** Where a verifier's or reviewer's marker is: the system prompt, or the first user message. */
function roleText(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  return JSON.stringify([body.system ?? null, messages[0] ?? null]);
}

interface SessionState {
  index: number;
  nextTurn: number;
  script?: SessionScript;
}

const SIDE_REPLY: ScriptedTurn = { text: "OK." };
