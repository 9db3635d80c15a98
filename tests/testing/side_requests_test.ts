import assert from "node:assert/strict";
import { isSideRequest, ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { mainBody, replyText } from "./_helpers.ts";

Deno.test("side requests get the side reply and do not use up script steps", async (t) => {
  const sideCases: [string, Record<string, unknown>, Record<string, string>][] = [
    [
      "no tools (prompt hook, title, summary)",
      mainBody("s1", undefined, { tools: [] }),
      {},
    ],
    ["tools absent", mainBody("s1", undefined, { tools: undefined }), {}],
    ["subagent header", mainBody("s1"), { "x-claude-code-agent-id": "a123" }],
    [
      "subagent system prompt",
      mainBody("s1", undefined, {
        system: [{
          type: "text",
          text: "x-anthropic-billing-header: cc_version=2; cc_is_subagent=true;",
        }],
      }),
      {},
    ],
    [
      "prompt suggestion fork",
      mainBody("s1", [{
        role: "user",
        content: "[SUGGESTION MODE: Suggest what the user might type]",
      }]),
      {},
    ],
  ];
  for (const [name, body, headers] of sideCases) {
    await t.step(name, async () => {
      assert.equal(isSideRequest(body, headers), true);
      await using server = await ScriptedModelServer.start({
        scripts: [[textTurn("Main 0"), textTurn("Main 1")]],
      });
      assert.equal(await replyText(server, mainBody("s1")), "Main 0");
      assert.equal(await replyText(server, body, headers), "OK.");
      assert.equal(await replyText(server, mainBody("s1")), "Main 1");
      assert.deepEqual(server.requests.map((r) => [r.side, r.turnIndex]), [
        [false, 0],
        [true, -1],
        [false, 1],
      ]);
    });
  }

  await t.step(
    "a sideReply function answers side requests with turnIndex -1",
    async () => {
      const turns: number[] = [];
      await using server = await ScriptedModelServer.start({
        sideReply: (ctx) => {
          turns.push(ctx.turnIndex);
          return textTurn('{"ok": true, "reason": "done"}');
        },
      });
      assert.equal(
        await replyText(server, mainBody("s1", undefined, { tools: [] })),
        '{"ok": true, "reason": "done"}',
      );
      assert.deepEqual(turns, [-1]);
    },
  );

  await t.step("an isSideRequest option replaces the rule", async () => {
    await using server = await ScriptedModelServer.start({
      scripts: [[textTurn("Main 0")]],
      isSideRequest: () => false,
    });
    assert.equal(
      await replyText(server, mainBody("s1", undefined, { tools: [] })),
      "Main 0",
    );
  });
});
