import assert from "node:assert/strict";
import { ScriptedGeminiServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";

const TOOLS = [{ functionDeclarations: [{ name: "run_shell_command" }] }];

function user(text: string) {
  return { role: "user", parts: [{ text }] };
}

function post(server: ScriptedGeminiServer, method: string, body: unknown): Promise<Response> {
  return fetch(`${server.url}/v1beta/models/gemini-2.5-pro:${method}`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-goog-api-key": "secret" },
    body: JSON.stringify(body),
  });
}

Deno.test("a turn streams as one SSE GenerateContentResponse with text, function calls and usage", async () => {
  await using server = await ScriptedGeminiServer.start({
    scripts: [[{
      text: "Listing.",
      toolUses: [{ name: "run_shell_command", input: { command: "ls" } }],
      usage: { input_tokens: 7, output_tokens: 3 },
    }]],
  });
  const response = await post(server, "streamGenerateContent?alt=sse", {
    contents: [user("list")],
    tools: TOOLS,
  });
  assert.match(response.headers.get("content-type") ?? "", /^text\/event-stream/);
  const text = await response.text();
  assert.ok(text.startsWith("data: ") && text.endsWith("\r\n\r\n"), "one data event");
  const chunk = JSON.parse(text.slice("data: ".length));
  assert.deepEqual(chunk.candidates[0].content, {
    role: "model",
    parts: [{ text: "Listing." }, {
      functionCall: { name: "run_shell_command", args: { command: "ls" } },
    }],
  });
  assert.equal(chunk.candidates[0].finishReason, "STOP");
  assert.equal(chunk.modelVersion, "gemini-2.5-pro");
  assert.deepEqual(chunk.usageMetadata, {
    promptTokenCount: 7,
    candidatesTokenCount: 3,
    totalTokenCount: 10,
  });
  assert.equal(server.requests[0].path, "/v1beta/models/gemini-2.5-pro:streamGenerateContent");
  assert.equal(server.requests[0].headers["x-goog-api-key"], "[redacted]", "keys are not kept");
});

Deno.test("sessions are told apart by history: one entry starts a session, a longer one continues it", async () => {
  await using server = await ScriptedGeminiServer.start({
    scripts: [
      [textTurn("a0"), (ctx) => textTurn(`a1 saw: ${ctx.lastUserText}`)],
      [textTurn("b0")],
      [textTurn("c0"), textTurn("c1")],
    ],
  });
  const reply = async (contents: unknown[]) =>
    (await (await post(server, "generateContent", { contents, tools: TOOLS })).json())
      .candidates[0].content.parts[0].text;
  const call = {
    role: "model",
    parts: [{ functionCall: { name: "run_shell_command", args: {} } }],
  };
  const result = {
    role: "user",
    parts: [
      { functionResponse: { name: "run_shell_command", response: { output: "a.txt" } } },
      { text: "and more" },
    ],
  };
  assert.equal(await reply([user("task one")]), "a0");
  assert.equal(await reply([user("task two")]), "b0");
  assert.equal(
    await reply([user("task one"), call, result]),
    "a1 saw: a.txt\nand more",
    "the history that starts with task one continues the first session",
  );
  // A session started with the same prompt as an earlier one is still new; a longer
  // history then goes to the latest session with that start.
  assert.equal(await reply([user("task one")]), "c0");
  assert.equal(await reply([user("task one"), call, result]), "c1");
  assert.deepEqual(server.sessionIds(), ["gemini-1", "gemini-2", "gemini-3"]);
  assert.deepEqual(server.requests.map((r) => `${r.sessionIndex}:${r.turnIndex}`), [
    "0:0",
    "1:0",
    "0:1",
    "2:0",
    "2:1",
  ]);
});

Deno.test("side requests (no functions, or JSON output) get the side reply and leave the script alone", async () => {
  await using server = await ScriptedGeminiServer.start({ scripts: [[textTurn("main")]] });
  const router = await post(server, "generateContent", {
    contents: [user("route this")],
    generationConfig: { responseMimeType: "application/json", responseJsonSchema: {} },
  });
  assert.equal((await router.json()).candidates[0].content.parts[0].text, "{}");
  const helper = await post(server, "generateContent", {
    contents: [user("check")],
    tools: TOOLS,
    generationConfig: { responseSchema: {} },
  });
  await helper.body?.cancel();
  const main = await post(server, "generateContent", { contents: [user("go")], tools: TOOLS });
  assert.equal((await main.json()).candidates[0].content.parts[0].text, "main");
  assert.deepEqual(server.requests.map((r) => [r.side, r.sessionIndex, r.turnIndex]), [
    [true, -1, -1],
    [true, -1, -1],
    [false, 0, 0],
  ]);
});

Deno.test("countTokens answers a count without touching the script; other routes are 404", async () => {
  await using server = await ScriptedGeminiServer.start({
    scripts: [[toolTurn("run_shell_command", { command: "ls" })]],
  });
  const count = await post(server, "countTokens", { contents: [user("hello")] });
  assert.ok((await count.json()).totalTokens > 0);
  const missing = await fetch(`${server.url}/v1beta/files`, { method: "POST", body: "{}" });
  assert.equal(missing.status, 404);
  await missing.body?.cancel();
  assert.deepEqual(server.requests.map((r) => r.side), [true]);
  assert.deepEqual(server.sessionIds(), []);
});
