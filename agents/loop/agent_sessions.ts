/**
 * The agent processes of a run: the settings every session starts with,
 * the parked process of the next `fresh` session, the live conversation of
 * the `continue` mode, one session with its hang watchdog and its watch on
 * Claude Code's API retries, and follow-up prompts (probe, rescue) into the
 * iteration's session.
 *
 * @module
 */

import type {
  AgentConversation,
  AgentMessage,
  CommandRefusal,
  ProcessSettings,
  SessionPermissionMode,
  SessionRequest,
  SessionSettings,
} from "../backends/port.ts";
import type { AgentBehavior, NetworkSetting, SandboxMode } from "../definition/definition_types.ts";
import { firstLine } from "../support/errors.ts";
import type { SummaryBuilder } from "./summary_builder.ts";
import { fatalApiRetry } from "./faults.ts";
import { HELD_OUT_NOTICE, workerTestNotice } from "./reproduce.ts";
import type { RunState } from "./state.ts";

/** How one session ended. */
export interface SessionEnd {
  /** What the backend threw, if anything. */
  error: unknown;
  /** The watchdog aborted a session that sent nothing for too long. */
  hung: boolean;
  /** The run's time budget ran out during the session. */
  budget: boolean;
  /**
   * How long the run's API retries waited in all, when that went beyond
   * `retry.maxWaitSeconds` and the session was ended for it.
   */
  waitedMs?: number;
  /** For API retries after connection errors: why the API host cannot be reached, as probed. */
  connectionCause?: string;
}

/** One session's prompt, callbacks and limits. */
export type SessionAsk =
  & Pick<SessionRequest, "prompt" | "resume" | "onCompleteTask" | "onFinish" | "onStop">
  & {
    /** Aborts this session only. */
    signal?: AbortSignal;
    /** The iteration's own session (not a follow-up): the next one may be warmed during it. */
    main?: boolean;
    /** Not stopped by the run's time budget (the final rescue, bounded by its own timeout). */
    pastTimeBudget?: boolean;
  };

/** What a run's sessions are started with, before its budget is spent. */
export interface SessionSettingsInput {
  /** The definition's behavior. */
  behavior: AgentBehavior;
  /** The system prompt's appended part. */
  systemPrompt: string;
  /** The agent's working directory. */
  cwd: string;
  /** The CLI's permission mode, over the definition's. */
  permissionMode?: SessionPermissionMode;
  /** The agent's environment additions. */
  env?: Record<string, string>;
  /** Commands the agent may not run. */
  refuseCommands?: CommandRefusal[];
  /** Cost already spent (earlier iterations and this session so far). */
  spentUsd: number;
  /** `verify.sandbox`. @default "auto" */
  sandbox?: SandboxMode;
  /** `verify.network`. @default "model" */
  network?: NetworkSetting;
}

/**
 * The settings of one session of a run. The runner and the CLI (which starts
 * the first Claude Code process while the run is still being set up) both
 * use it, so the process they start is the one the first session can claim.
 *
 * @param input The run's settings and what it spent.
 * @returns The session's settings.
 */
export function sessionSettings(input: SessionSettingsInput): SessionSettings {
  const { behavior } = input;
  return {
    systemPromptAppend: input.systemPrompt,
    cwd: input.cwd,
    allowedTools: behavior.allowedTools,
    disallowedTools: behavior.disallowedTools,
    permissionMode: input.permissionMode ?? behavior.permissionMode,
    model: behavior.model,
    maxTurns: behavior.maxTurns,
    // Rounded so that the same budget computed twice compares equal (warm processes).
    maxBudgetUsd: behavior.maxBudgetUsd !== undefined
      ? Math.max(0, Math.round((behavior.maxBudgetUsd - input.spentUsd) * 1e6) / 1e6)
      : undefined,
    settingSources: behavior.settingSources,
    env: input.env,
    refuseCommands: input.refuseCommands,
    sandbox: input.sandbox,
    network: input.network,
  };
}

/**
 * The settings of a worker's process (parked ahead, or the `continue` mode's
 * conversation): its sessions get complete_task, the finish tool when it is
 * on, and the Stop hook. The CLI's first warm uses it too, so that the loop
 * can claim that process.
 *
 * @param settings The sessions' settings.
 * @param finishTool `finish.tool` of the definition.
 * @returns The process's settings.
 */
export function workerProcess(settings: SessionSettings, finishTool: boolean): ProcessSettings {
  return { ...settings, completeTask: true, finish: finishTool, stopHook: true };
}

/** Starts and feeds the agent's sessions for one run. */
export class AgentSessions {
  readonly #state: RunState;
  /** The Claude Code process kept across iterations in the `continue` session mode. */
  #live: AgentConversation | undefined;

  /**
   * Serve the sessions of a run.
   *
   * @param state The run.
   */
  constructor(state: RunState) {
    this.#state = state;
  }

  /**
   * What every session of this run is started with.
   *
   * @param spent Cost not yet in the run's total.
   * @returns The settings.
   */
  settings(spent: number): SessionSettings {
    const { behavior, options } = this.#state;
    const gated = options.repoChecks !== undefined && options.git !== undefined;
    const plan = this.#state.reproductionPlan;
    const notices = [
      ...(gated && plan.heldOut ? [HELD_OUT_NOTICE] : []),
      ...(gated && plan.workerTest ? [workerTestNotice(plan.workerTest)] : []),
    ];
    return sessionSettings({
      behavior,
      systemPrompt: notices.length > 0
        ? [options.systemPrompt, ...notices].join("\n\n").trim()
        : options.systemPrompt,
      cwd: options.cwd,
      permissionMode: options.permissionMode,
      env: options.env,
      refuseCommands: options.refuseCommands,
      spentUsd: this.#state.costUsd + spent,
      sandbox: this.#state.definition.verify.sandbox,
      network: this.#state.definition.verify.network,
    });
  }

  /**
   * In the `fresh` session mode, start the process of the session after
   * `iteration` now, so that its start-up (about 0.3 s) overlaps this one.
   *
   * @param iteration The iteration now running (0 before the first).
   * @param builder Its summary so far, whose cost counts against the budget.
   */
  warmNext(iteration: number, builder?: SummaryBuilder): void {
    const { behavior, options, signal } = this.#state;
    const backend = options.backend;
    if (
      !backend.warm || behavior.session !== "fresh" || !behavior.prewarm ||
      iteration >= options.maxIterations || signal.aborted
    ) return;
    backend.warm(
      workerProcess(
        this.settings(builder?.current.costUsd ?? 0),
        this.#state.definition.finish.tool,
      ),
    );
  }

  /**
   * The conversation for the `continue` session mode: the live one, or a new
   * one that resumes `resume`. None when the backend has no conversations.
   *
   * @param resume The session to continue.
   * @param spent Cost not yet in the run's total.
   * @returns The conversation, or undefined.
   */
  conversation(resume: string | undefined, spent: number): AgentConversation | undefined {
    const backend = this.#state.options.backend;
    if (this.#state.behavior.session !== "continue" || !backend.conversation) return undefined;
    if (this.#live && resume && this.#live.sessionId && this.#live.sessionId !== resume) {
      this.close();
    }
    this.#live ??= backend.conversation({
      ...workerProcess(this.settings(spent), this.#state.definition.finish.tool),
      resume,
    });
    return this.#live;
  }

  /**
   * End the live conversation, if any.
   *
   * @returns Resolves once its process has exited.
   */
  close(): Promise<void> {
    const live = this.#live;
    this.#live = undefined;
    return live?.close() ?? Promise.resolve();
  }

  /**
   * Run one agent session into the builder, with a watchdog that aborts a
   * session that sends no message for `retry.iterationTimeoutSeconds`, and a
   * watch on Claude Code's API retries that aborts it when a retry cannot help
   * (a rejected key, say) or the run's retries waited beyond
   * `retry.maxWaitSeconds`; the others are reported as they come. In the
   * `continue` mode the prompt goes into the live conversation; a session that
   * fails ends it, and the next prompt starts one that resumes the session.
   *
   * @param builder The iteration's summary builder.
   * @param ask The prompt, callbacks and limits.
   * @returns How the session ended.
   */
  async run(builder: SummaryBuilder, ask: SessionAsk): Promise<SessionEnd> {
    const state = this.#state;
    const iteration = builder.current.iteration;
    const watchdog = new AbortController();
    const stop = new AbortController();
    const idleMs = state.definition.retry.iterationTimeoutSeconds * 1000;
    let timer = setTimeout(() => watchdog.abort(), idleMs);
    const budget = ask.pastTimeBudget ? undefined : this.#timeBudget();
    const signal = AbortSignal.any(
      [state.signal, watchdog.signal, stop.signal, budget, ask.signal].filter((s) =>
        s !== undefined
      ),
    );
    const spent = builder.current.costUsd;
    const live = this.conversation(ask.resume, spent);
    const started = state.now();
    let failed = false;
    let waitedMs: number | undefined;
    // The cause of this session's connection errors, probed at the first one.
    const connection: { probe?: Promise<string | undefined>; cause?: string } = {};
    // With a budget, the next session's cap is known only once this one has ended.
    const warmsNext = ask.main === true && state.behavior.maxBudgetUsd === undefined;
    // Its process serves the next iteration after a /clear (no process start, none to warm).
    const keep = warmsNext && !ask.resume && state.behavior.session === "fresh" &&
      state.behavior.prewarm && iteration < state.options.maxIterations;
    try {
      const turn = {
        prompt: ask.prompt,
        onCompleteTask: ask.onCompleteTask,
        onFinish: ask.onFinish,
        onStop: ask.onStop,
      };
      const messages: AsyncIterable<AgentMessage> = live
        ? live.send({ ...turn, signal })
        : state.options.backend.session({
          ...this.settings(spent),
          ...turn,
          resume: ask.resume,
          signal,
          // The next process starts as soon as this one is taken, beside its whole session.
          onWarmTaken: warmsNext ? () => this.warmNext(iteration) : undefined,
          keep,
        });
      let first = true;
      for await (const message of messages) {
        if (first && warmsNext) {
          // The agent is at work (in a process it did not take warm): start the next one beside it.
          this.warmNext(iteration);
        }
        first = false;
        clearTimeout(timer);
        timer = setTimeout(() => watchdog.abort(), idleMs);
        const retries = builder.apiRetries;
        this.#add(builder, message);
        if (builder.apiRetries > retries) {
          const verdict = await this.#apiRetry(builder, connection);
          if (verdict !== "wait") {
            if (verdict === "over_budget") waitedMs = state.apiRetryWaitMs;
            stop.abort();
          }
        }
        if (watchdog.signal.aborted || stop.signal.aborted) break;
      }
      failed = watchdog.signal.aborted || stop.signal.aborted;
      return {
        error: undefined,
        hung: watchdog.signal.aborted,
        budget: budget?.aborted ?? false,
        waitedMs,
        connectionCause: connection.cause,
      };
    } catch (error) {
      failed = true;
      return {
        error,
        hung: watchdog.signal.aborted,
        budget: budget?.aborted ?? false,
        waitedMs,
        connectionCause: connection.cause,
      };
    } finally {
      clearTimeout(timer);
      builder.current.agentMs = (builder.current.agentMs ?? 0) + Math.round(state.now() - started);
      if (live && (failed || signal.aborted)) await this.close();
    }
  }

  /**
   * Resume the iteration's session with a follow-up prompt (probe, rescue);
   * its messages join the iteration's summary.
   *
   * @param builder The iteration's summary builder.
   * @param prompt The follow-up prompt.
   * @param timeoutMs How long it may take.
   * @param options `pastTimeBudget`: not stopped by the run's spent time budget.
   * @returns The agent's reply, or undefined when it timed out or there is no session.
   */
  async followUp(
    builder: SummaryBuilder,
    prompt: string,
    timeoutMs: number,
    options: { pastTimeBudget?: boolean } = {},
  ): Promise<string | undefined> {
    const state = this.#state;
    const sessionId = builder.current.sessionId;
    if (!sessionId) return undefined;
    const before = builder.current.assistantResponses.length;
    const signal = AbortSignal.any([state.signal, AbortSignal.timeout(timeoutMs)]);
    const { error } = await this.run(builder, {
      prompt,
      resume: sessionId,
      signal,
      pastTimeBudget: options.pastTimeBudget,
    });
    if (error !== undefined && !state.signal.aborted) {
      state.emit({
        type: "follow_up_failed",
        iteration: builder.current.iteration,
        error: signal.aborted ? `timed out after ${timeoutMs} ms` : firstLine(error),
      });
      if (signal.aborted) return undefined;
    }
    return builder.current.assistantResponses.slice(before).join("\n");
  }

  /** A signal that fires when the run's time budget is spent; none without one. */
  #timeBudget(): AbortSignal | undefined {
    const { behavior, now, started } = this.#state;
    if (behavior.maxDurationSeconds === undefined) return undefined;
    return AbortSignal.timeout(
      Math.max(0, behavior.maxDurationSeconds * 1000 - (now() - started)),
    );
  }

  /**
   * Judge Claude Code's latest API retry: one that cannot help ends the
   * session; the others are reported and their waits counted against the
   * run's wait budget. Claude Code names no cause for a connection error:
   * the API host is probed once per session to name it.
   */
  async #apiRetry(
    builder: SummaryBuilder,
    connection: { probe?: Promise<string | undefined>; cause?: string },
  ): Promise<"fatal" | "over_budget" | "wait"> {
    const state = this.#state;
    const retry = builder.lastApiRetry!;
    if (fatalApiRetry(retry, builder.apiKeySource)) return "fatal";
    const probe = state.options.connectionCause;
    if (retry.status === null && probe) {
      connection.probe ??= probe().catch(() => undefined);
      connection.cause = await connection.probe;
    }
    state.apiRetryWaitMs += retry.waitMs;
    state.emit({
      type: "api_retry",
      iteration: builder.current.iteration,
      ...retry,
      ...(connection.cause && retry.status === null ? { cause: connection.cause } : {}),
    });
    return state.apiRetryWaitMs > state.definition.retry.maxWaitSeconds * 1000
      ? "over_budget"
      : "wait";
  }

  /** Add a message to the summary, log it and report new tools and texts. */
  #add(builder: SummaryBuilder, message: AgentMessage): void {
    const state = this.#state;
    const iteration = builder.current.iteration;
    state.emit({ type: "message", iteration, message });
    const before = builder.current.toolsUsed.length;
    const textsBefore = builder.current.assistantResponses.length;
    builder.add(message);
    for (const name of builder.current.toolsUsed.slice(before)) {
      state.emit({ type: "tool", iteration, name });
    }
    for (const text of builder.current.assistantResponses.slice(textsBefore)) {
      state.emit({ type: "text", iteration, text });
    }
  }
}
