/**
 * The Claude Code backend: one session is one `query()` of the Claude Agent
 * SDK, which runs the Claude Code binary it ships.
 *
 * @module
 */

import config from "../../deno.json" with { type: "json" };
import { COMPLETE_TASK_SERVER, COMPLETE_TASK_TOOL } from "../record/complete_task_tool.ts";
import { FINISH_TOOL } from "../record/finish_call.ts";
import { ClaudeConversation, InputQueue, userMessage } from "./_claude_conversation.ts";
import { AgentSandbox } from "../sandbox/agent_sandbox.ts";
import { sandboxSpawner } from "./_claude_sandbox.ts";
import {
  completeTaskServer,
  EXIT_GRACE_MS,
  type Query,
  type Routes,
  type Sdk,
  type SdkOptions,
  sessionHooks,
  type SpareProcess,
} from "./_claude_process.ts";
import type {
  AgentBackend,
  AgentConversation,
  AgentMessage,
  ProcessSettings,
  SessionRequest,
} from "./port.ts";

/**
 * The SDK as the import map pins it, imported by a name the module graph
 * does not follow: the package brings Claude Code's binaries (746 MB for
 * Linux), downloaded at the first session instead of when the library loads.
 */
const SDK_MODULE: string = config.imports["@anthropic-ai/claude-agent-sdk/core"];

/** Options for {@linkcode ClaudeBackend}. */
export interface ClaudeBackendOptions {
  /** Path to a Claude Code executable; the SDK's bundled one when absent. */
  executable?: string;
}

/** A parked process started by {@linkcode ClaudeBackend.warm}, waiting for its session. */
interface Spare {
  key: string;
  routes: Routes;
  controller: AbortController;
  ready: Promise<SpareProcess>;
  /** The process, once it is parked. */
  parked?: SpareProcess;
}

/**
 * The settings a parked process is started with; the rest (working
 * directory, permission mode, appended system prompt) come with the session.
 */
function spareKey(settings: ProcessSettings): string {
  return JSON.stringify([
    settings.tools ?? null,
    settings.allowedTools,
    settings.disallowedTools,
    settings.permissionMode === "bypassPermissions",
    settings.model ?? null,
    settings.maxTurns ?? null,
    settings.maxBudgetUsd ?? null,
    settings.settingSources,
    settings.env ?? null,
    settings.completeTask,
    settings.finish ?? false,
    settings.stopHook,
    settings.refuseCommands ?? null,
    settings.systemPrompt ?? null,
    // A sandboxed process sees one checkout: it serves sessions in that folder only.
    settings.sandbox ?? "auto",
    settings.sandbox === "off" ? null : settings.cwd,
    settings.network ?? "model",
  ]);
}

/**
 * The settings a kept process has for good: those of a parked one, and the
 * ones its first session sent (working directory, permission mode, appended
 * system prompt, stderr).
 */
function keptKey(settings: ProcessSettings): string {
  return JSON.stringify([
    spareKey(settings),
    settings.cwd,
    settings.permissionMode,
    settings.systemPromptAppend,
  ]);
}

/**
 * A process whose session ended well, kept for the next session with the
 * same settings: after its result it was sent `/clear`, and `ready` tells
 * whether that started a new conversation.
 */
interface Kept {
  key: string;
  routes: Routes;
  controller: AbortController;
  query: Query;
  messages: AsyncIterator<unknown>;
  input: InputQueue;
  /** True once `/clear` answered with a new conversation; false when the process cannot serve. */
  ready: Promise<boolean>;
}

/** How long a kept process may take to answer `/clear` (it takes about 30 ms). */
const CLEAR_TIMEOUT_MS = 10_000;

function processSettings(request: SessionRequest): ProcessSettings {
  const { prompt: _prompt, onCompleteTask, onFinish, onStop, signal: _signal, ...settings } =
    request;
  return {
    ...settings,
    completeTask: onCompleteTask !== undefined,
    finish: onCompleteTask !== undefined && onFinish !== undefined,
    stopHook: onStop !== undefined,
  };
}

/**
 * Runs sessions through `query()` of `@anthropic-ai/claude-agent-sdk`. The SDK
 * is imported on first use (or by {@linkcode ClaudeBackend.preload}), so
 * commands that run no agent do not pay for it.
 *
 * Four ways to spend less time starting Claude Code:
 * - a session with `keep` leaves its process, once it ended well, to the next
 *   session with the same settings: a new conversation after `/clear`;
 * - {@linkcode ClaudeBackend.warm} starts and parks the next session's process
 *   while the current one works (the SDK's `prewarm()`);
 * - {@linkcode ClaudeBackend.conversation} keeps one process for many prompts
 *   (the SDK's streaming input), for the `continue` session mode;
 * - a session not kept ends at its result message; its process exits in the
 *   background.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ClaudeBackend } from "@finishline/agents";
 *
 * // Nothing is imported or started until the first session.
 * const backend = new ClaudeBackend({ executable: "/usr/local/bin/claude" });
 * assert.equal(backend.name, "claude");
 * await backend.release();
 * ```
 */
export class ClaudeBackend implements AgentBackend {
  /** Always "claude". */
  readonly name = "claude";
  #options: ClaudeBackendOptions;
  #sdk: Promise<Sdk> | undefined;
  #spare: Spare | undefined;
  /** Set once a parked process refused a session's folder: later ones would too. */
  #sparesRefused = false;
  /** Processes of finished sessions, still exiting. */
  #exiting = new Set<Promise<void>>();
  /** The process of the last session that asked to be kept, if it ended well. */
  #kept: Kept | undefined;
  /** Keys of sessions running now that will keep their process (a warm for them is not needed). */
  #keeping = new Map<string, number>();
  /** The private homes and /tmp folders of sandboxed sessions. */
  #sandbox = new AgentSandbox();

  /**
   * Create the backend; the SDK is loaded by the first session.
   *
   * @param options Backend settings.
   */
  constructor(options: ClaudeBackendOptions = {}) {
    this.#options = options;
  }

  /**
   * Start importing the SDK now, so that the first session does not wait for
   * it (the import reads about 2 MB of modules).
   *
   * @example
   * ```ts
   * import { ClaudeBackend } from "@finishline/agents";
   *
   * const backend = new ClaudeBackend();
   * backend.preload();
   * await backend.release();
   * ```
   */
  preload(): void {
    this.#load().catch(() => {
      // reported by the session that needs it
    });
  }

  #load(): Promise<Sdk> {
    return this.#sdk ??= import(SDK_MODULE) as Promise<Sdk>;
  }

  /** The SDK options of one Claude Code process. */
  #sdkOptions(
    sdk: Sdk,
    settings: ProcessSettings,
    routes: Routes,
    controller: AbortController,
  ): SdkOptions {
    const bypass = settings.permissionMode === "bypassPermissions";
    return {
      abortController: controller,
      cwd: settings.cwd,
      tools: settings.tools,
      allowedTools: settings.completeTask
        ? [...settings.allowedTools, COMPLETE_TASK_TOOL, ...(settings.finish ? [FINISH_TOOL] : [])]
        : settings.allowedTools,
      mcpServers: settings.completeTask
        ? { [COMPLETE_TASK_SERVER]: completeTaskServer(sdk, routes, settings.finish) }
        : undefined,
      hooks: sessionHooks(settings, routes),
      disallowedTools: settings.disallowedTools,
      permissionMode: settings.permissionMode,
      allowDangerouslySkipPermissions: bypass || undefined,
      model: settings.model,
      maxTurns: settings.maxTurns,
      maxBudgetUsd: settings.maxBudgetUsd,
      resume: settings.resume,
      settingSources: settings.settingSources,
      systemPrompt: settings.systemPrompt ?? {
        type: "preset",
        preset: "claude_code",
        append: settings.systemPromptAppend,
      },
      env: { ...Deno.env.toObject(), ...settings.env },
      pathToClaudeCodeExecutable: this.#options.executable,
      spawnClaudeCodeProcess: sandboxSpawner(this.#sandbox, settings),
      stderr: settings.stderr,
    };
  }

  /**
   * Start the process of a later new session now and park it (the SDK's
   * `prewarm()`): Claude Code boots, loads its tools and connects the
   * complete_task server while the current session works. The session that
   * claims it sends its folder then, so the git status and CLAUDE.md the
   * agent sees are read at that moment, not now. One process is kept: the
   * next warm with other settings replaces it, one with the same settings
   * keeps it; a session with other settings leaves it parked.
   *
   * @param settings The later session's settings (`resume` is not possible).
   */
  warm(settings: ProcessSettings): void {
    // Asked twice for the same settings (the CLI warms the first process before the loop does):
    // the process already starting serves both.
    if (this.#spare && !settings.resume && this.#spare.key === spareKey(settings)) return;
    // The session running now keeps its process for the next one, or a kept one waits.
    const key = keptKey(settings);
    if (!settings.resume && (this.#keeping.has(key) || this.#kept?.key === key)) return;
    this.#discardSpare();
    if (settings.resume || this.#sparesRefused) return;
    const routes: Routes = {};
    const controller = new AbortController();
    const ready = this.#load().then((sdk) => {
      const { cwd: _cwd, permissionMode: _mode, resume: _resume, ...options } = this.#sdkOptions(
        sdk,
        settings,
        routes,
        controller,
      );
      return sdk.prewarm({
        options: {
          ...options,
          systemPrompt: settings.systemPrompt ?? { type: "preset", preset: "claude_code" },
        },
      });
    });
    const spare: Spare = { key: spareKey(settings), routes, controller, ready };
    ready.then((parked) => spare.parked = parked, () => {
      // the session falls back to query(), which reports the problem
    });
    this.#spare = spare;
  }

  /**
   * Stop the spare by one path: a parked one is closed; one still starting
   * is aborted, which ends its process (the SDK then removes its folder).
   * Each path of the SDK waits for the process's exit with two more "exit"
   * listeners on it, until it exits: aborted and closed both, a spare took
   * 11, and Node printed a MaxListenersExceededWarning at the end of the run.
   */
  #discardSpare(): void {
    const spare = this.#spare;
    this.#spare = undefined;
    if (!spare) return;
    if (spare.parked) spare.parked.close();
    else spare.controller.abort();
  }

  /** The parked process for these settings, if there is one. */
  #takeSpare(settings: ProcessSettings): Spare | undefined {
    const spare = this.#spare;
    if (!spare || settings.resume || spare.key !== spareKey(settings)) return undefined;
    this.#spare = undefined;
    return spare;
  }

  /**
   * Bind a parked process to a session. Undefined when it cannot serve it
   * (it died, or refused the folder or permission mode): then the session
   * starts the usual way, and its prompt has not run.
   */
  async #claim(
    spare: Spare,
    request: SessionRequest,
    input: InputQueue | undefined,
  ): Promise<Query | undefined> {
    try {
      const parked = await spare.ready;
      const query = parked.claim({
        prompt: input ?? request.prompt,
        options: {
          cwd: request.cwd,
          permissionMode: request.permissionMode,
          appendSystemPrompt: request.systemPromptAppend,
        },
      });
      try {
        await parked.claimed;
      } catch (error) {
        query.close();
        // The folder's settings (env, model, ...) rule parked processes out for this run.
        this.#sparesRefused = true;
        request.stderr?.(
          `finishline: the parked Claude Code process refused the session (${
            error instanceof Error ? error.message : error
          }); starting a new one\n`,
        );
        return undefined;
      }
      return query;
    } catch {
      return undefined;
    }
  }

  /**
   * Run one Claude Code session. It ends at the result message; the process
   * then exits in the background ({@linkcode ClaudeBackend.release} waits), or
   * with `keep` and a successful result, is sent `/clear` and kept for the next
   * session with the same settings (which then takes it instead of a parked one).
   *
   * @param request Prompt and settings.
   * @returns The SDK's messages.
   * @example
   * ```ts ignore
   * // Needs Claude Code and an API key (or a ScriptedModelServer from
   * // @finishline/agents/testing in ANTHROPIC_BASE_URL).
   * import { ClaudeBackend } from "@finishline/agents";
   * import { SummaryBuilder } from "../loop/summary_builder.ts";
   *
   * const builder = new SummaryBuilder(1);
   * for await (
   *   const message of new ClaudeBackend().session({
   *     prompt: "List the files in this folder",
   *     systemPromptAppend: "",
   *     cwd: Deno.cwd(),
   *     allowedTools: ["Bash"],
   *     disallowedTools: [],
   *     permissionMode: "default",
   *     settingSources: [],
   *     signal: AbortSignal.timeout(120_000),
   *   })
   * ) {
   *   builder.add(message);
   * }
   * console.log(builder.finish(0).assistantResponses.at(-1));
   * ```
   */
  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    const sdk = await this.#load();
    const settings = processSettings(request);
    const keep = request.keep === true && !settings.resume;
    const key = keptKey(settings);
    const callbacks = {
      onCompleteTask: request.onCompleteTask,
      onFinish: request.onFinish,
      onStop: request.onStop,
    };
    const kept = settings.resume ? undefined : await this.#takeKept(key);
    const spare = kept ? undefined : this.#takeSpare(settings);
    if (keep) this.#keeping.set(key, (this.#keeping.get(key) ?? 0) + 1);
    if (kept || spare) request.onWarmTaken?.();
    let routes: Routes = kept?.routes ?? spare?.routes ?? {};
    let controller = kept?.controller ?? spare?.controller ?? new AbortController();
    const abort = () => controller.abort(request.signal.reason);
    request.signal.addEventListener("abort", abort, { once: true });
    // A process to keep reads its prompts from a queue that stays open after the result.
    let input = kept?.input ?? (keep ? new InputQueue() : undefined);
    let query: Query | undefined = kept?.query;
    let messages = kept?.messages;
    let settled = false;
    try {
      Object.assign(routes, callbacks);
      if (kept) {
        input!.push(userMessage(request.prompt));
      } else if (spare && !request.signal.aborted) {
        // Sent with the claim; a refused claim answers it with an error, and the session starts anew.
        input?.push(userMessage(request.prompt));
        query = await this.#claim(spare, request, input);
      }
      if (!query) {
        routes = { ...callbacks };
        controller = new AbortController();
        input = keep ? new InputQueue() : undefined;
        if (input) input.push(userMessage(request.prompt));
        query = sdk.query({
          prompt: input ?? request.prompt,
          options: this.#sdkOptions(sdk, settings, routes, controller),
        });
      }
      if (request.signal.aborted) abort();
      messages ??= query[Symbol.asyncIterator]();
      for (;;) {
        const next = await messages.next();
        if (next.done) return;
        const message = next.value as unknown as AgentMessage;
        if (message.type === "result") {
          // Settled before the result is handed on: whatever the reader does next, the process is looked after.
          settled = true;
          if (keep && input && message.subtype === "success" && message.is_error !== true) {
            this.#keep({ key, routes, controller, query, messages, input });
          } else {
            input?.end();
            this.#letExit(messages, query);
          }
          yield message;
          return;
        }
        yield message;
      }
    } finally {
      request.signal.removeEventListener("abort", abort);
      if (keep) {
        const left = (this.#keeping.get(key) ?? 1) - 1;
        if (left > 0) this.#keeping.set(key, left);
        else this.#keeping.delete(key);
      }
      for (const name of Object.keys(callbacks) as Array<keyof Routes>) {
        if (routes[name] === callbacks[name]) routes[name] = undefined;
      }
      if (!settled) {
        input?.end();
        query?.close();
      }
    }
  }

  /** The kept process for these settings, once its `/clear` answered; undefined if none can serve. */
  async #takeKept(key: string): Promise<Kept | undefined> {
    const kept = this.#kept;
    if (!kept || kept.key !== key) return undefined;
    this.#kept = undefined;
    if (await kept.ready) return kept;
    kept.input.end();
    kept.query.close();
    return undefined;
  }

  /**
   * Keep a process whose session ended well: send it `/clear` now, so that
   * the next session finds a new conversation ready. Its messages (the reset,
   * the command's own empty result) are not the next session's.
   */
  #keep(entry: Omit<Kept, "ready">): void {
    this.#discardKept();
    const clear = userMessage("/clear");
    const ready = (async () => {
      const timer = setTimeout(() => entry.controller.abort(), CLEAR_TIMEOUT_MS);
      let reset = false;
      try {
        entry.input.push(clear);
        for (;;) {
          const next = await entry.messages.next();
          if (next.done) return false;
          const message = next.value as { type?: string; subtype?: string; is_error?: boolean };
          if (message.type === "conversation_reset") reset = true;
          if (message.type === "result") {
            return reset && message.subtype === "success" && message.is_error !== true;
          }
        }
      } catch {
        return false;
      } finally {
        clearTimeout(timer);
      }
    })();
    const kept: Kept = { ...entry, ready };
    this.#kept = kept;
    ready.then((ok) => {
      // A process that did not start a new conversation is let go at once.
      if (!ok && this.#kept === kept) this.#discardKept();
    });
  }

  /** End the kept process, if any: its input ends and it exits (killed after a grace period). */
  #discardKept(): void {
    const kept = this.#kept;
    this.#kept = undefined;
    if (!kept) return;
    kept.input.end();
    this.#letExit(kept.messages, kept.query);
  }

  /** Let a finished session's process exit on its own, within a grace period. */
  #letExit(messages: AsyncIterator<unknown>, query: Query): void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const exited = (async () => {
      timer = setTimeout(() => query.close(), EXIT_GRACE_MS);
      try {
        while (!(await messages.next()).done) {
          // nothing follows a result that the runner needs
        }
      } catch {
        // the process ended badly after its result: nothing to report
      } finally {
        clearTimeout(timer);
      }
    })();
    this.#exiting.add(exited);
    exited.finally(() => this.#exiting.delete(exited));
  }

  /**
   * Open a conversation: one Claude Code process fed prompt after prompt
   * through the SDK's streaming input, so later prompts cost no process start.
   *
   * @param settings The process's settings.
   * @returns The conversation; the process starts at once and waits for the first prompt.
   */
  conversation(settings: ProcessSettings): AgentConversation {
    return new ClaudeConversation((routes, controller) =>
      this.#load().then((sdk) => ({
        sdk,
        options: this.#sdkOptions(sdk, settings, routes, controller),
      }))
    );
  }

  /**
   * Stop the warm process, if any, and wait for finished sessions' processes
   * to exit.
   *
   * @returns Resolves once they are gone.
   */
  async release(): Promise<void> {
    this.#discardSpare();
    this.#discardKept();
    await Promise.all([...this.#exiting]);
    await this.#sandbox.close();
  }
}
