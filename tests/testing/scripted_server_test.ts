import assert from "node:assert/strict";
import { type Options, query, type SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import {
  isSideRequest,
  type RecordedRequest,
  ScriptedModelServer,
  type ScriptedServerOptions,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";

// ---------------------------------------------------------------------------
// Helpers for talking to the server the way Claude Code does.

interface SseEvent {
  event: string;
  data: Record<string, unknown>;
}

/** A request body shaped like a main-loop request of Claude Code. */
function mainBody(
  sessionId: string,
  messages: unknown[] = [{ role: "user", content: "Hi" }],
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    model: "claude-test",
    messages,
    system: [{ type: "text", text: "You are a Claude agent." }],
    tools: [{ name: "Bash", input_schema: { type: "object" } }],
    metadata: {
      user_id: JSON.stringify({
        device_id: "d",
        account_uuid: "",
        session_id: sessionId,
      }),
    },
    max_tokens: 1000,
    stream: true,
    ...extra,
  };
}

function post(
  server: ScriptedModelServer,
  body: unknown,
  options: { path?: string; headers?: Record<string, string> } = {},
): Promise<Response> {
  return fetch(`${server.url}${options.path ?? "/v1/messages?beta=true"}`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": "sk-secret",
      ...options.headers,
    },
    body: JSON.stringify(body),
  });
}

/** Parses an SSE body strictly: every frame is `event: NAME\ndata: JSON`. */
function parseSse(text: string): SseEvent[] {
  assert.ok(text.endsWith("\n\n"), "the stream ends with a blank line");
  return text.slice(0, -2).split("\n\n").map((frame) => {
    const match = /^event: ([a-z_]+)\ndata: (.*)$/.exec(frame);
    assert.ok(match, `malformed SSE frame: ${JSON.stringify(frame)}`);
    const data = JSON.parse(match[2]);
    assert.equal(data.type, match[1], "the data type repeats the event name");
    return { event: match[1], data };
  });
}

async function readSse(response: Response): Promise<SseEvent[]> {
  assert.equal(response.status, 200);
  assert.match(
    response.headers.get("content-type") ?? "",
    /^text\/event-stream/,
  );
  return parseSse(await response.text());
}

/** Rebuilds the assistant message from its stream, as the Anthropic SDK does. */
function assemble(events: SseEvent[]): Record<string, unknown> {
  const start = events[0].data.message as Record<string, unknown>;
  const content: Record<string, unknown>[] = [];
  const json: string[] = [];
  let stopReason: unknown = null;
  let outputTokens: unknown;
  for (const { event, data } of events) {
    const index = data.index as number;
    const delta = data.delta as Record<string, unknown>;
    if (event === "content_block_start") {
      content[index] = { ...(data.content_block as Record<string, unknown>) };
      json[index] = "";
    } else if (event === "content_block_delta" && delta.type === "text_delta") {
      content[index].text += delta.text as string;
    } else if (
      event === "content_block_delta" && delta.type === "input_json_delta"
    ) {
      json[index] += delta.partial_json as string;
    } else if (
      event === "content_block_stop" && content[index].type === "tool_use"
    ) {
      content[index].input = JSON.parse(json[index]);
    } else if (event === "message_delta") {
      stopReason = delta.stop_reason;
      outputTokens = (data.usage as Record<string, unknown>).output_tokens;
    }
  }
  return {
    ...start,
    content,
    stop_reason: stopReason,
    output_tokens: outputTokens,
  };
}

async function replyOf(
  server: ScriptedModelServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  return assemble(await readSse(await post(server, body, { headers })));
}

async function replyText(
  server: ScriptedModelServer,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<string> {
  const message = await replyOf(server, body, headers);
  return (message.content as { text?: string }[]).map((block) => block.text ?? "").join("");
}

// ---------------------------------------------------------------------------
// The server on its own.

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

Deno.test("a session whose script is exhausted gets the fallback reply", async (t) => {
  await t.step("the default fallback says Done.", async () => {
    await using server = await ScriptedModelServer.start({
      scripts: [[textTurn("One")]],
    });
    assert.equal(await replyText(server, mainBody("s1")), "One");
    assert.equal(await replyText(server, mainBody("s1")), "Done.");
    assert.equal(await replyText(server, mainBody("s1")), "Done.");
    assert.deepEqual(server.requests.map((r) => r.turnIndex), [0, 1, 2]);
  });

  await t.step(
    "a session beyond the scripts given gets the fallback too",
    async () => {
      await using server = await ScriptedModelServer.start({
        scripts: [[textTurn("One")]],
        fallback: textTurn("Nothing left"),
      });
      assert.equal(await replyText(server, mainBody("s1")), "One");
      assert.equal(await replyText(server, mainBody("s2")), "Nothing left");
    },
  );
});

Deno.test("each session keeps its own script and turn counter", async (t) => {
  await t.step("scripts by arrival order, interleaved", async () => {
    await using server = await ScriptedModelServer.start({
      scripts: [[textTurn("A0"), textTurn("A1")], [
        textTurn("B0"),
        textTurn("B1"),
      ]],
    });
    const replies = [];
    for (const session of ["first", "second", "first", "second"]) {
      replies.push(await replyText(server, mainBody(session)));
    }
    assert.deepEqual(replies, ["A0", "B0", "A1", "B1"]);
    assert.deepEqual(server.sessionIds(), ["first", "second"]);
    assert.deepEqual(
      server.requests.map((r) => [r.sessionIndex, r.turnIndex]),
      [[0, 0], [1, 0], [0, 1], [1, 1]],
    );
  });

  await t.step(
    "a function chooses the script at the session's first main request",
    async () => {
      const chosen: string[] = [];
      await using server = await ScriptedModelServer.start({
        scripts: ({ sessionId, sessionIndex, request }) => {
          chosen.push(`${sessionIndex}:${sessionId}:${request.turnIndex}`);
          return [textTurn(`script for ${sessionId}`)];
        },
      });
      assert.equal(await replyText(server, mainBody("x")), "script for x");
      assert.equal(await replyText(server, mainBody("x")), "Done.");
      assert.equal(await replyText(server, mainBody("y")), "script for y");
      assert.deepEqual(chosen, ["0:x:0", "1:y:0"]);
    },
  );

  await t.step(
    "the session id falls back to the x-claude-code-session-id header",
    async () => {
      await using server = await ScriptedModelServer.start();
      const body = { ...mainBody(""), metadata: undefined };
      await (await post(server, body, {
        headers: { "x-claude-code-session-id": "from-header" },
      })).body?.cancel();
      assert.deepEqual(server.sessionIds(), ["from-header"]);
    },
  );
});

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

Deno.test("every request is recorded in arrival order, with secrets redacted", async () => {
  await using server = await ScriptedModelServer.start({
    scripts: [[textTurn("A")]],
  });
  await replyText(server, mainBody("s1"));
  const count = await post(server, mainBody("s1"), {
    path: "/v1/messages/count_tokens",
  });
  assert.equal(count.status, 200);
  const { input_tokens } = await count.json();
  assert.ok(
    Number.isInteger(input_tokens) && input_tokens > 0,
    "count_tokens answers a positive count",
  );
  const missing = await fetch(`${server.url}/api/hello`);
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), {
    type: "error",
    error: {
      type: "not_found_error",
      message: 'No route for "GET /api/hello"',
    },
  });

  const summary = server.requests.map((
    r: RecordedRequest,
  ) => [r.method, r.path, r.sessionId, r.sessionIndex, r.side]);
  assert.deepEqual(summary, [
    ["POST", "/v1/messages", "s1", 0, false],
    ["POST", "/v1/messages/count_tokens", "s1", 0, true],
    ["GET", "/api/hello", "", -1, true],
  ]);
  const first = server.requests[0];
  assert.equal(first.headers["x-api-key"], "[redacted]");
  assert.deepEqual(first.body.messages, [{ role: "user", content: "Hi" }]);
  assert.ok(first.receivedAt <= server.requests[2].receivedAt);
  assert.deepEqual(server.sessionIds(), ["s1"]);
});

Deno.test("env points Claude Code at the server with a private home", async () => {
  await using server = await ScriptedModelServer.start();
  assert.deepEqual(server.env("/tmp/h/"), {
    ANTHROPIC_BASE_URL: server.url,
    ANTHROPIC_API_KEY: "sk-test",
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    HOME: "/tmp/h/",
    CLAUDE_CONFIG_DIR: "/tmp/h/.claude",
  });
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
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

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// ---------------------------------------------------------------------------
// The real Claude Code binary, through the Agent SDK, against the server.

interface Run {
  messages: SDKMessage[];
  result: Extract<SDKMessage, { type: "result" }>;
  sessionId: string;
}

/** Runs one real Claude Code session against `server` in `cwd`, with `home` as HOME. */
async function runClaude(
  server: ScriptedModelServer,
  dirs: { cwd: string; home: string },
  options: { prompt?: string } & Options = {},
): Promise<Run> {
  const { prompt = "Do the task", ...rest } = options;
  const messages: SDKMessage[] = [];
  for await (
    const message of query({
      prompt,
      options: {
        cwd: dirs.cwd,
        env: { ...Deno.env.toObject(), ...server.env(dirs.home) },
        permissionMode: "default",
        settingSources: [],
        ...rest,
      },
    })
  ) {
    messages.push(message);
  }
  const result = messages.findLast((m) => m.type === "result");
  assert.ok(
    result && result.type === "result",
    "the session ends with a result message",
  );
  return { messages, result, sessionId: result.session_id };
}

/** Gives `fn` a fresh working directory and HOME, removed afterwards. */
async function withDirs(
  fn: (dirs: { cwd: string; home: string }) => Promise<void>,
): Promise<void> {
  const cwd = await Deno.makeTempDir({ prefix: "finishline-scripted-cwd-" });
  const home = await Deno.makeTempDir({ prefix: "finishline-scripted-home-" });
  try {
    await fn({ cwd, home });
  } finally {
    await Deno.remove(cwd, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

function resultText(run: Run): string {
  assert.equal(run.result.subtype, "success");
  return run.result.subtype === "success" ? run.result.result : "";
}

function mainRequests(
  server: ScriptedModelServer,
  sessionId: string,
): RecordedRequest[] {
  return server.requests.filter((r) => r.sessionId === sessionId && !r.side);
}

Deno.test("Claude Code runs a scripted Bash tool use and sends its result back", async () => {
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "echo hi > out.txt" }, "Writing the file."),
      (ctx) => textTurn(`Saw the result: ${JSON.stringify(ctx.lastUserText)}`),
    ]],
  });
  await withDirs(async (dirs) => {
    const started = performance.now();
    const run = await runClaude(server, dirs, { allowedTools: ["Bash"] });
    const seconds = (performance.now() - started) / 1000;

    assert.equal(await Deno.readTextFile(`${dirs.cwd}/out.txt`), "hi\n");
    assert.match(resultText(run), /^Saw the result: /);
    const [first, second] = mainRequests(server, run.sessionId);
    assert.deepEqual([first.turnIndex, second.turnIndex], [0, 1]);
    assert.equal(first.path, "/v1/messages");
    assert.equal(first.body.stream, true);

    const assistant = (second.body.messages as { role: string; content: unknown }[])
      .findLast((m) => m.role === "assistant");
    const toolUse = (assistant?.content as Record<string, unknown>[]).find((
      b,
    ) => b.type === "tool_use");
    assert.ok(toolUse, "the second request replays the scripted tool use");
    assert.deepEqual(toolUse.input, { command: "echo hi > out.txt" });
    const user = (second.body.messages as { role: string; content: unknown }[])
      .findLast((m) => m.role === "user");
    const toolResult = (user?.content as Record<string, unknown>[]).find((b) =>
      b.type === "tool_result"
    );
    assert.ok(toolResult, "the second request carries the tool_result");
    assert.equal(toolResult.tool_use_id, toolUse.id);
    assert.equal(toolResult.is_error, false);
    assert.ok(seconds < 30, `one session took ${seconds.toFixed(2)} s`);
  });
});

Deno.test("sequential Claude Code sessions get scripts in arrival order", async () => {
  await using server = await ScriptedModelServer.start({
    scripts: [[textTurn("From script 0")], [textTurn("From script 1")]],
  });
  await withDirs(async (dirs) => {
    const first = await runClaude(server, dirs);
    const second = await runClaude(server, dirs);
    assert.equal(resultText(first), "From script 0");
    assert.equal(resultText(second), "From script 1");
    assert.notEqual(first.sessionId, second.sessionId);
    assert.deepEqual(server.sessionIds(), [first.sessionId, second.sessionId]);
  });
});

Deno.test("a resumed Claude Code session continues its script; a fork starts the next one", async () => {
  await using server = await ScriptedModelServer.start({
    scripts: [
      [
        toolTurn("Bash", { command: "echo one" }),
        textTurn("Step 1"),
        textTurn("Step 2 after resume"),
      ],
      [textTurn("Fork's own script")],
    ],
  });
  await withDirs(async (dirs) => {
    // promptSuggestions makes Claude Code fork a side request with the main loop's
    // tools after the turn; it must not use up "Step 2 after resume".
    const first = await runClaude(server, dirs, {
      allowedTools: ["Bash"],
      promptSuggestions: true,
    });
    assert.equal(resultText(first), "Step 1");
    const suggestion = server.requests.find((r) => r.side && r.sessionId === first.sessionId);
    assert.ok(suggestion, "Claude Code sent a prompt suggestion side request");
    assert.equal(suggestion.turnIndex, -1);

    const resumed = await runClaude(server, dirs, {
      prompt: "And now?",
      resume: first.sessionId,
    });
    assert.equal(
      resumed.sessionId,
      first.sessionId,
      "resuming keeps the session id",
    );
    assert.equal(resultText(resumed), "Step 2 after resume");

    const fork = await runClaude(server, dirs, {
      prompt: "Fork",
      resume: first.sessionId,
      forkSession: true,
    });
    assert.notEqual(
      fork.sessionId,
      first.sessionId,
      "a fork gets a new session id",
    );
    assert.equal(resultText(fork), "Fork's own script");
    assert.deepEqual(server.sessionIds(), [first.sessionId, fork.sessionId]);
  });
});

Deno.test("a prompt hook's side requests do not use up the Claude Code session's script", async () => {
  const hookReplies = [
    { ok: false, reason: "Write the summary first" },
    { ok: true, reason: "The summary is there" },
  ];
  const options: ScriptedServerOptions = {
    scripts: [[
      textTurn("First answer"),
      textTurn("Second answer, with the summary"),
    ]],
    sideReply: () =>
      textTurn(
        JSON.stringify(hookReplies.shift() ?? { ok: true, reason: "Fine" }),
      ),
  };
  await using server = await ScriptedModelServer.start(options);
  await withDirs(async (dirs) => {
    const settings = `${dirs.home}/hook_settings.json`;
    await Deno.writeTextFile(
      settings,
      JSON.stringify({
        hooks: {
          Stop: [{
            hooks: [{
              type: "prompt",
              prompt: "Is there a summary? $ARGUMENTS",
            }],
          }],
        },
      }),
    );
    const run = await runClaude(server, dirs, { settings });
    assert.equal(resultText(run), "Second answer, with the summary");
    const requests = server.requests.filter((r) => r.path === "/v1/messages");
    assert.deepEqual(requests.map((r) => [r.side, r.turnIndex]), [
      [false, 0],
      [true, -1],
      [false, 1],
      [true, -1],
    ]);
    assert.deepEqual(
      requests[1].body.tools,
      [],
      "the hook request carries no tools",
    );
    const feedback = (requests[2].body.messages as { role: string; content: unknown }[]).at(
      -1,
    );
    assert.match(JSON.stringify(feedback), /Write the summary first/);
  });
});
