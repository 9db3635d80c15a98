import assert from "node:assert/strict";
import { ask } from "../../agents/checks/ask.ts";
import type { AgentBackend, SessionRequest } from "../../agents/backends/port.ts";

/** A backend that records its requests and answers with `texts`, or fails with `error`. */
function backendOf(texts: string[], error?: Error): AgentBackend & { requests: SessionRequest[] } {
  const requests: SessionRequest[] = [];
  return {
    name: "scripted",
    requests,
    async *session(request: SessionRequest) {
      requests.push(request);
      if (error) throw error;
      yield {
        type: "assistant",
        message: { content: texts.map((text) => ({ type: "text", text })) },
      };
    },
  };
}

Deno.test("ask runs one tool-less turn and returns the model's text", async (t) => {
  const signal = AbortSignal.timeout(5_000);

  await t.step("no tools, no settings, one turn, the system text appended", async () => {
    const backend = backendOf(["first", "second"]);
    const reply = await ask(backend, "Question?", {
      system: "Reply with JSON only.",
      cwd: "/work/project",
      model: "claude-haiku-4-5",
      signal,
    });
    assert.equal(reply, "first\nsecond");
    const [request] = backend.requests;
    assert.equal(request.prompt, "Question?");
    assert.equal(request.systemPromptAppend, "Reply with JSON only.");
    assert.deepEqual(request.tools, []);
    assert.deepEqual(request.allowedTools, []);
    assert.deepEqual(request.disallowedTools, []);
    assert.deepEqual(request.settingSources, []);
    assert.equal(request.maxTurns, 1);
    assert.equal(request.cwd, "/work/project");
    assert.equal(request.model, "claude-haiku-4-5");
    assert.equal(request.signal, signal);
    assert.equal(request.onCompleteTask, undefined);
  });

  await t.step("a failing session rejects, for the caller to judge", async () => {
    const backend = backendOf([], new Error("model overloaded"));
    await assert.rejects(ask(backend, "Question?", { system: "", cwd: "/", signal }), {
      message: "model overloaded",
    });
  });
});
