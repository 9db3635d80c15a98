/**
 * One Claude Code process for many prompts (the `continue` session mode):
 * prompts go in through the SDK's streaming input, and each turn's messages
 * come out until its result. Private to the backends folder.
 *
 * @module
 */

import type { AgentConversation, AgentMessage, ConversationTurn } from "./port.ts";
import {
  EXIT_GRACE_MS,
  type Query,
  type Routes,
  type Sdk,
  type SdkOptions,
  type SdkUserMessage,
} from "./_claude_process.ts";

/** A queue of user messages the SDK reads as the process's input. */
export class InputQueue {
  #items: SdkUserMessage[] = [];
  #wake: (() => void) | undefined;
  #ended = false;

  push(item: SdkUserMessage): void {
    this.#items.push(item);
    this.#wake?.();
  }

  end(): void {
    this.#ended = true;
    this.#wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SdkUserMessage> {
    for (;;) {
      const item = this.#items.shift();
      if (item) {
        yield item;
        continue;
      }
      if (this.#ended) return;
      await new Promise<void>((resolve) => this.#wake = resolve);
      this.#wake = undefined;
    }
  }
}

/**
 * A user message for the SDK's streaming input.
 *
 * @param content The text.
 * @param sessionId The session it goes to ("" before the process has named one).
 * @returns The message.
 */
export function userMessage(content: string, sessionId = ""): SdkUserMessage {
  return {
    type: "user",
    message: { role: "user", content },
    parent_tool_use_id: null,
    session_id: sessionId,
  } as SdkUserMessage;
}

/** {@linkcode AgentConversation} on one Claude Code process. */
export class ClaudeConversation implements AgentConversation {
  #routes: Routes = {};
  #controller = new AbortController();
  #input = new InputQueue();
  #query: Promise<Query>;
  #messages: Promise<AsyncIterator<unknown>>;
  #ended = false;
  /** The process's running cost total at the last result. */
  #costSoFar = 0;
  #sessionId: string | undefined;

  /** Starts the process at once; it waits for the first prompt. */
  constructor(
    start: (
      routes: Routes,
      controller: AbortController,
    ) => Promise<{ sdk: Sdk; options: SdkOptions }>,
  ) {
    this.#query = start(this.#routes, this.#controller).then(({ sdk, options }) =>
      sdk.query({ prompt: this.#input, options })
    );
    this.#messages = this.#query.then((query) => query[Symbol.asyncIterator]());
    this.#messages.catch(() => {
      // send() reports it
    });
  }

  get sessionId(): string | undefined {
    return this.#sessionId;
  }

  async *send(turn: ConversationTurn): AsyncIterable<AgentMessage> {
    if (this.#ended) throw new Error("The Claude Code conversation has ended");
    this.#routes.onCompleteTask = turn.onCompleteTask;
    this.#routes.onFinish = turn.onFinish;
    this.#routes.onStop = turn.onStop;
    const kill = () => this.#kill(turn.signal.reason);
    if (turn.signal.aborted) kill();
    turn.signal.addEventListener("abort", kill, { once: true });
    let finished = false;
    try {
      const messages = await this.#messages;
      this.#input.push(userMessage(turn.prompt, this.#sessionId));
      for (;;) {
        const next = await messages.next();
        if (next.done) {
          throw new Error("The Claude Code process ended before the result of its prompt");
        }
        const message = next.value as AgentMessage;
        if (typeof message.session_id === "string") this.#sessionId = message.session_id;
        if (message.type !== "result") {
          yield message;
          continue;
        }
        // The process reports its running total; the turn's cost is the difference.
        const total = typeof message.total_cost_usd === "number" ? message.total_cost_usd : 0;
        const cost = Math.max(0, total - this.#costSoFar);
        this.#costSoFar = total;
        finished = true;
        yield { ...message, total_cost_usd: cost };
        return;
      }
    } finally {
      turn.signal.removeEventListener("abort", kill);
      this.#routes.onCompleteTask = undefined;
      this.#routes.onFinish = undefined;
      this.#routes.onStop = undefined;
      // A turn cut short leaves the process mid-answer: end it.
      if (!finished) this.#kill(new Error("the turn did not finish"));
    }
  }

  #kill(reason: unknown): void {
    this.#ended = true;
    this.#input.end();
    this.#controller.abort(reason);
    this.#query.then((query) => query.close(), () => {});
  }

  async close(): Promise<void> {
    if (this.#ended) return;
    this.#ended = true;
    this.#input.end();
    let messages: AsyncIterator<unknown>;
    try {
      messages = await this.#messages;
    } catch {
      return;
    }
    const timer = setTimeout(() => this.#kill(new Error("did not exit")), EXIT_GRACE_MS);
    try {
      while (!(await messages.next()).done) {
        // the process finishes and exits once its input has ended
      }
    } catch {
      // it ended badly: nothing left to report
    } finally {
      clearTimeout(timer);
    }
  }
}
