/**
 * The machinery the scripted model servers share: listening, closing (which cuts
 * delayed replies short), reply ids, and, for the servers that speak another
 * vendor's API (`ScriptedResponsesServer`, `ScriptedGeminiServer`), the whole
 * request flow from body to scripted turn. Private to `agents/testing/`.
 *
 * @module
 */

import { sleep } from "./_reply.ts";
import { readBody, recordHeaders } from "./_request.ts";
import { roleOf, roleScript, type RoleScripts, type SessionRole } from "./roles.ts";
import type {
  RecordedRequest,
  ScriptedTurn,
  ScriptStep,
  SessionScript,
  TurnContext,
} from "./script.ts";

/** Where a scripted server listens. */
export interface ListenOptions {
  /** The port; 0 or absent picks a free one. */
  port?: number;
  /** The interface; absent means `127.0.0.1`. */
  hostname?: string;
  /** Deno's `onError`; absent keeps Deno's default. */
  onError?: (error: unknown) => Response | Promise<Response>;
}

/** A local HTTP server that can be closed once, cutting delayed replies short. */
export class ScriptedListener {
  /** The base URL, `http://HOST:PORT`. */
  readonly url: string;

  #server: Deno.HttpServer<Deno.NetAddr> | undefined;
  /** Aborted on close, cutting delayed replies short. */
  #closing = new AbortController();
  #closed: Promise<void> | undefined;
  #nonce = crypto.randomUUID().slice(0, 8);
  #counter = 0;

  constructor(options: ListenOptions, handler: (request: Request) => Promise<Response>) {
    this.#server = Deno.serve({
      port: options.port ?? 0,
      hostname: options.hostname ?? "127.0.0.1",
      onListen() {},
      ...(options.onError ? { onError: options.onError } : {}),
    }, handler);
    const { hostname, port } = this.#server.addr;
    this.url = `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  }

  /** Aborts when the server starts closing. */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /** A reply id unique to this server, `<prefix>_scripted_<nonce>_<n>`. */
  nextId(prefix: string): string {
    return `${prefix}_scripted_${this.#nonce}_${++this.#counter}`;
  }

  /** Stops the server; calling it again returns the same promise. */
  close(): Promise<void> {
    if (this.#closed) return this.#closed;
    this.#closing.abort();
    const server = this.#server;
    this.#server = undefined;
    this.#closed = server ? server.shutdown() : Promise.resolve();
    return this.#closed;
  }
}

/** What a scripted function step sees about the request it answers. */
export function turnContext(record: RecordedRequest, lastUserText: string): TurnContext {
  return {
    sessionId: record.sessionId,
    sessionIndex: record.sessionIndex,
    turnIndex: record.turnIndex,
    request: record,
    lastUserText,
  };
}

/** The session-related fields of a recorded request. */
export type RequestPlace = Pick<
  RecordedRequest,
  "sessionId" | "sessionIndex" | "turnIndex" | "side" | "role"
>;

/** The steps a scripted API server answers with: its options' share. */
export interface ApiSteps {
  scripts?: SessionScript[];
  roles?: RoleScripts;
  fallback?: ScriptStep;
  sideReply?: ScriptStep;
}

/**
 * The system prompt of an OpenAI or Gemini request (Responses `instructions`,
 * Chat Completions system and developer messages, Gemini `systemInstruction`),
 * as JSON, for {@linkcode roleOf}.
 */
function systemOf(body: Record<string, unknown>): string {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const input = Array.isArray(body.input) ? body.input : [];
  const system = [...messages, ...input].filter((message) =>
    message && typeof message === "object" &&
    ["system", "developer"].includes((message as { role?: unknown }).role as string)
  );
  return JSON.stringify([body.instructions ?? null, body.systemInstruction ?? null, system]);
}

/**
 * What tells one verifier or reviewer session from another: its first user
 * messages (agents put their own context, such as Codex's environment, before
 * the prompt).
 */
function firstUserOf(body: Record<string, unknown>): string {
  const list = [body.messages, body.input, body.contents].find(Array.isArray) ?? [];
  const users = (list as unknown[]).filter((message) =>
    message && typeof message === "object" &&
    ["user", undefined].includes((message as { role?: unknown }).role as string | undefined)
  );
  return JSON.stringify(users.slice(0, 3));
}

/** What sets one vendor's API apart in {@linkcode ScriptedApi}. */
export interface ApiDialect<Route> {
  /** The scripts, fallback and side reply from the server's options. */
  steps: ApiSteps;
  /** The side reply when the options give none. */
  sideReply: ScriptedTurn;
  /** An error response in the API's format. */
  error(status: number, message: string): Response;
  /**
   * A response for requests answered at once (model lists, token counts), the
   * model call a request is, or undefined when no route matches.
   */
  route(method: string, path: string, body: Record<string, unknown>): Response | Route | undefined;
  /** The session and turn of a request, keeping the server's session bookkeeping. */
  place(
    body: Record<string, unknown>,
    headers: Record<string, string>,
    isModel: boolean,
  ): RequestPlace;
  /** The text of the request's last user message. */
  lastUserText(body: Record<string, unknown>): string;
  /** Answers a model call with a scripted turn. */
  reply(turn: ScriptedTurn, body: Record<string, unknown>, route: Route): Response;
}

/**
 * A scripted server for an API other than Anthropic's: records every request,
 * finds its turn (script step, side reply or fallback; function steps awaited),
 * applies `delayMs` and `http` faults (others answer 400), and leaves the rest
 * to its {@linkcode ApiDialect}.
 */
export class ScriptedApi<Route> {
  /** Listens, closes, and gives reply ids. */
  readonly listener: ScriptedListener;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[] = [];

  #dialect: ApiDialect<Route>;
  /** Turns played by each verifier or reviewer session. */
  #roleTurns = new Map<string, number>();

  constructor(port: number | undefined, dialect: ApiDialect<Route>) {
    this.#dialect = dialect;
    this.listener = new ScriptedListener({ port }, (request) => this.#handle(request));
  }

  async #handle(request: Request): Promise<Response> {
    const dialect = this.#dialect;
    const path = new URL(request.url).pathname;
    let body: Record<string, unknown>;
    try {
      body = await readBody(request);
    } catch (error) {
      return dialect.error(400, `Cannot parse the request body as JSON: ${messageOf(error)}`);
    }
    const route = dialect.route(request.method, path, body);
    if (route instanceof Response) return route;
    const headers = recordHeaders(request.headers);
    // Agents that ignore an appended system prompt get the instructions in the first message.
    const role = route !== undefined ? roleOf(systemOf(body) + firstUserOf(body)) : undefined;
    // finishline's verifier and reviewer play their role's script and take no session index.
    const place = role
      ? this.#rolePlace(role, body)
      : dialect.place(body, headers, route !== undefined);
    const record = recordOf(request, { path, headers, body }, place);
    this.requests.push(record);
    if (route === undefined) return dialect.error(404, `No route for "${request.method} ${path}"`);
    let turn: ScriptedTurn;
    try {
      turn = await this.#turn(record);
    } catch (error) {
      record.error = messageOf(error);
      return dialect.error(400, `Cannot build scripted turn ${record.turnIndex}: ${record.error}`);
    }
    if (turn.fault && turn.fault.kind !== "http") {
      record.error = `fault kind "${turn.fault.kind}" is not supported here; use "http"`;
      return dialect.error(400, `Cannot build scripted turn ${record.turnIndex}: ${record.error}`);
    }
    if (turn.delayMs && !(await sleep(turn.delayMs, this.listener.closing))) {
      return dialect.error(503, "The scripted server is closing");
    }
    if (turn.fault) {
      const { status, message } = turn.fault;
      return dialect.error(status, message ?? `Scripted error ${status}`);
    }
    return dialect.reply(turn, body, route);
  }

  #rolePlace(role: SessionRole, body: Record<string, unknown>): RequestPlace {
    const key = `${role}:${firstUserOf(body)}`;
    const turn = this.#roleTurns.get(key) ?? 0;
    this.#roleTurns.set(key, turn + 1);
    return { sessionId: key, sessionIndex: -1, turnIndex: turn, side: false, role };
  }

  async #turn(record: RecordedRequest): Promise<ScriptedTurn> {
    const { steps, sideReply, lastUserText } = this.#dialect;
    const ctx = turnContext(record, lastUserText(record.body));
    const script = record.role
      ? roleScript(record.role, steps.roles)
      : steps.scripts?.[record.sessionIndex] ?? [];
    const step = record.side
      ? steps.sideReply ?? sideReply
      : script[record.turnIndex] ?? steps.fallback ?? FALLBACK;
    return typeof step === "function" ? await step(ctx) : step;
  }
}

/** The record of a request that has just arrived. */
export function recordOf(
  request: Request,
  read: Pick<RecordedRequest, "path" | "headers" | "body">,
  place: RequestPlace,
): RecordedRequest {
  return {
    ...place,
    method: request.method,
    path: read.path,
    headers: read.headers,
    body: read.body,
    receivedAt: Date.now(),
  };
}

/** The message of a thrown value. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The headers of a server-sent event stream. */
export const SSE_HEADERS: Record<string, string> = {
  "content-type": "text/event-stream; charset=utf-8",
  "cache-control": "no-cache",
};

/** The reply once a session's script is exhausted, when the options give none. */
export const FALLBACK: ScriptedTurn = { text: "Done." };
