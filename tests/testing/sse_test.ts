import assert from "node:assert/strict";
import { ScriptedModelServer, toolTurn } from "../../agents/testing/mod.ts";
import { assemble, mainBody, post, readSse, replyOf } from "./_helpers.ts";

Deno.test("a text turn streams as well-formed SSE events in Messages API order", async () => {
  await using server = await ScriptedModelServer.start({
    scripts: [[{
      text: "Hello there",
      usage: { input_tokens: 7, output_tokens: 3 },
    }]],
  });
  const events = await readSse(await post(server, mainBody("s1")));
  assert.deepEqual(events.map((e) => e.event), [
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
  ]);
  const start = events[0].data.message as Record<string, unknown>;
  assert.equal(start.type, "message");
  assert.equal(start.role, "assistant");
  assert.equal(
    start.model,
    "claude-test",
    "the reply echoes the requested model",
  );
  assert.deepEqual(start.content, []);
  assert.equal(start.stop_reason, null);
  assert.match(start.id as string, /^msg_/);
  assert.equal((start.usage as Record<string, unknown>).input_tokens, 7);
  assert.deepEqual(events[2].data.delta, {
    type: "text_delta",
    text: "Hello there",
  });
  assert.deepEqual(events[4].data.delta, {
    stop_reason: "end_turn",
    stop_sequence: null,
  });
  assert.deepEqual(events[4].data.usage, { output_tokens: 3 });
});

Deno.test("a tool turn sends text first, then tool_use blocks, and stops for tool use", async (t) => {
  await t.step("streamed, with input_json_delta", async () => {
    await using server = await ScriptedModelServer.start({
      scripts: [[{
        text: "Running two commands.",
        toolUses: [
          { name: "Bash", input: { command: "echo hi" } },
          {
            name: "Write",
            input: { file_path: "a.txt", content: "x" },
            id: "toolu_mine",
          },
        ],
      }]],
    });
    const events = await readSse(await post(server, mainBody("s1")));
    const deltas = events.filter((e) => e.event === "content_block_delta").map((
      e,
    ) => e.data.delta);
    assert.deepEqual(deltas[1], {
      type: "input_json_delta",
      partial_json: '{"command":"echo hi"}',
    });
    const message = assemble(events);
    const content = message.content as Record<string, unknown>[];
    assert.deepEqual(content.map((block) => block.type), [
      "text",
      "tool_use",
      "tool_use",
    ]);
    assert.equal(content[0].text, "Running two commands.");
    assert.equal(content[1].name, "Bash");
    assert.deepEqual(content[1].input, { command: "echo hi" });
    assert.match(content[1].id as string, /^toolu_/);
    assert.equal(content[2].id, "toolu_mine");
    assert.deepEqual(content[2].input, { file_path: "a.txt", content: "x" });
    assert.equal(message.stop_reason, "tool_use");
  });

  await t.step("non-streaming, as one JSON message", async () => {
    await using server = await ScriptedModelServer.start({
      scripts: [[toolTurn("Bash", { command: "ls" }, "Looking.")]],
    });
    const response = await post(
      server,
      mainBody("s1", undefined, { stream: false }),
    );
    assert.match(
      response.headers.get("content-type") ?? "",
      /^application\/json/,
    );
    const message = await response.json();
    assert.equal(message.type, "message");
    assert.equal(message.stop_reason, "tool_use");
    assert.deepEqual(message.content[0], { type: "text", text: "Looking." });
    assert.equal(message.content[1].type, "tool_use");
    assert.deepEqual(message.content[1].input, { command: "ls" });
  });

  await t.step(
    "generated tool_use ids are unique across turns and sessions",
    async () => {
      const turn = toolTurn("Bash", { command: "ls" });
      await using server = await ScriptedModelServer.start({
        scripts: [[turn, turn], [turn]],
      });
      const ids = [];
      for (const session of ["a", "a", "b"]) {
        const message = await replyOf(server, mainBody(session));
        ids.push((message.content as Record<string, unknown>[])[0].id);
      }
      assert.equal(new Set(ids).size, 3);
    },
  );

  await t.step(
    "an explicit stop reason wins over the derived one",
    async () => {
      await using server = await ScriptedModelServer.start({
        scripts: [[{ text: "Cut sh", stopReason: "max_tokens" }]],
      });
      assert.equal(
        (await replyOf(server, mainBody("s1"))).stop_reason,
        "max_tokens",
      );
    },
  );
});
