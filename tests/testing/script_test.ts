import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { mainBody, post, replyText } from "./_helpers.ts";

Deno.test("function steps see the text of the last user message, tool results included", async (t) => {
  const seen: string[] = [];
  await using server = await ScriptedModelServer.start({
    fallback: (ctx) => {
      seen.push(ctx.lastUserText);
      return textTurn(`turn ${ctx.turnIndex} of ${ctx.sessionId}`);
    },
  });

  await t.step("string content", async () => {
    assert.equal(
      await replyText(
        server,
        mainBody("s1", [{ role: "user", content: "Plain" }]),
      ),
      "turn 0 of s1",
    );
    assert.equal(seen.at(-1), "Plain");
  });

  await t.step(
    "text blocks and tool results, skipping a trailing system message",
    async () => {
      const messages = [
        { role: "user", content: [{ type: "text", text: "Old prompt" }] },
        {
          role: "assistant",
          content: [{ type: "tool_use", id: "t1", name: "Bash", input: {} }],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "t1", content: "hi" },
            {
              type: "tool_result",
              tool_use_id: "t2",
              content: [{ type: "text", text: "from blocks" }],
            },
            { type: "text", text: "Stop hook feedback: keep going" },
          ],
        },
        { role: "system", content: [{ type: "text", text: "Environment" }] },
      ];
      assert.equal(
        await replyText(server, mainBody("s1", messages)),
        "turn 1 of s1",
      );
      assert.equal(
        seen.at(-1),
        "hi\nfrom blocks\nStop hook feedback: keep going",
      );
    },
  );
});

Deno.test("a function step that throws answers 400 and records why", async () => {
  await using server = await ScriptedModelServer.start({
    scripts: [[() => {
      throw new Error("No reply for this prompt");
    }]],
  });
  const response = await post(server, mainBody("s1"));
  assert.equal(response.status, 400);
  assert.deepEqual(await response.json(), {
    type: "error",
    error: {
      type: "invalid_request_error",
      message: "Cannot build scripted turn 0: No reply for this prompt",
    },
  });
  assert.equal(server.requests[0].error, "No reply for this prompt");
});
