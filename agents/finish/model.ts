/**
 * The model of the finish workflow's model steps: one tool-less Claude Code
 * conversation on a lightweight model (`finish.model`), its own short
 * system prompt, a cost cap over every attempt of the run's finish, and a
 * reason for each step that must fall back to what the run recorded. The
 * conversation may have been opened ahead ({@linkcode openFinishConversation}),
 * so that its process start is off the run's end.
 *
 * @module
 */

import type {
  AgentBackend,
  AgentConversation,
  AgentMessage,
  ProcessSettings,
} from "../backends/port.ts";
import { redactingBackend } from "../backends/redacting.ts";
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
  /** A conversation opened ahead with {@linkcode finishProcessSettings}, if any (taken once). */
  opened?: () => AgentConversation | undefined;
}

/**
 * The settings of the finish model's process: tool-less, its own system
 * prompt, no settings files.
 *
 * @param model The lightweight model.
 * @param cwd Working directory.
 * @returns The settings.
 */
export function finishProcessSettings(model: string, cwd: string): ProcessSettings {
  return {
    systemPromptAppend: "",
    systemPrompt: FINISH_SYSTEM_PROMPT,
    cwd,
    tools: [],
    allowedTools: [],
    disallowedTools: [],
    permissionMode: "default",
    model,
    settingSources: [],
    completeTask: false,
    stopHook: false,
  };
}

/**
 * Open the finish model's conversation ahead of the finish: its process
 * starts now and waits, asking nothing, until the finish sends its question
 * (an unused one costs no request). Undefined for a backend without
 * conversations (a session per question then).
 *
 * @param backend The backend (its requests are redacted like every other).
 * @param model The lightweight model.
 * @param cwd Working directory.
 * @returns The conversation, or undefined.
 */
export function openFinishConversation(
  backend: AgentBackend,
  model: string,
  cwd: string,
): AgentConversation | undefined {
  if (!backend.conversation) return undefined;
  return redactingBackend(backend).conversation!(finishProcessSettings(model, cwd));
}

/** What one question cost. */
interface ModelReply {
  text: string;
  opened: boolean;
  costUsd: number;
  tokens: TokenUsage;
}

/** A model step's answer, or why the step falls back. */
export type ModelAnswer = { text: string } | { skipped: string };

/**
 * Asks the finish model its questions (the workflow asks one per finish).
 * The first question of a conversation carries the run's record; later ones
 * build on it. Before each question the cap is checked against what the
 * finish spent so far (a question that starts under the cap may end a
 * little over it); after a failed session, nothing is asked again.
 */
export class FinishModel {
  #options: FinishModelOptions;
  #conversation: AgentConversation | undefined;
  #asked = 0;
  #broken: string | undefined;
  #closing: Promise<void>[] = [];
  #closed = false;

  /**
   * A model for one finish attempt.
   *
   * @param options Backend, model, cap, history and context.
   */
  constructor(options: FinishModelOptions) {
    this.#options = options;
  }

  /**
   * Ask one question.
   *
   * @param steps The steps it asks for, for the events.
   * @param question The question (with its markers).
   * @returns The model's text, or why the steps fall back.
   */
  async ask(steps: string[], question: string): Promise<ModelAnswer> {
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
      this.#options.onEvent?.("finish_model_failed", { steps, error: this.#broken });
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
      steps,
      // Whether the conversation's process was started ahead, off the finish's wall time.
      opened: reply.opened,
      model: this.#options.model,
      costUsd: roundUsd(reply.costUsd),
      tokens: reply.tokens,
    });
    return { text: reply.text };
  }

  /**
   * End the conversation, if one was opened; nothing is asked after. Called
   * as soon as the last answer is in, so its process exits while the finish
   * goes on, and again at the end to wait for it.
   */
  async close(): Promise<void> {
    this.#closed = true;
    const conversation = this.#conversation;
    this.#conversation = undefined;
    if (conversation) this.#closing.push(conversation.close().catch(() => {}));
    await Promise.all(this.#closing);
  }

  #skipReason(): string | undefined {
    const { backend, maxCostUsd, disabled, store, runId } = this.#options;
    if (disabled) return disabled;
    if (!backend) return "no model backend";
    if (maxCostUsd <= 0) return "finish.maxCostUsd is 0";
    if (this.#broken) return `the finish model failed earlier (${this.#broken})`;
    if (this.#closed) return "the finish model's conversation is closed";
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
    const settings = finishProcessSettings(model, cwd);
    let messages: AsyncIterable<AgentMessage>;
    let opened = false;
    if (backend!.conversation) {
      if (!this.#conversation) {
        const ahead = this.#options.opened?.();
        opened = ahead !== undefined;
        this.#conversation = ahead ?? backend!.conversation(settings);
      }
      messages = this.#conversation.send({ prompt, signal });
    } else {
      const { completeTask: _, stopHook: __, ...session } = settings;
      messages = backend!.session({ ...session, prompt, maxTurns: 1, signal });
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
      opened,
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
