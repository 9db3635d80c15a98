/**
 * The finish model's conversation, opened ahead of the finish: when the
 * iteration before the run's last possible one starts or a claim passes, its process starts
 * while the agent still works, so the finish's one request pays no process
 * start. Opened at most once, asks nothing until the finish takes it, and is
 * closed on every path (the run's end calls {@linkcode FinishAhead.close}).
 *
 * @module
 */

import type { AgentBackend, AgentConversation } from "../backends/port.ts";
import { DEFAULT_FINISH_MODEL } from "../definition/mod.ts";
import { openFinishConversation } from "./model.ts";

/** A finish model conversation to open ahead, once. */
export class FinishAhead {
  #backend: AgentBackend;
  #model: string;
  #cwd: string;
  #enabled: boolean;
  #conversation: AgentConversation | undefined;
  #closing: Promise<void>[] = [];
  #done = false;
  #onEvent?: (kind: string, data: Record<string, unknown>) => void;

  /**
   * @param backend The backend of the finish model.
   * @param options The finish settings (no conversation when `maxCostUsd` is 0), the finish's cwd, events.
   */
  constructor(
    backend: AgentBackend,
    options: {
      model?: string;
      maxCostUsd?: number;
      cwd: string;
      onEvent?: (kind: string, data: Record<string, unknown>) => void;
    },
  ) {
    this.#backend = backend;
    this.#model = options.model ?? DEFAULT_FINISH_MODEL;
    this.#cwd = options.cwd;
    this.#enabled = backend.conversation !== undefined && (options.maxCostUsd ?? 0.05) > 0;
    this.#onEvent = options.onEvent;
  }

  /**
   * Start the conversation's process now, unless it was opened already.
   *
   * @param why What made the finish near, for the log.
   */
  open(why: string): void {
    if (!this.#enabled || this.#done || this.#conversation) return;
    this.#conversation = openFinishConversation(this.#backend, this.#model, this.#cwd);
    if (this.#conversation) this.#onEvent?.("finish_model_opened", { why, model: this.#model });
  }

  /**
   * Hand the open conversation over (once): the taker closes it.
   *
   * @returns The conversation, or undefined when none is open.
   */
  take(): AgentConversation | undefined {
    const conversation = this.#conversation;
    this.#conversation = undefined;
    if (conversation) this.#done = true;
    return conversation;
  }

  /**
   * Close a conversation nobody took, and open none after.
   *
   * @returns Resolves once its process has exited.
   */
  async close(): Promise<void> {
    this.#done = true;
    const conversation = this.#conversation;
    this.#conversation = undefined;
    if (conversation) this.#closing.push(conversation.close().catch(() => {}));
    await Promise.all(this.#closing);
  }
}
