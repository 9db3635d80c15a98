/**
 * The model of the finish workflow's model steps: one tool-less Claude Code
 * conversation on a lightweight model (`finish.model`), its own short
 * system prompt, a cost cap over every attempt of the run's finish, and a
 * reason for each step that must fall back to what the run recorded.
 *
 * @module
 */

import type { AgentBackend, AgentConversation, AgentMessage } from "../backends/port.ts";
import type { TokenUsage } from "../record/iteration.ts";
import { firstLine } from "../support/errors.ts";
import { roundUsd, usd } from "../support/format.ts";
import type { FinishUsage, RunStore } from "../store/mod.ts";
import { SummaryBuilder } from "../loop/summary_builder.ts";

/** How long one model step may take. */
const STEP_TIMEOUT_MS = 90_000;

/** The finish model's system prompt: it replaces Claude Code's own, which a question needs none of. */
export const FINISH_SYSTEM_PROMPT =
  "You are the finish step of a coding-agent runner. You read the record of a finished run and " +
  "answer each question about it with JSON only, exactly in the shape asked for, no prose and no " +
  "code fence. You have no tools. Be brief and concrete: name files, commands and errors.";

/** Options of {@linkcode FinishModel}. */
export interface FinishModelOptions {
  /** The backend; without one, every model step falls back. */
  backend?: AgentBackend;
  /** The lightweight model. */
  model: string;
  /** The cost cap of the model steps in USD, over every attempt of this run's finish. */
  maxCostUsd: number;
  /** Working directory of the session. */
  cwd: string;
  /** The history: the running cost is read from and added to the run's finish record. */
  store: RunStore;
  /** The run. */
  runId: string;
  /** The record of the run, put before the first question of a conversation. */
  context: () => string;
  /** Why no model step may run at all (an interrupted run); undefined when they may. */
  disabled?: string;
  /** Stops the session (an interrupt). */
  signal?: AbortSignal;
  /** Records events. */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
}

/** What one question cost. */
interface ModelReply {
  text: string;
  costUsd: number;
  tokens: TokenUsage;
}

/** A model step's answer, or why the step falls back. */
export type ModelAnswer = { text: string } | { skipped: string };

/**
 * Asks the finish model one question per step. The first question of a
 * conversation carries the run's record; later ones build on it. Before each
 * question the cap is checked against what the finish spent so far (a step
 * that starts under the cap may end a little over it); after a failed
 * session, the steps left fall back without trying again.
 */
export class FinishModel {
  #options: FinishModelOptions;
  #conversation: AgentConversation | undefined;
  #asked = 0;
  #broken: string | undefined;

  /**
   * A model for one finish attempt.
   *
   * @param options Backend, model, cap, history and context.
   */
  constructor(options: FinishModelOptions) {
    this.#options = options;
  }

  /**
   * Ask one step's question.
   *
   * @param step The step, for the events.
   * @param question The question (with its step's marker).
   * @returns The model's text, or why the step falls back.
   */
  async ask(step: string, question: string): Promise<ModelAnswer> {
    const skipped = this.#skipReason();
    if (skipped) return { skipped };
    // A conversation has the run's record from its first question on; lone sessions need it each time.
    const first = this.#asked++ === 0 || !this.#options.backend?.conversation;
    const prompt = first ? `${this.#options.context()}\n\n${question}` : question;
    let reply: ModelReply;
    try {
      reply = await this.#send(prompt);
    } catch (error) {
      this.#broken = firstLine(error);
      this.#options.onEvent?.("finish_model_failed", { step, error: this.#broken });
      return { skipped: `the finish model failed (${this.#broken})` };
    }
    const usage: FinishUsage = {
      model: this.#options.model,
      requests: 1,
      costUsd: reply.costUsd,
      tokens: reply.tokens,
    };
    this.#options.store.addFinishUsage(this.#options.runId, usage);
    this.#options.onEvent?.("finish_model", {
      step,
      model: this.#options.model,
      costUsd: roundUsd(reply.costUsd),
      tokens: reply.tokens,
    });
    return { text: reply.text };
  }

  /** End the conversation, if one was opened. */
  async close(): Promise<void> {
    await this.#conversation?.close().catch(() => {});
    this.#conversation = undefined;
  }

  #skipReason(): string | undefined {
    const { backend, maxCostUsd, disabled, store, runId } = this.#options;
    if (disabled) return disabled;
    if (!backend) return "no model backend";
    if (maxCostUsd <= 0) return "finish.maxCostUsd is 0";
    if (this.#broken) return `the finish model failed earlier (${this.#broken})`;
    if (this.#options.signal?.aborted) return "the finish was interrupted";
    const spent = store.getFinish(runId).usage?.costUsd ?? 0;
    if (spent >= maxCostUsd) {
      return `the finish cost cap of ${usd(maxCostUsd)} is reached (${usd(spent)} spent)`;
    }
    return undefined;
  }

  async #send(prompt: string): Promise<ModelReply> {
    const { backend, model, cwd } = this.#options;
    const stop = new AbortController();
    const signal = AbortSignal.any([
      stop.signal,
      AbortSignal.timeout(STEP_TIMEOUT_MS),
      ...(this.#options.signal ? [this.#options.signal] : []),
    ]);
    const settings = {
      systemPromptAppend: "",
      systemPrompt: FINISH_SYSTEM_PROMPT,
      cwd,
      tools: [],
      allowedTools: [],
      disallowedTools: [],
      permissionMode: "default" as const,
      model,
      settingSources: [],
    };
    let messages: AsyncIterable<AgentMessage>;
    if (backend!.conversation) {
      this.#conversation ??= backend!.conversation({
        ...settings,
        completeTask: false,
        stopHook: false,
      });
      messages = this.#conversation.send({ prompt, signal });
    } else {
      messages = backend!.session({ ...settings, prompt, maxTurns: 1, signal });
    }
    const builder = new SummaryBuilder(0, { enabled: false });
    for await (const message of messages) {
      // An API that needs retries is not worth waiting minutes for at the finish.
      if (message.type === "system" && message.subtype === "api_retry") {
        stop.abort();
        throw new Error(`the API failed (${apiError(message)}); not waiting for retries`);
      }
      builder.add(message);
    }
    const summary = builder.current;
    const failure = summary.errors.find((error) => /^(result|api) /.test(error));
    if (failure) throw new Error(failure);
    return {
      text: summary.assistantResponses.join("\n"),
      costUsd: summary.costUsd,
      tokens: summary.tokens,
    };
  }
}

/** An `api_retry` message's status and error, in a few words. */
function apiError(message: AgentMessage): string {
  const status = typeof message.error_status === "number" ? `${message.error_status} ` : "";
  return `${status}${typeof message.error === "string" ? message.error : "unknown error"}`;
}
