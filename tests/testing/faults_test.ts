import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { delay, mainBody, parseSse, post, replyText } from "./_helpers.ts";

Deno.test("faults and delays break replies the way a real API can", async (t) => {
  await t.step(
    "an HTTP fault answers in the API's error shape and uses up its step",
    async () => {
      await using server = await ScriptedModelServer.start({
        scripts: [[{
          fault: { kind: "http", status: 529, headers: { "retry-after": "0" } },
        }, textTurn("Retried")]],
      });
      const response = await post(server, mainBody("s1"));
      assert.equal(response.status, 529);
      assert.equal(response.headers.get("retry-after"), "0");
      assert.deepEqual(await response.json(), {
        type: "error",
        error: { type: "overloaded_error", message: "Scripted error 529" },
      });
      assert.equal(await replyText(server, mainBody("s1")), "Retried");
    },
  );

  await t.step(
    "a reset sends the first events, then drops the connection",
    async () => {
      await using server = await ScriptedModelServer.start({
        scripts: [[{
          text: "Hello",
          fault: { kind: "reset", afterEvents: 2 },
        }]],
      });
      const response = await post(server, mainBody("s1"));
      assert.equal(response.status, 200);
      const reader = response.body!.pipeThrough(new TextDecoderStream())
        .getReader();
      let received = "";
      await assert.rejects(async () => {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          received += value;
        }
      });
      assert.deepEqual(parseSse(received).map((e) => e.event), [
        "message_start",
        "content_block_start",
      ]);
    },
  );

  await t.step(
    "a malformed stream carries an event whose data is not JSON",
    async () => {
      await using server = await ScriptedModelServer.start({
        scripts: [[{
          text: "Hello",
          fault: { kind: "malformed", afterEvents: 1 },
        }]],
      });
      const text = await (await post(server, mainBody("s1"))).text();
      assert.throws(() => parseSse(text), SyntaxError);
      assert.equal(
        parseSse(text.slice(0, text.indexOf("\n\n") + 2))[0].event,
        "message_start",
      );
    },
  );

  await t.step(
    "a hanging stream stays open until the server closes",
    async () => {
      const server = await ScriptedModelServer.start({
        scripts: [[{ fault: { kind: "hang", afterEvents: 1 } }]],
      });
      try {
        const response = await post(server, mainBody("s1"));
        const reader = response.body!.pipeThrough(new TextDecoderStream())
          .getReader();
        const first = await reader.read();
        assert.match(first.value ?? "", /^event: message_start\n/);
        const next = reader.read();
        const stalled = await Promise.race([
          next.then(() => "read"),
          delay(100).then(() => "stalled"),
        ]);
        assert.equal(stalled, "stalled");
        await server.close();
        await assert.rejects(next);
      } finally {
        await server.close();
      }
    },
  );

  await t.step("delayMs holds the reply back", async () => {
    await using server = await ScriptedModelServer.start({
      scripts: [[{ text: "Late", delayMs: 150 }]],
    });
    const started = performance.now();
    assert.equal(await replyText(server, mainBody("s1")), "Late");
    assert.ok(
      performance.now() - started >= 140,
      "the reply waited for its delay",
    );
  });
});
