/**
 * How the runner uses agent processes: one conversation for the whole run in
 * the `continue` mode, and a parked process for the next iteration in the
 * `fresh` mode. Stand-in backends record what the runner asks of them.
 */

import assert from "node:assert/strict";
import { parseDefinition } from "../../agents/definition/parse.ts";
import type {
  AgentBackend,
  AgentConversation,
  AgentMessage,
  ConversationTurn,
  ProcessSettings,
  SessionRequest,
} from "../../agents/backends/port.ts";
import type { CompletionHandler } from "../../agents/completion/handler_contract.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { runIterations } from "../../agents/loop/runner.ts";

function turn(id: string, text: string, cost: number): AgentMessage[] {
  return [
    { type: "system", subtype: "init", session_id: id },
    {
      type: "assistant",
      session_id: id,
      parent_tool_use_id: null,
      message: { content: [{ type: "text", text }] },
    },
    {
      type: "result",
      subtype: "success",
      session_id: id,
      total_cost_usd: cost,
      num_turns: 1,
      stop_reason: "end_turn",
      usage: { input_tokens: 5, output_tokens: 3 },
    },
  ];
}

/** Says DONE in the iteration given; never before. */
class DoneIn implements CompletionHandler {
  readonly type = "manual" as const;
  constructor(readonly iteration: number) {}
  buildInitialPrompt(): Promise<string> {
    return Promise.resolve("prompt 1");
  }
  buildContinuationPrompt(iteration: number): Promise<string> {
    return Promise.resolve(`prompt ${iteration}`);
  }
  buildCompletionCriteria() {
    return { short: "say DONE", detailed: "Say DONE" };
  }
  isComplete(summary: IterationSummary): Promise<boolean> {
    return Promise.resolve(summary.assistantResponses.some((text) => text.includes("DONE")));
  }
  getCompletionDescription(): Promise<string> {
    return Promise.resolve("done");
  }
}

class FakeConversation implements AgentConversation {
  readonly prompts: string[] = [];
  closed = false;
  #id: string | undefined;
  constructor(
    readonly settings: ProcessSettings,
    readonly reply: (prompt: string, index: number) => AgentMessage[] | Error,
  ) {
    this.#id = settings.resume;
  }
  get sessionId(): string | undefined {
    return this.#id;
  }
  async *send(turn: ConversationTurn): AsyncIterable<AgentMessage> {
    assert.ok(!this.closed, "no prompt after close");
    this.prompts.push(turn.prompt);
    const reply = this.reply(turn.prompt, this.prompts.length - 1);
    if (reply instanceof Error) throw reply;
    for (const message of reply) {
      this.#id = message.session_id as string;
      yield message;
    }
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

/** A backend with conversations, parked processes and a record of every call. */
class ProcessBackend implements AgentBackend {
  readonly name = "fake";
  readonly calls: string[] = [];
  readonly warmed: ProcessSettings[] = [];
  readonly sessions: SessionRequest[] = [];
  readonly conversations: FakeConversation[] = [];
  constructor(
    readonly reply: (prompt: string, index: number) => AgentMessage[] | Error,
  ) {}
  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    this.calls.push(`session ${request.prompt}`);
    this.sessions.push(request);
    const reply = this.reply(request.prompt, this.sessions.length - 1);
    if (reply instanceof Error) throw reply;
    for (const message of reply) {
      yield message;
      // The runner starts the next process once the agent is at work.
      if (message.type === "system") await Promise.resolve();
    }
  }
  warm(settings: ProcessSettings): void {
    this.calls.push("warm");
    this.warmed.push(settings);
  }
  conversation(settings: ProcessSettings): AgentConversation {
    this.calls.push(`conversation resume=${settings.resume ?? "-"}`);
    const conversation = new FakeConversation(settings, this.reply);
    this.conversations.push(conversation);
    return conversation;
  }
  release(): Promise<void> {
    this.calls.push("release");
    return Promise.resolve();
  }
}

function definition(behavior: Record<string, unknown>, retry: Record<string, unknown> = {}) {
  return parseDefinition(
    JSON.stringify({
      name: "test",
      probe: { enabled: false },
      retry: { baseDelaySeconds: 0, ...retry },
      behavior: {
        completionType: "manual",
        completionConfig: { completionKeyword: "DONE" },
        requireCompleteTask: false,
        ...behavior,
      },
    }),
    { displayPath: "test/agent.json" },
  );
}

function run(backend: AgentBackend, behavior: Record<string, unknown>, maxIterations: number) {
  return runIterations({
    definition: definition(behavior),
    handler: new DoneIn(maxIterations),
    backend,
    systemPrompt: "system",
    args: {},
    cwd: "/tmp",
    maxIterations,
    sleep: () => Promise.resolve(),
  });
}

Deno.test("continue mode sends every iteration's prompt into one conversation", async () => {
  // The process reports its running cost total; the conversation hands out each turn's share.
  const backend = new ProcessBackend((_prompt, index) =>
    turn("s-1", index === 2 ? "all DONE" : "working", 0.01)
  );
  const result = await run(backend, { session: "continue" }, 3);
  assert.equal(result.status, "unverified");
  assert.deepEqual(backend.calls, ["conversation resume=-", "release"]);
  const [conversation] = backend.conversations;
  assert.deepEqual(conversation.prompts, ["prompt 1", "prompt 2", "prompt 3"]);
  assert.equal(conversation.closed, true);
  assert.equal(conversation.settings.completeTask, true);
  assert.equal(conversation.settings.stopHook, true);
  assert.deepEqual(result.sessionIds, ["s-1"]);
  assert.deepEqual(result.summaries.map((summary) => summary.costUsd), [0.01, 0.01, 0.01]);
});

Deno.test("continue mode: a conversation whose process dies is replaced by one that resumes the session", async () => {
  let prompts = 0;
  const backend = new ProcessBackend(() => {
    prompts++;
    if (prompts === 2) {
      return new Error("The Claude Code process ended before the result of its prompt");
    }
    return turn("s-1", prompts === 3 ? "all DONE" : "working", 0.01);
  });
  const result = await run(backend, { session: "continue" }, 2);
  assert.equal(result.status, "unverified");
  assert.deepEqual(backend.calls, ["conversation resume=-", "conversation resume=s-1", "release"]);
  assert.equal(backend.conversations[0].closed, true, "the dead conversation was closed");
  assert.deepEqual(backend.conversations[1].prompts, ["prompt 2"], "the retry went to the new one");
  assert.deepEqual(result.summaries[1].retries?.length, 1);
});

Deno.test("fresh mode parks the next iteration's process while the current one works", async () => {
  const backend = new ProcessBackend((prompt) =>
    turn(crypto.randomUUID(), prompt === "prompt 3" ? "all DONE" : "working", 0.01)
  );
  const result = await run(backend, { session: "fresh" }, 3);
  assert.equal(result.status, "unverified");
  assert.deepEqual(backend.calls, [
    "warm", // for iteration 1, as the run starts
    "session prompt 1",
    "warm", // for iteration 2, during iteration 1
    "session prompt 2",
    "warm",
    "session prompt 3", // the last iteration: nothing to park
    "release",
  ]);
  for (const settings of backend.warmed) {
    assert.equal(settings.resume, undefined);
    assert.equal(settings.completeTask, true);
    assert.equal(settings.systemPromptAppend, "system");
  }
});

Deno.test("fresh mode with a budget parks the next process after the session, with what is left", async () => {
  const backend = new ProcessBackend((prompt) =>
    turn(crypto.randomUUID(), prompt === "prompt 2" ? "all DONE" : "working", 0.25)
  );
  const result = await run(backend, { session: "fresh", maxBudgetUsd: 1 }, 2);
  assert.equal(result.status, "unverified");
  assert.deepEqual(backend.calls, [
    "warm",
    "session prompt 1",
    "warm",
    "session prompt 2",
    "release",
  ]);
  assert.deepEqual(backend.warmed.map((settings) => settings.maxBudgetUsd), [1, 0.75]);
  assert.deepEqual(backend.sessions.map((request) => request.maxBudgetUsd), [1, 0.75]);
});

Deno.test("prewarm: false starts no process ahead", async () => {
  const backend = new ProcessBackend((prompt) =>
    turn(crypto.randomUUID(), prompt === "prompt 2" ? "all DONE" : "working", 0.01)
  );
  await run(backend, { session: "fresh", prewarm: false }, 2);
  assert.deepEqual(backend.calls, ["session prompt 1", "session prompt 2", "release"]);
});
