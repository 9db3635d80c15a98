import assert from "node:assert/strict";
import { redactingBackend } from "../../agents/backends/redacting.ts";
import type {
  AgentBackend,
  AgentConversation,
  ConversationTurn,
  ProcessSettings,
  SessionRequest,
} from "../../agents/backends/port.ts";
import { Redactor } from "../../agents/support/redact.ts";

const SECRET = "deploy-token-9f8e7d6c5b4a";
const redactor = new Redactor({ DEPLOY_TOKEN: SECRET });

const settings = {
  systemPromptAppend: `append ${SECRET}`,
  systemPrompt: `system ${SECRET}`,
  cwd: ".",
  allowedTools: [],
  disallowedTools: [],
  permissionMode: "default" as const,
  settingSources: [],
};

/** A backend that records what it was sent and calls the callbacks with secrets. */
function recorder(): { backend: AgentBackend; seen: unknown[] } {
  const seen: unknown[] = [];
  const run = async function* (
    request: Pick<SessionRequest, "prompt" | "onCompleteTask" | "onStop">,
  ) {
    seen.push(request.prompt);
    seen.push(
      await request.onCompleteTask?.({
        status: "success",
        original_request_summary: "x",
        summary: "y",
      }),
    );
    seen.push(
      await request.onStop?.({ stopHookActive: false, backgroundTasks: [] }),
    );
    yield { type: "result", subtype: "success", total_cost_usd: 0 };
  };
  const backend: AgentBackend = {
    name: "recorder",
    session: (request) => {
      seen.push(request.systemPromptAppend, request.systemPrompt);
      return run(request);
    },
    warm: (warm: ProcessSettings) => seen.push(warm.systemPromptAppend),
    conversation: (open: ProcessSettings): AgentConversation => {
      seen.push(open.systemPromptAppend, open.systemPrompt);
      return {
        sessionId: "s-1",
        send: (turn: ConversationTurn) => run(turn),
        close: () => Promise.resolve(),
      };
    },
  };
  return { backend, seen };
}

const callbacks = {
  onCompleteTask: () => Promise.resolve(`the check printed ${SECRET}`),
  onStop: () => Promise.resolve({ block: true as const, reason: `stop: ${SECRET}` }),
};

Deno.test("redactingBackend redacts everything finishline sends to an agent", async (t) => {
  await t.step("a session: prompt, system prompts, complete_task answer, stop reason", async () => {
    const { backend, seen } = recorder();
    const wrapped = redactingBackend(backend, redactor);
    for await (
      const _ of wrapped.session({
        ...settings,
        prompt: `do it with ${SECRET}`,
        signal: new AbortController().signal,
        ...callbacks,
      })
    ) { /* drain */ }
    assert.ok(!JSON.stringify(seen).includes(SECRET), JSON.stringify(seen));
    assert.equal(seen.length, 5);
    assert.equal(seen[2], "do it with …5b4a [redacted]");
  });

  await t.step("a warm process and a conversation", async () => {
    const { backend, seen } = recorder();
    const wrapped = redactingBackend(backend, redactor);
    wrapped.warm!({ ...settings, completeTask: true, stopHook: true });
    const conversation = wrapped.conversation!({ ...settings, completeTask: true, stopHook: true });
    assert.equal(conversation.sessionId, "s-1");
    for await (
      const _ of conversation.send({
        prompt: `again ${SECRET}`,
        signal: new AbortController().signal,
        ...callbacks,
      })
    ) { /* drain */ }
    assert.ok(!JSON.stringify(seen).includes(SECRET), JSON.stringify(seen));
    assert.equal(seen.length, 6);
  });

  await t.step("a backend wrapped twice is wrapped once", () => {
    const { backend } = recorder();
    const once = redactingBackend(backend, redactor);
    assert.equal(redactingBackend(once, redactor), once);
  });
});
