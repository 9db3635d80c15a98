/**
 * The Agent Client Protocol backend: drives any agent that speaks ACP (Claude
 * through claude-agent-acp, Codex through codex-acp, Gemini CLI, opencode).
 * It spawns the agent's command (once per run when the agent can close
 * sessions), offers complete_task as a stdio MCP server the agent starts, and
 * emulates the Stop hook at the end of each prompt turn: the stop callback may
 * send a continuation prompt into the same session.
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
  type ProcessSettings,
  SessionGoneError,
  type SessionRequest,
  type SessionSettings,
} from "./port.ts";
import { permissionAnswer, promptUsage, UpdateTranslator } from "./_acp_updates.ts";
import { CALLBACK_URL_ENV, FINISH_TOOL_ENV } from "./complete_task_mcp.ts";
import { AgentSandbox } from "../sandbox/agent_sandbox.ts";
import { sandboxedAgent } from "./_acp_sandbox.ts";

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

/** What a session's permission requests are answered from. */
type PermissionSettings = Parameters<typeof permissionAnswer>[1];

const CLOSED = "the agent process ended";

/** How long an aborted prompt turn gets to end after `session/cancel` before the agent is killed. */
const CANCEL_GRACE_MS = 3_000;

/** How long an agent process gets to exit on SIGTERM before SIGKILL. */
const STOP_GRACE_MS = 3_000;

/**
 * One agent process: its connection, the complete_task callback its sessions'
 * MCP servers post to, and the sessions it holds.
 */
interface AgentProcess {
  /** The working directory and environment it was started with (see `processKey`). */
  key: string;
  child: Deno.ChildProcess;
  connection: acp.ClientSideConnection;
  /** `initialize`'s answer: the agent's capabilities; rejects when the agent did not start. */
  ready: Promise<acp.AgentCapabilities | undefined>;
  /**
   * Whether the agent ends a session on request (`session/close`): then one
   * process serves session after session, and no idle session is left behind.
   */
  reusable: boolean;
  routes: Routes;
  callback: Deno.HttpServer;
  sessions: Map<string, Live>;
  /** Where its stderr goes: the latest session's receiver; held until there is one. */
  stderr: { to?: (text: string) => void; held: string[] };
  /** Whether the process has gone. */
  closed: boolean;
  /** Sessions being opened in it. */
  opening: number;
  /** Set once it is being stopped: it is stopped once. */
  stopped?: Promise<void>;
}

/** One session in an agent process, kept for follow-up prompts. */
interface Live {
  agent: AgentProcess;
  sessionId: string;
  /** Where its messages go, as the current prompt says. */
  sink: (message: AgentMessage) => void;
  translator?: UpdateTranslator;
  /** While `session/load` replays the history: its updates are not this run's. */
  replaying?: boolean;
  settings: PermissionSettings;
  /** The model the agent says the session runs on (`session/new`'s current model). */
  model?: string;
  /** A prompt turn is running. */
  busy?: boolean;
}

/** Whether a session of the process is running a prompt turn. */
function atWork(agent: AgentProcess): boolean {
  return [...agent.sessions.values()].some((live) => live.busy);
}

/**
 * What an agent process is started with besides the command: a session can
 * use a process started with the same working directory and environment.
 */
function processKey(
  settings: Pick<SessionSettings, "cwd" | "env" | "sandbox" | "network">,
): string {
  return JSON.stringify([
    settings.cwd,
    settings.env ?? {},
    settings.sandbox ?? "auto",
    settings.network ?? "model",
  ]);
}

/**
 * Runs agent sessions over the Agent Client Protocol.
 *
 * An agent process outlives its session: an agent that ends sessions on
 * request (`session/close`: claude-agent-acp, codex-acp, opencode) serves every
 * new session of a run in one process, each a `session/new` there. For one that
 * cannot (Gemini CLI 0.61), {@linkcode AcpBackend.warm} starts the next
 * session's process ahead, while the current session works.
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
  /** The live processes: the latest session's, and any whose session is still at work. */
  readonly #processes = new Set<AgentProcess>();
  /** A process started ahead for the next new session ({@linkcode AcpBackend.warm}). */
  #spare: AgentProcess | undefined;
  /** Processes being stopped. */
  readonly #stopping = new Set<Promise<void>>();
  /** The private homes and /tmp folders of sandboxed agent processes. */
  readonly #sandbox = new AgentSandbox();

  /**
   * A backend that starts `agent.command` when a session needs a process.
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
   * prompt into that session; any other opens a session (one that resumes
   * another session reopens it, or throws {@linkcode SessionGoneError} when
   * the agent cannot) and closes the sessions before it. The new session runs
   * in the same agent process when the agent can close sessions, else in a
   * warm process or a new one, and the process before ends.
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
    const found = request.resume
      ? [...this.#processes].map((agent) => agent.sessions.get(request.resume!)).find(Boolean)
      : undefined;
    // A session whose process has died is reopened in a new one (see `reopen`).
    const held = found?.agent.closed ? undefined : found;
    const live = held ||
      await this.#open(request).catch((error) => {
        const Kind = error instanceof AgentSetupError
          ? AgentSetupError
          : error instanceof SessionGoneError
          ? SessionGoneError
          : Error;
        throw new Kind(`ACP agent ${this.name}: ${errorText(error)}`);
      });
    const agent = live.agent;
    live.busy = true;
    live.sink = sink;
    live.settings = request;
    agent.routes.onCompleteTask = request.onCompleteTask;
    agent.routes.onFinish = request.onFinish;
    agent.stderr.to = request.stderr;
    // A new session says which model the agent chose, as Claude Code's init does.
    if (!held && live.model) {
      sink({ type: "system", subtype: "init", session_id: live.sessionId, model: live.model });
    }
    // An abort cancels the prompt turn (`session/cancel`), so that the agent
    // stops its own tools; an agent that has not ended the turn by the grace
    // is killed.
    let killer: ReturnType<typeof setTimeout> | undefined;
    const cancel = () => {
      agent.connection.cancel({ sessionId: live.sessionId }).catch(() => {});
      killer = setTimeout(() => killQuietly(agent.child), CANCEL_GRACE_MS);
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
        live.busy = false;
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
    const cost = () => live.translator?.costUsd ?? 0;
    const costBefore = cost();
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
    const connection = live.agent.connection;
    const facts = () => ({ turns, usage, started, cost: Math.max(0, cost() - costBefore) });
    for (;;) {
      turns++;
      lastText = "";
      const response = await orClosed(
        connection,
        connection.prompt({
          sessionId: live.sessionId,
          prompt: [{ type: "text", text: prompt }],
        }),
      );
      live.translator?.flush();
      const tokens = promptUsage(response);
      usage.input_tokens += tokens.input;
      usage.output_tokens += tokens.output;
      usage.cache_read_input_tokens += tokens.cacheRead;
      if (response.stopReason !== "end_turn" || !request.onStop || request.signal.aborted) {
        return result(live.sessionId, response.stopReason, facts());
      }
      const decision = await request.onStop({
        stopHookActive: turns > 1,
        lastAssistantMessage: lastText,
        backgroundTasks: [],
      });
      if (!decision.block) return result(live.sessionId, response.stopReason, facts());
      prompt = decision.reason;
    }
  }

  /**
   * Open the request's session in a process: a live one with the same folder
   * and environment when the agent can close sessions, else the warm one or a
   * new one. Only the latest session is followed up (rescue, probe,
   * `continue`): the sessions before are closed and the processes before end,
   * but a session at work goes on (the verifier's, beside the agent's).
   */
  async #open(request: SessionRequest): Promise<Live> {
    const key = processKey(request);
    let agent = [...this.#processes].find((candidate) =>
      !candidate.closed && candidate.reusable && candidate.key === key
    );
    if (!agent) {
      const spare = this.#spare;
      this.#spare = undefined;
      if (spare && !spare.closed && spare.key === key) agent = spare;
      else {
        if (spare) this.#retire(spare);
        agent = this.#spawn(request, key);
      }
      this.#processes.add(agent);
    }
    for (const other of this.#processes) {
      if (other !== agent && !other.opening && !atWork(other)) this.#retire(other);
    }
    for (const [id, live] of agent.sessions) {
      if (live.busy) continue;
      agent.sessions.delete(id);
      agent.connection.unstable_closeSession({ sessionId: id }).catch(() => {});
    }
    // Aborted while starting: no session to cancel yet.
    const kill = () => killQuietly(agent.child);
    request.signal.addEventListener("abort", kill, { once: true });
    agent.opening++;
    try {
      const capabilities = await orClosed(agent.connection, agent.ready);
      return await this.#openSession(agent, capabilities, request);
    } catch (error) {
      if (error instanceof SessionGoneError && !agent.closed) throw error;
      this.#retire(agent);
      await agent.stopped;
      throw error;
    } finally {
      agent.opening--;
      request.signal.removeEventListener("abort", kill);
    }
  }

  /** Start an agent process and `initialize` it; the sessions come later. */
  #spawn(
    settings: Pick<SessionSettings, "cwd" | "env" | "sandbox" | "network">,
    key: string,
  ): AgentProcess {
    const [program, ...args] = this.#agent.command;
    const routes: Routes = {};
    // Made first: a sandbox whose network is an allowlist forwards its port.
    const callback = callbackServer(routes);
    let child: Deno.ChildProcess;
    try {
      const env = { ...settings.env, ...this.#agent.env };
      const boxed = sandboxedAgent(this.#sandbox, program, args, {
        cwd: settings.cwd,
        env,
        mode: settings.sandbox,
        agentEnv: this.#agent.env,
        network: { setting: settings.network, backend: this.name },
        forward: [(callback.addr as Deno.NetAddr).port],
      });
      child = new Deno.Command(boxed?.command ?? program, {
        args: boxed?.args ?? args,
        cwd: settings.cwd,
        env: boxed?.env ?? env,
        clearEnv: boxed !== undefined,
        stdin: "piped",
        stdout: "piped",
        stderr: "piped",
      }).spawn();
      if (boxed) this.#sandbox.track(child.status);
    } catch (error) {
      void callback.shutdown();
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
    const sessions = new Map<string, Live>();
    const stderr: AgentProcess["stderr"] = { held: [] };
    pipeText(child.stderr, (text) => {
      if (stderr.to) stderr.to(text);
      // A warm process's start-up errors are told to the session that takes it.
      else if (stderr.held.length < 100) stderr.held.push(text);
    });
    const connection = new acp.ClientSideConnection(() => ({
      sessionUpdate: (params) => {
        const live = sessions.get(params.sessionId);
        if (!live || live.replaying) return Promise.resolve();
        live.translator ??= new UpdateTranslator(params.sessionId, (message) => live.sink(message));
        live.translator.add(params.update);
        return Promise.resolve();
      },
      requestPermission: (params) => {
        const live = sessions.get(params.sessionId);
        // A session that is not this run's (any more) is refused.
        return Promise.resolve(
          live
            ? permissionAnswer(params, live.settings)
            : { outcome: { outcome: "cancelled" } } as acp.RequestPermissionResponse,
        );
      },
    }), acp.ndJsonStream(child.stdin, child.stdout));
    const agent: AgentProcess = {
      key,
      child,
      connection,
      reusable: false,
      routes,
      callback,
      sessions,
      stderr,
      closed: false,
      opening: 0,
      ready: connection.initialize({
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {},
      }).then(({ agentCapabilities }) => {
        agent.reusable = agentCapabilities?.sessionCapabilities?.close != null;
        return agentCapabilities;
      }),
    };
    // A warm process nobody takes must not report an unhandled rejection.
    agent.ready.catch(() => {});
    connection.closed.then(() => (agent.closed = true));
    return agent;
  }

  /** `session/new` (or the reopened session), its mode and model. */
  async #openSession(
    agent: AgentProcess,
    capabilities: acp.AgentCapabilities | undefined,
    request: SessionRequest,
  ): Promise<Live> {
    const { connection, callback } = agent;
    agent.stderr.to = request.stderr;
    for (const text of agent.stderr.held.splice(0)) request.stderr?.(text);
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
    const live: Live = {
      agent,
      sessionId: request.resume ?? "",
      sink: () => {},
      settings: request,
    };
    let session: acp.NewSessionResponse;
    if (request.resume) {
      agent.sessions.set(request.resume, live);
      try {
        session = await reopen(
          connection,
          capabilities,
          { ...setup, sessionId: request.resume },
          live,
        );
      } catch (error) {
        agent.sessions.delete(request.resume);
        throw error;
      }
    } else {
      session = await orClosed(connection, connection.newSession(setup));
      live.sessionId = session.sessionId;
      agent.sessions.set(session.sessionId, live);
    }
    await this.#setMode(connection, session);
    live.model = await setModel(connection, session, request.model);
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
   * Start the process of a later new session now, so that its start-up
   * overlaps the current session: for an agent that cannot close sessions
   * (each new session needs a new process), or before the first session. One
   * is kept: the next warm with other settings replaces it.
   *
   * @param settings The later session's settings (`resume` is not possible).
   */
  warm(settings: ProcessSettings): void {
    if (settings.resume) return;
    const key = processKey(settings);
    const serving = [...this.#processes].some((agent) =>
      !agent.closed && agent.reusable && agent.key === key
    );
    // A live process serves the next session itself.
    if (serving) return;
    const spare = this.#spare;
    if (spare && !spare.closed && spare.key === key) return;
    this.#spare = undefined;
    if (spare) this.#retire(spare);
    try {
      this.#spare = this.#spawn(settings, key);
    } catch {
      // the session that needs a process reports it
    }
  }

  /** Stop a process in the background, once; {@linkcode AcpBackend.release} waits for it. */
  #retire(agent: AgentProcess): void {
    this.#processes.delete(agent);
    if (agent.stopped) return;
    const stopped = (async () => {
      await stop(agent.child);
      await agent.callback.shutdown();
    })();
    agent.stopped = stopped;
    this.#stopping.add(stopped);
    stopped.finally(() => this.#stopping.delete(stopped));
  }

  /**
   * End every agent process this backend holds, the warm one too.
   *
   * @returns Resolves once they have exited.
   */
  async release(): Promise<void> {
    for (const agent of [...this.#processes, this.#spare]) if (agent) this.#retire(agent);
    this.#spare = undefined;
    await Promise.all([...this.#stopping]);
    await this.#sandbox.close();
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
  holder: Pick<Live, "replaying">,
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
  sessionId: string,
  stopReason: string,
  facts: { turns: number; usage: Record<string, number>; started: number; cost: number },
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
    total_cost_usd: facts.cost,
    duration_ms: Math.round(performance.now() - facts.started),
    session_id: sessionId,
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
