import assert from "node:assert/strict";
import { type Options, query, type SDKMessage } from "@anthropic-ai/claude-agent-sdk";
import {
  type RecordedRequest,
  ScriptedModelServer,
  type ScriptedServerOptions,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { mainBody, post, replyText } from "./_helpers.ts";

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
    CLAUDE_CODE_TMPDIR: "/tmp/h/tmp",
  });
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
});

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
