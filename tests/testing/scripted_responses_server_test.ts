import assert from "node:assert/strict";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";

interface Frame {
  event: string;
  data: Record<string, unknown>;
}

function post(
  server: ScriptedResponsesServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: "Bearer sk-secret", ...headers },
    body: JSON.stringify(body),
  });
}

async function frames(response: Response): Promise<Frame[]> {
  assert.equal(response.status, 200);
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const text = await response.text();
  return text.trimEnd().split("\n\n").map((frame) => {
    const [eventLine, dataLine, ...rest] = frame.split("\n");
    assert.deepEqual(rest, [], "a frame holds one event line and one data line");
    assert.ok(eventLine.startsWith("event: ") && dataLine.startsWith("data: "));
    const data = JSON.parse(dataLine.slice("data: ".length));
    assert.equal(data.type, eventLine.slice("event: ".length), "the event names its data type");
    return { event: data.type, data };
  });
}

Deno.test("a text turn streams Responses API events in order, with usage at the end", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[{ text: "Hello", usage: { input_tokens: 7, output_tokens: 3 } }]],
  });
  const events = await frames(await post(server, "/v1/responses", { model: "m", input: "hi" }));
  assert.deepEqual(events.map((e) => e.event), [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
    "response.output_text.delta",
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
    "response.completed",
  ]);
  assert.deepEqual(events.map((e) => e.data.sequence_number), [0, 1, 2, 3, 4, 5, 6, 7, 8]);
  assert.equal(events[4].data.delta, "Hello");
  const completed = events[8].data.response as Record<string, unknown>;
  assert.equal(completed.status, "completed");
  assert.equal(completed.model, "m");
  const usage = completed.usage as Record<string, number>;
  assert.deepEqual([usage.input_tokens, usage.output_tokens, usage.total_tokens], [7, 3, 10]);
  const [message] = completed.output as Record<string, unknown>[];
  assert.deepEqual(message.content, [{ type: "output_text", text: "Hello", annotations: [] }]);
});

Deno.test("a tool turn streams a function call whose arguments are the input as JSON", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[{
      text: "Listing.",
      toolUses: [{ name: "exec_command", input: { cmd: "ls" }, id: "call_1" }],
    }]],
  });
  const events = await frames(await post(server, "/v1/responses", { input: "ls" }));
  const call = events.filter((e) => e.data.output_index === 1).map((e) => e.event);
  assert.deepEqual(call, [
    "response.output_item.added",
    "response.function_call_arguments.delta",
    "response.function_call_arguments.done",
    "response.output_item.done",
  ]);
  const done = events.find((e) => e.event === "response.function_call_arguments.done");
  assert.equal(done?.data.arguments, '{"cmd":"ls"}');
  const item = events.findLast((e) => e.event === "response.output_item.done")?.data.item;
  assert.deepEqual(item, {
    type: "function_call",
    id: (item as Record<string, unknown>).id,
    call_id: "call_1",
    name: "exec_command",
    arguments: '{"cmd":"ls"}',
    status: "completed",
  });
});

Deno.test("a tool use with a namespace calls the function in that namespace (Codex's MCP tools)", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[{
      toolUses: [{ name: "complete_task", namespace: "mcp__finishline", input: {} }],
    }]],
  });
  const reply = await (await post(server, "/v1/responses", { input: "x", stream: false })).json();
  const [call] = reply.output;
  assert.deepEqual([call.type, call.namespace, call.name], [
    "function_call",
    "mcp__finishline",
    "complete_task",
  ]);
});

Deno.test("sessions are told apart by the session-id header and each follows its own script", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[textTurn("a0"), textTurn("a1")], [textTurn("b0")]],
  });
  const ask = async (session: string) => {
    const body = { input: "x", stream: false };
    const reply = await (await post(server, "/v1/responses", body, { "session-id": session }))
      .json();
    return reply.output[0].content[0].text;
  };
  assert.deepEqual(
    [await ask("A"), await ask("B"), await ask("A"), await ask("A"), await ask("B")],
    ["a0", "b0", "a1", "Done.", "Done."],
  );
  assert.deepEqual(server.sessionIds(), ["A", "B"]);
  assert.deepEqual(server.requests.map((r) => r.turnIndex), [0, 0, 1, 2, 1]);
  assert.equal(server.requests[0].headers.authorization, "[redacted]");
});

Deno.test("a function step sees the last user input: text and function call outputs", async () => {
  const seen: string[] = [];
  await using server = await ScriptedResponsesServer.start({
    scripts: [[(ctx) => {
      seen.push(ctx.lastUserText);
      return textTurn("ok");
    }]],
  });
  const input = [
    { role: "user", content: [{ type: "input_text", text: "old" }] },
    { type: "function_call", call_id: "c", name: "exec_command", arguments: "{}" },
    { type: "function_call_output", call_id: "c", output: "exit 0" },
    { role: "user", content: [{ type: "input_text", text: "go on" }] },
  ];
  await (await post(server, "/v1/responses", { input, stream: false })).body?.cancel();
  assert.deepEqual(seen, ["exit 0\ngo on"]);
});

Deno.test("chat completions stream content, tool calls, finish reason and usage", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[toolTurn("bash", { command: "ls" }, "Looking.")]],
  });
  const response = await post(server, "/v1/chat/completions", {
    model: "m",
    stream: true,
    messages: [{ role: "user", content: "hi" }],
  });
  const text = await response.text();
  const lines = text.trimEnd().split("\n\n");
  assert.equal(lines.at(-1), "data: [DONE]");
  const chunks = lines.slice(0, -1).map((line) => JSON.parse(line.slice("data: ".length)));
  assert.ok(chunks.every((c) => c.object === "chat.completion.chunk" && c.model === "m"));
  const deltas = chunks.map((c) => c.choices[0].delta);
  assert.equal(deltas.map((d) => d.content ?? "").join(""), "Looking.");
  const call = deltas.find((d) => d.tool_calls)?.tool_calls[0];
  assert.equal(call.function.name, "bash");
  assert.equal(call.function.arguments, '{"command":"ls"}');
  assert.equal(chunks.at(-1).choices[0].finish_reason, "tool_calls");
  assert.equal(chunks.at(-1).usage.total_tokens, 120);
});

Deno.test("a non-streaming chat completion holds the message and its tool calls", async () => {
  await using server = await ScriptedResponsesServer.start({ scripts: [[textTurn("Hi")]] });
  const reply = await (await post(server, "/v1/chat/completions", { messages: [] })).json();
  assert.deepEqual(reply.choices[0].message, { role: "assistant", content: "Hi" });
  assert.equal(reply.choices[0].finish_reason, "stop");
});

Deno.test("an http fault answers with its status; unknown routes get 404 and are recorded", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[{ fault: { kind: "http", status: 429, message: "slow down" } }]],
  });
  const faulty = await post(server, "/v1/responses", { input: "x" });
  assert.equal(faulty.status, 429);
  assert.equal((await faulty.json()).error.message, "slow down");
  const missing = await post(server, "/v1/embeddings", {});
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
  assert.deepEqual(server.requests.map((r) => [r.path, r.side]), [
    ["/v1/responses", false],
    ["/v1/embeddings", true],
  ]);
});

Deno.test("side requests get the side reply and leave the script where it was", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[textTurn("main 0"), textTurn("main 1")]],
    isSideRequest: (body) => !Array.isArray(body.tools),
    sideReply: textTurn("A title"),
  });
  const ask = async (body: Record<string, unknown>) => {
    const reply = await (await post(server, "/v1/chat/completions", body)).json();
    return reply.choices[0].message.content;
  };
  const main = { messages: [], tools: [] };
  assert.deepEqual(
    [await ask({ messages: [] }), await ask(main), await ask({ messages: [] }), await ask(main)],
    ["A title", "main 0", "A title", "main 1"],
  );
  assert.deepEqual(server.requests.map((r) => [r.side, r.turnIndex]), [
    [true, -1],
    [false, 0],
    [true, -1],
    [false, 1],
  ]);
});
