/**
 * The Agent Client Protocol backend: drives any agent that speaks ACP (Claude
 * through claude-agent-acp, Codex through codex-acp, Gemini CLI, opencode).
 * It spawns the agent's command, offers complete_task as a stdio MCP server
 * the agent starts, and emulates the Stop hook at the end of each prompt turn:
 * the stop callback may send a continuation prompt into the same session.
 *
 * @module
 */

import * as acp from "@agentclientprotocol/sdk";
import { COMPLETE_TASK_NOT_NOW, COMPLETE_TASK_SERVER } from "../record/complete_task_tool.ts";
import { FINISH_NAME, FINISH_NOT_NOW } from "../record/finish_tool.ts";
import {
  type AgentBackend,
  type AgentMessage,
  AgentSetupError,
  type CompleteTaskCall,
  type FinishToolCall,
  SessionGoneError,
  type SessionRequest,
} from "./port.ts";
import { permissionAnswer, promptUsage, UpdateTranslator } from "./_acp_updates.ts";
import { CALLBACK_URL_ENV, FINISH_TOOL_ENV } from "./complete_task_mcp.ts";

/** How an ACP agent is started. */
export interface AcpCommand {
  /** The command and its arguments (`["opencode", "acp"]`). */
  command: string[];
  /** Extra environment for the agent, over the parent's and the session's. */
  env?: Record<string, string>;
  /**
   * A session mode to switch to after `session/new` (codex-acp: `full-access`),
   * when the agent advertises it.
   */
  mode?: string;
}

type Routes = Pick<SessionRequest, "onCompleteTask" | "onFinish">;

const CLOSED = "the agent process ended";

/** How long an aborted prompt turn gets to end after `session/cancel` before the agent is killed. */
const CANCEL_GRACE_MS = 3_000;

/** How long an agent process gets to exit on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3_000;

/** Where a process's session updates go, as the current prompt says. */
interface Holder {
  sink: (message: AgentMessage) => void;
  translator?: UpdateTranslator;
  /** While `session/load` replays the history: its updates are not this run's. */
  replaying?: boolean;
}

/** One live agent process with its session, kept for follow-up prompts. */
interface Live {
  child: Deno.ChildProcess;
  connection: acp.ClientSideConnection;
  sessionId: string;
  routes: Routes;
  sink: (message: AgentMessage) => void;
  /** Report text and tool calls still gathered. */
  flush: () => void;
  /** The session's cost so far in USD, as the agent reports it. */
  cost: () => number;
  callback: Deno.HttpServer;
  /** The model the agent says the session runs on (`session/new`'s current model). */
  model?: string;
  /** Whether the agent process has gone. */
  closed?: boolean;
}

/**
 * Runs agent sessions over the Agent Client Protocol.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { AcpBackend } from "@finishline/agents";
 *
 * const backend = new AcpBackend({ command: ["opencode", "acp"] }, "opencode");
 * assert.equal(backend.name, "opencode");
 * await backend.release(); // nothing started yet
 * ```
 */
export class AcpBackend implements AgentBackend {
  /** Backend name for logs. */
  readonly name: string;
  readonly #agent: AcpCommand;
  readonly #live = new Map<string, Live>();

  /**
   * A backend that starts `agent.command` for each new session.
   *
   * @param agent How to start the agent.
   * @param name Backend name for logs. @default "acp"
   */
  constructor(agent: AcpCommand, name = "acp") {
    this.#agent = agent;
    this.name = name;
  }

  /**
   * Run one prompt and yield its messages, ending with a result message. A
   * request that resumes the session this backend still holds sends its
   * prompt into that session; any other starts a new agent process and ends
   * the one before (one that resumes another session reopens it there, or
   * throws {@linkcode SessionGoneError} when the agent cannot).
   *
   * @param request The session's prompt and settings.
   * @returns The messages.
   */
  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    const queue: AgentMessage[] = [];
    let wake: (() => void) | undefined;
    const sink = (message: AgentMessage) => {
      queue.push(message);
      wake?.();
    };
    const found = request.resume ? this.#live.get(request.resume) : undefined;
    // A session whose process has died is reopened in a new one (see `reopen`).
    const held = found?.closed ? undefined : found;
    // Only the latest session is followed up (rescue, probe, `continue`).
    if (!held) await this.release();
    const live = held ||
      await this.#start(request).catch((error) => {
        const Kind = error instanceof AgentSetupError
          ? AgentSetupError
          : error instanceof SessionGoneError
          ? SessionGoneError
          : Error;
        throw new Kind(`ACP agent ${this.name}: ${errorText(error)}`);
      });
    live.sink = sink;
    live.routes.onCompleteTask = request.onCompleteTask;
    live.routes.onFinish = request.onFinish;
    // A new session says which model the agent chose, as Claude Code's init does.
    if (!held && live.model) {
      sink({ type: "system", subtype: "init", session_id: live.sessionId, model: live.model });
    }
    // An abort cancels the prompt turn (`session/cancel`), so that the agent
    // stops its own tools; an agent that has not ended the turn by the grace
    // is killed.
    let killer: ReturnType<typeof setTimeout> | undefined;
    const cancel = () => {
      live.connection.cancel({ sessionId: live.sessionId }).catch(() => {});
      killer = setTimeout(() => killQuietly(live.child), CANCEL_GRACE_MS);
    };
    request.signal.addEventListener("abort", cancel, { once: true });
    let done = false;
    const turn = this.#turn(live, request).then(sink, (error) =>
      sink({
        type: "result",
        subtype: "error_during_execution",
        is_error: true,
        errors: [errorText(error)],
        session_id: live.sessionId,
      })).finally(() => {
        clearTimeout(killer);
        done = true;
        wake?.();
      });
    try {
      if (request.signal.aborted) cancel();
      while (!done || queue.length > 0) {
        if (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        while (queue.length > 0) yield queue.shift()!;
      }
      await turn;
    } finally {
      request.signal.removeEventListener("abort", cancel);
    }
  }

  /** The prompt, then continuation prompts while the stop callback sends the agent back. */
  async #turn(live: Live, request: SessionRequest): Promise<AgentMessage> {
    const started = performance.now();
    const costBefore = live.cost();
    let prompt = request.prompt;
    let turns = 0;
    const usage = { input_tokens: 0, output_tokens: 0, cache_read_input_tokens: 0 };
    let lastText = "";
    const sink = live.sink;
    live.sink = (message) => {
      const content = (message.message as { content?: Array<{ text?: string }> })?.content;
      if (message.type === "assistant" && typeof content?.[0]?.text === "string") {
        lastText += content[0].text;
      }
      sink(message);
    };
    for (;;) {
      turns++;
      lastText = "";
      const response = await orClosed(
        live.connection,
        live.connection.prompt({
          sessionId: live.sessionId,
          prompt: [{ type: "text", text: prompt }],
        }),
      );
      live.flush();
      const tokens = promptUsage(response);
      usage.input_tokens += tokens.input;
      usage.output_tokens += tokens.output;
      usage.cache_read_input_tokens += tokens.cacheRead;
      if (response.stopReason !== "end_turn" || !request.onStop || request.signal.aborted) {
        return result(live, response.stopReason, { turns, usage, started, costBefore });
      }
      const decision = await request.onStop({
        stopHookActive: turns > 1,
        lastAssistantMessage: lastText,
        backgroundTasks: [],
      });
      if (!decision.block) {
        return result(live, response.stopReason, { turns, usage, started, costBefore });
      }
      prompt = decision.reason;
    }
  }

  async #start(request: SessionRequest): Promise<Live> {
    const [program, ...args] = this.#agent.command;
    let child: Deno.ChildProcess;
    try {
      child = new Deno.Command(program, {
        args,
        cwd: request.cwd,
        env: { ...request.env, ...this.#agent.env },
        stdin: "piped",
        stdout: "piped",
        stderr: request.stderr ? "piped" : "null",
      }).spawn();
    } catch (error) {
      if (
        !(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.PermissionDenied)
      ) {
        throw error;
      }
      throw new AgentSetupError(
        `cannot start "${program}" (${
          error instanceof Deno.errors.NotFound ? "not found" : "not executable"
        }): install the agent (docs/backends.md) or fix behavior.backend's command`,
      );
    }
    if (request.stderr) pipeText(child.stderr, request.stderr);
    const routes: Routes = {};
    const callback = callbackServer(routes);
    const holder: Holder = {
      sink: () => {},
    };
    const stream = acp.ndJsonStream(child.stdin, child.stdout);
    const connection = new acp.ClientSideConnection(() => ({
      sessionUpdate: (params) => {
        if (holder.replaying) return Promise.resolve();
        holder.translator ??= new UpdateTranslator(
          params.sessionId,
          (message) => holder.sink(message),
        );
        holder.translator.add(params.update);
        return Promise.resolve();
      },
      requestPermission: (params) => Promise.resolve(permissionAnswer(params, request)),
    }), stream);
    // Aborted while starting: no session to cancel yet.
    const kill = () => killQuietly(child);
    request.signal.addEventListener("abort", kill, { once: true });
    try {
      return await this.#open(connection, request, { child, routes, callback, holder });
    } catch (error) {
      await stop(child);
      await callback.shutdown();
      throw error;
    } finally {
      request.signal.removeEventListener("abort", kill);
    }
  }

  /** `initialize` and `session/new`; the session is kept for follow-ups. */
  async #open(
    connection: acp.ClientSideConnection,
    request: SessionRequest,
    parts: Pick<Live, "child" | "routes" | "callback"> & { holder: Holder },
  ): Promise<Live> {
    const { child, routes, callback, holder } = parts;
    const { agentCapabilities } = await orClosed(
      connection,
      connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} }),
    );
    const setup = {
      cwd: request.cwd,
      mcpServers: request.onCompleteTask
        ? [completeTaskMcp(callback, request.onFinish !== undefined)]
        : [],
      _meta: {
        systemPrompt: { append: request.systemPromptAppend },
        // claude-agent-acp reads Claude Code options here; other agents ignore it.
        claudeCode: {
          options: {
            allowedTools: request.allowedTools,
            disallowedTools: request.disallowedTools,
            model: request.model,
            maxTurns: request.maxTurns,
            ...(request.tools ? { tools: request.tools } : {}),
          },
        },
      },
    };
    const session = request.resume
      ? await reopen(connection, agentCapabilities, { ...setup, sessionId: request.resume }, holder)
      : await orClosed(connection, connection.newSession(setup));
    await this.#setMode(connection, session);
    const model = await setModel(connection, session, request.model);
    const live: Live = {
      child,
      connection,
      sessionId: session.sessionId,
      routes,
      callback,
      model,
      flush: () => holder.translator?.flush(),
      cost: () => holder.translator?.costUsd ?? 0,
      get sink() {
        return holder.sink;
      },
      set sink(value) {
        holder.sink = value;
      },
    };
    connection.closed.then(() => (live.closed = true));
    this.#live.set(session.sessionId, live);
    return live;
  }

  /** `session/set_mode` to the configured mode, when the agent offers it. */
  async #setMode(connection: acp.ClientSideConnection, session: acp.NewSessionResponse) {
    const mode = this.#agent.mode;
    if (!mode || !session.modes?.availableModes.some((m) => m.id === mode)) return;
    if (session.modes.currentModeId === mode) return;
    await orClosed(
      connection,
      connection.setSessionMode({ sessionId: session.sessionId, modeId: mode }),
    );
  }

  /**
   * End every agent process this backend holds.
   *
   * @returns Resolves once they have exited.
   */
  async release(): Promise<void> {
    const all = [...this.#live.values()];
    this.#live.clear();
    await Promise.all(all.map(async (live) => {
      await stop(live.child);
      await live.callback.shutdown();
    }));
  }
}

/**
 * Reopen a session the agent kept (a `continue` run resumed with `--resume`,
 * or a session whose process died): `session/resume` when the agent offers
 * it, else `session/load` with its replayed history ignored.
 *
 * @returns The session.
 * @throws {SessionGoneError} When the agent cannot reopen it; the runner starts a new one.
 */
async function reopen(
  connection: acp.ClientSideConnection,
  capabilities: acp.AgentCapabilities | undefined,
  request: acp.LoadSessionRequest,
  holder: Holder,
): Promise<acp.NewSessionResponse> {
  const gone = (why: string) =>
    new SessionGoneError(`cannot reopen session ${request.sessionId}: ${why}`);
  try {
    if (capabilities?.sessionCapabilities?.resume) {
      const response = await orClosed(connection, connection.unstable_resumeSession(request));
      return { ...response, sessionId: request.sessionId };
    }
    if (capabilities?.loadSession) {
      holder.replaying = true;
      const response = await orClosed(connection, connection.loadSession(request));
      return { ...response, sessionId: request.sessionId };
    }
  } catch (error) {
    if (error instanceof Error && error.message === CLOSED) throw error;
    throw gone(errorText(error));
  } finally {
    holder.replaying = false;
  }
  throw gone("the agent offers neither session/resume nor session/load");
}

/**
 * Switch the session to `wanted` through the agent's model config option
 * (`session/set_config_option`) when it is not already on it.
 *
 * @returns The model the session runs on, when known ("default" is not a model).
 * @throws {Error} When the agent offers models and `wanted` is not one of them.
 */
async function setModel(
  connection: acp.ClientSideConnection,
  session: acp.NewSessionResponse,
  wanted: string | undefined,
): Promise<string | undefined> {
  const option = session.configOptions?.find((candidate) =>
    candidate.category === "model" && candidate.type === "select"
  );
  const known = (value: string | undefined) => value && value !== "default" ? value : undefined;
  if (!option || option.type !== "select") {
    return wanted ?? known(session.models?.currentModelId);
  }
  const values = option.options.flatMap((entry) =>
    "options" in entry ? entry.options.map((inner) => inner.value) : [entry.value]
  );
  if (!wanted) return known(option.currentValue);
  if (!values.includes(wanted)) {
    throw new AgentSetupError(
      `the agent does not offer the model "${wanted}" (behavior.model, --model); it offers: ${
        values.join(", ")
      }`,
    );
  }
  if (option.currentValue !== wanted) {
    await orClosed(
      connection,
      connection.setSessionConfigOption({
        sessionId: session.sessionId,
        configId: option.id,
        value: wanted,
      }),
    );
  }
  return wanted;
}

function result(
  live: Live,
  stopReason: string,
  facts: { turns: number; usage: Record<string, number>; started: number; costBefore: number },
): AgentMessage {
  const subtype = stopReason === "cancelled"
    ? "error_during_execution"
    : stopReason === "max_turn_requests"
    ? "error_max_turns"
    : "success";
  return {
    type: "result",
    subtype,
    stop_reason: stopReason,
    num_turns: facts.turns,
    usage: facts.usage,
    total_cost_usd: Math.max(0, live.cost() - facts.costBefore),
    duration_ms: Math.round(performance.now() - facts.started),
    session_id: live.sessionId,
  };
}

/** The local HTTP endpoint the complete_task MCP server posts calls to, as `{tool, arguments}`. */
function callbackServer(routes: Routes): Deno.HttpServer {
  return Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (request) => {
    const body = await request.json() as { tool?: string; arguments?: unknown };
    if (body.tool === FINISH_NAME) {
      const call = body.arguments as FinishToolCall;
      return new Response(routes.onFinish ? await routes.onFinish(call) : FINISH_NOT_NOW);
    }
    const call = body.arguments as CompleteTaskCall;
    const text = routes.onCompleteTask ? await routes.onCompleteTask(call) : COMPLETE_TASK_NOT_NOW;
    return new Response(text);
  });
}

function completeTaskMcp(callback: Deno.HttpServer, finish: boolean): acp.McpServerStdio {
  const address = callback.addr as Deno.NetAddr;
  const script = new URL("./complete_task_mcp.ts", import.meta.url).href;
  return {
    name: COMPLETE_TASK_SERVER,
    command: Deno.execPath(),
    args: ["run", "--quiet", "--allow-net", "--allow-env", "--allow-read", script],
    env: [
      { name: CALLBACK_URL_ENV, value: `http://127.0.0.1:${address.port}/` },
      ...(finish ? [{ name: FINISH_TOOL_ENV, value: "1" }] : []),
    ],
  };
}

async function pipeText(stream: ReadableStream<Uint8Array>, to: (text: string) => void) {
  for await (const text of stream.pipeThrough(new TextDecoderStream())) to(text);
}

/**
 * End an agent process: SIGTERM, then SIGKILL when it is still there after
 * the grace. An agent may wait on its own work before exiting on SIGTERM
 * (opencode 1.18 waits for a background `npm install` that cannot finish
 * offline), and a run must not wait with it.
 */
async function stop(child: Deno.ChildProcess): Promise<void> {
  killQuietly(child);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((
    resolve,
  ) => (timer = setTimeout(() => resolve("late"), STOP_GRACE_MS)));
  const ended = await Promise.race([child.status, late]);
  clearTimeout(timer);
  if (ended === "late") {
    killQuietly(child, "SIGKILL");
    await child.status;
  }
}

function killQuietly(child: Deno.ChildProcess, signal: Deno.Signal = "SIGTERM"): void {
  try {
    child.kill(signal);
  } catch {
    // Already gone.
  }
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  const record = (error ?? {}) as { message?: unknown; data?: unknown };
  return typeof record.message === "string"
    ? `${record.message}${record.data ? `: ${JSON.stringify(record.data)}` : ""}`
    : JSON.stringify(error);
}

/**
 * A request's answer, or an error once the agent process has gone: the SDK
 * leaves requests pending when the connection closes.
 */
function orClosed<T>(connection: acp.ClientSideConnection, request: Promise<T>): Promise<T> {
  return Promise.race([
    request,
    connection.closed.then(() => {
      throw new Error(CLOSED);
    }),
  ]);
}
