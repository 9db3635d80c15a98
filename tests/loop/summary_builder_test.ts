import assert from "node:assert/strict";
import { extractActions, SummaryBuilder } from "../../agents/loop/summary_builder.ts";
import { type AgentMessage, emptySummary } from "../../agents/record/iteration.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";

// Messages shaped like the Claude Agent SDK's (SDKSystemMessage,
// SDKAssistantMessage, SDKUserMessage, SDKResultMessage), trimmed to the
// fields a session really carries.

const SESSION = "8f1c2a8e-4d0b-4a52-9d1e-6b7c3f0a9e21";

function systemInit(session = SESSION): AgentMessage {
  return {
    type: "system",
    subtype: "init",
    uuid: crypto.randomUUID(),
    session_id: session,
    apiKeySource: "ANTHROPIC_API_KEY",
    claude_code_version: "2.1.0",
    cwd: "/repo",
    tools: ["Bash", "Read", "Edit", "Task", COMPLETE_TASK_TOOL],
    mcp_servers: [{ name: "finishline", status: "connected" }],
    model: "claude-sonnet-4-5",
    permissionMode: "acceptEdits",
    slash_commands: [],
    output_style: "default",
    skills: [],
    plugins: [],
  };
}

type Block = Record<string, unknown>;

function assistant(
  content: Block[],
  extra: Record<string, unknown> = {},
): AgentMessage {
  return {
    type: "assistant",
    uuid: crypto.randomUUID(),
    session_id: SESSION,
    parent_tool_use_id: null,
    message: {
      id: "msg_01",
      type: "message",
      role: "assistant",
      model: "claude-sonnet-4-5",
      content,
      stop_reason: null,
      usage: { input_tokens: 10, output_tokens: 5 },
    },
    ...extra,
  };
}

function text(value: string): Block {
  return { type: "text", text: value };
}

function toolUse(id: string, name: string, input: unknown): Block {
  return { type: "tool_use", id, name, input };
}

function userToolResult(
  id: string,
  content: unknown,
  isError: boolean,
  extra: Record<string, unknown> = {},
): AgentMessage {
  return {
    type: "user",
    uuid: crypto.randomUUID(),
    session_id: SESSION,
    parent_tool_use_id: null,
    message: {
      role: "user",
      content: [{
        type: "tool_result",
        tool_use_id: id,
        content,
        is_error: isError,
      }],
    },
    ...extra,
  };
}

function resultSuccess(extra: Record<string, unknown> = {}): AgentMessage {
  return {
    type: "result",
    subtype: "success",
    uuid: crypto.randomUUID(),
    session_id: SESSION,
    duration_ms: 41234,
    duration_api_ms: 30100,
    is_error: false,
    num_turns: 6,
    result: "The date parser now handles leap years.",
    stop_reason: "end_turn",
    total_cost_usd: 0.1834,
    usage: {
      input_tokens: 1200,
      cache_creation_input_tokens: 5400,
      cache_read_input_tokens: 48000,
      output_tokens: 2100,
      server_tool_use: { web_search_requests: 0 },
    },
    modelUsage: {},
    permission_denials: [],
    ...extra,
  };
}

function resultError(
  subtype: string,
  errors: string[],
  extra: Record<string, unknown> = {},
): AgentMessage {
  return {
    type: "result",
    subtype,
    uuid: crypto.randomUUID(),
    session_id: SESSION,
    duration_ms: 90000,
    duration_api_ms: 80000,
    is_error: true,
    num_turns: 5,
    stop_reason: null,
    total_cost_usd: 0.42,
    usage: {
      input_tokens: 3000,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 900,
    },
    modelUsage: {},
    permission_denials: [],
    errors,
    ...extra,
  };
}

function summarise(messages: AgentMessage[], iteration = 1): IterationSummary {
  const builder = new SummaryBuilder(iteration);
  for (const message of messages) builder.add(message);
  return builder.finish(41234.6);
}

Deno.test("summary builder records a successful session", () => {
  const summary = summarise([
    systemInit(),
    assistant([
      text("I'll run the tests first."),
      toolUse("toolu_01", "Bash", { command: "deno test" }),
    ]),
    userToolResult("toolu_01", "ok | 3 passed | 1 failed", false),
    assistant([
      toolUse("toolu_02", "Read", { file_path: "/repo/date.ts" }),
    ]),
    userToolResult("toolu_02", [{ type: "text", text: "export ..." }], false),
    assistant([
      toolUse("toolu_03", "Edit", {
        file_path: "/repo/date.ts",
        old_string: "% 4",
        new_string: "% 400",
      }),
    ]),
    userToolResult("toolu_03", "The file was updated.", false),
    assistant([toolUse("toolu_04", "Bash", { command: "deno test" })]),
    userToolResult("toolu_04", "ok | 4 passed", false),
    assistant([text("The date parser now handles leap years.")]),
    resultSuccess(),
  ], 2);

  assert.deepEqual(summary, {
    iteration: 2,
    sessionId: SESSION,
    // From the init message: the model the session ran on.
    model: "claude-sonnet-4-5",
    assistantResponses: [
      "I'll run the tests first.",
      "The date parser now handles leap years.",
    ],
    toolsUsed: ["Bash", "Read", "Edit", "Bash"],
    toolCalls: [
      { name: "Bash", input: { command: "deno test" } },
      { name: "Read", input: { file_path: "/repo/date.ts" } },
      {
        name: "Edit",
        input: {
          file_path: "/repo/date.ts",
          old_string: "% 4",
          new_string: "% 400",
        },
      },
      { name: "Bash", input: { command: "deno test" } },
    ],
    detectedActions: [],
    errors: [],
    costUsd: 0.1834,
    tokens: {
      input: 1200,
      output: 2100,
      cacheRead: 48000,
      cacheCreation: 5400,
    },
    turns: 6,
    durationMs: 41235,
    stopReason: "end_turn",
  });
});

Deno.test("summary builder tracks the session and the result as they arrive", async (t) => {
  await t.step("the session id comes from the init message", () => {
    const builder = new SummaryBuilder(1);
    builder.add(systemInit("session-a"));
    assert.equal(builder.current.sessionId, "session-a");
  });

  await t.step("an empty session id does not replace a known one", () => {
    const builder = new SummaryBuilder(1);
    builder.add(systemInit("session-a"));
    builder.add({ ...resultSuccess(), session_id: "" });
    assert.equal(builder.current.sessionId, "session-a");
  });

  await t.step("sawResult turns true with the result message", () => {
    const builder = new SummaryBuilder(1);
    builder.add(systemInit());
    builder.add(assistant([text("Working.")]));
    assert.equal(builder.sawResult, false);
    assert.deepEqual(builder.current.assistantResponses, ["Working."]);
    builder.add(resultSuccess());
    assert.equal(builder.sawResult, true);
  });

  await t.step("a session cut off before its result keeps what it saw", () => {
    const builder = new SummaryBuilder(3);
    builder.add(systemInit());
    builder.add(assistant([toolUse("toolu_1", "Bash", { command: "ls" })]));
    const summary = builder.finish(500);
    assert.equal(builder.sawResult, false);
    assert.deepEqual(summary.toolsUsed, ["Bash"]);
    assert.equal(summary.stopReason, null);
    assert.equal(summary.costUsd, 0);
    assert.equal(summary.durationMs, 500);
  });

  await t.step("unknown message types are ignored", () => {
    const summary = summarise([
      systemInit(),
      { type: "stream_event", session_id: SESSION, event: { type: "ping" } },
      { type: "system", subtype: "compact_boundary", session_id: SESSION },
      resultSuccess(),
    ]);
    assert.deepEqual(summary.assistantResponses, []);
    assert.deepEqual(summary.errors, []);
  });

  await t.step("a success without stop_reason stopped at end_turn", () => {
    const summary = summarise([resultSuccess({ stop_reason: null })]);
    assert.equal(summary.stopReason, "end_turn");
  });

  await t.step("a success stopped by max_tokens says so", () => {
    const summary = summarise([resultSuccess({ stop_reason: "max_tokens" })]);
    assert.equal(summary.stopReason, "max_tokens");
    assert.deepEqual(summary.errors, []);
  });

  await t.step("missing or odd usage numbers count as zero", () => {
    const summary = summarise([
      resultSuccess({
        usage: { input_tokens: "12", output_tokens: Number.NaN },
        total_cost_usd: undefined,
        num_turns: undefined,
      }),
    ]);
    assert.deepEqual(summary.tokens, {
      input: 0,
      output: 0,
      cacheRead: 0,
      cacheCreation: 0,
    });
    assert.equal(summary.costUsd, 0);
    assert.equal(summary.turns, 0);
  });
});

Deno.test("summary builder records errors", async (t) => {
  await t.step("a tool result with is_error, named after its tool", () => {
    const summary = summarise([
      assistant([toolUse("toolu_01", "Bash", { command: "deno task ok" })]),
      userToolResult("toolu_01", "error: 3 lint problems", true),
      assistant([toolUse("toolu_02", "Read", { file_path: "/nope" })]),
      userToolResult(
        "toolu_02",
        [{ type: "text", text: "File does not exist." }],
        true,
      ),
      userToolResult("toolu_99", "Permission denied", true),
      userToolResult("toolu_01", "fine", false),
    ]);
    assert.deepEqual(summary.errors, [
      "Bash: error: 3 lint problems",
      "Read: File does not exist.",
      "tool: Permission denied",
    ]);
  });

  await t.step("a long tool error is cut to 300 characters", () => {
    const summary = summarise([
      assistant([toolUse("toolu_01", "Bash", { command: "make" })]),
      userToolResult("toolu_01", "x".repeat(1000), true),
    ]);
    assert.equal(summary.errors[0], `Bash: ${"x".repeat(300)}`);
  });

  await t.step("a user message with plain text content is not an error", () => {
    const summary = summarise([{
      type: "user",
      session_id: SESSION,
      parent_tool_use_id: null,
      message: { role: "user", content: "Continue." },
    }]);
    assert.deepEqual(summary.errors, []);
  });

  await t.step("a result error_max_turns with its errors", () => {
    const summary = summarise([
      systemInit(),
      assistant([toolUse("toolu_01", "Bash", { command: "deno test" })]),
      resultError("error_max_turns", ["Reached maximum number of turns (5)"]),
    ]);
    assert.equal(summary.stopReason, "error_max_turns");
    assert.deepEqual(summary.errors, [
      "result error_max_turns: Reached maximum number of turns (5)",
    ]);
    assert.equal(summary.costUsd, 0.42);
    assert.equal(summary.turns, 5);
    assert.deepEqual(summary.tokens, {
      input: 3000,
      output: 900,
      cacheRead: 0,
      cacheCreation: 0,
    });
  });

  await t.step("a result error without details", () => {
    const summary = summarise([resultError("error_during_execution", [])]);
    assert.equal(summary.stopReason, "error_during_execution");
    assert.deepEqual(summary.errors, ["result error_during_execution"]);
  });

  await t.step("several result errors are joined", () => {
    const summary = summarise([
      resultError("error_max_budget_usd", ["Budget exceeded", "Stopped"]),
    ]);
    assert.deepEqual(summary.errors, [
      "result error_max_budget_usd: Budget exceeded; Stopped",
    ]);
  });

  await t.step("a success flagged is_error records the result text", () => {
    const summary = summarise([
      resultSuccess({
        is_error: true,
        result: "API Error: 529 Overloaded",
        stop_reason: null,
      }),
    ]);
    assert.deepEqual(summary.errors, [
      "result success: API Error: 529 Overloaded",
    ]);
  });

  await t.step("an assistant message with an API error", () => {
    const summary = summarise([
      assistant(
        [text("API Error: Rate limit reached for requests")],
        { error: "rate_limit" },
      ),
      resultSuccess({ is_error: false }),
    ]);
    assert.deepEqual(summary.errors, [
      "api rate_limit: API Error: Rate limit reached for requests",
    ]);
  });

  await t.step("an API error without text", () => {
    const summary = summarise([assistant([], { error: "overloaded" })]);
    assert.deepEqual(summary.errors, ["api overloaded"]);
  });
});

Deno.test("subagent messages are not counted as the agent's responses", () => {
  const summary = summarise([
    systemInit(),
    assistant([
      text("I'll delegate the search."),
      toolUse("toolu_task", "Task", {
        description: "Find date code",
        prompt: "Find every date parser",
      }),
    ]),
    assistant(
      [
        text(
          'Found 3 parsers. ALL DONE\n```action\n{"type": "decision", "text": "sub"}\n```',
        ),
      ],
      { parent_tool_use_id: "toolu_task" },
    ),
    userToolResult("toolu_task", "3 parsers found", false, {
      parent_tool_use_id: null,
    }),
    assistant([text("The subagent found three parsers.")]),
    resultSuccess(),
  ]);
  assert.deepEqual(summary.assistantResponses, [
    "I'll delegate the search.",
    "The subagent found three parsers.",
  ]);
  assert.deepEqual(summary.detectedActions, []);
});

Deno.test("summary builder captures the complete_task call", async (t) => {
  const payload = {
    status: "success",
    original_request_summary: "Fix the leap year bug in the date parser",
    summary: "Fixed the modulo check and added a test",
    learned: ["The parser is shared by two modules"],
    files_modified: ["date.ts", "date_test.ts"],
    next_steps: "None",
  };

  await t.step("with its input", () => {
    const summary = summarise([
      assistant([text("Everything passes.")]),
      assistant([toolUse("toolu_09", COMPLETE_TASK_TOOL, payload)]),
      userToolResult("toolu_09", "Recorded.", false),
      resultSuccess(),
    ]);
    assert.equal(COMPLETE_TASK_TOOL, "mcp__finishline__complete_task");
    assert.deepEqual(summary.completeTask, payload);
    assert.deepEqual(summary.toolsUsed, [COMPLETE_TASK_TOOL]);
  });

  await t.step("a later call replaces an earlier one", () => {
    const summary = summarise([
      assistant([
        toolUse("toolu_1", COMPLETE_TASK_TOOL, {
          ...payload,
          status: "partial",
        }),
      ]),
      assistant([toolUse("toolu_2", COMPLETE_TASK_TOOL, payload)]),
    ]);
    assert.equal(summary.completeTask?.status, "success");
  });

  await t.step("a call without an object input is not captured", () => {
    const summary = summarise([
      assistant([toolUse("toolu_1", COMPLETE_TASK_TOOL, "success")]),
    ]);
    assert.equal(summary.completeTask, undefined);
  });

  await t.step("a tool with a similar name is not complete_task", () => {
    const summary = summarise([
      assistant([toolUse("toolu_1", "mcp__other__complete_task", payload)]),
    ]);
    assert.equal(summary.completeTask, undefined);
  });
});

Deno.test("action blocks are detected in the agent's text", async (t) => {
  await t.step("the default ```action fence", () => {
    const summary = summarise([
      assistant([
        text(
          'We agreed on pricing.\n\n```action\n{"type": "decision", "text": "Monthly plans"}\n```\n\nNext: billing.',
        ),
      ]),
      assistant([
        text(
          '```action\n{"type": "decision", "text": "Annual discount"}\n```',
        ),
      ]),
    ]);
    assert.deepEqual(summary.detectedActions, [
      { type: "decision", text: "Monthly plans" },
      { type: "decision", text: "Annual discount" },
    ]);
  });

  await t.step("several blocks in one text, in order", () => {
    const actions = extractActions(
      '```action\n{"type": "a"}\n```\n```action\n{"type": "b"}\n```\ntext\n```action\n{"type": "c"}\n```',
    );
    assert.deepEqual(actions.map((action) => action.type), ["a", "b", "c"]);
  });

  await t.step("a custom outputFormat", () => {
    const block =
      '```decision-log\n{"type": "decision", "text": "x"}\n```\n```action\n{"type": "other"}\n```';
    const builder = new SummaryBuilder(1, { outputFormat: "decision-log" });
    builder.add(assistant([text(block)]));
    assert.deepEqual(builder.current.detectedActions, [
      { type: "decision", text: "x" },
    ]);
  });

  await t.step("outputFormat is matched literally, not as a pattern", () => {
    const block = '```actionXjson\n{"type": "x"}\n```';
    assert.deepEqual(
      extractActions(block, { outputFormat: "action.json" }),
      [],
    );
    assert.equal(
      extractActions(block.replace("X", "."), { outputFormat: "action.json" })
        .length,
      1,
    );
  });

  await t.step("other fences are not action blocks", () => {
    for (
      const info of ["json", "actions", "action extra", "", "Action"]
    ) {
      assert.deepEqual(
        extractActions(`\`\`\`${info}\n{"type": "x"}\n\`\`\``),
        [],
        info,
      );
    }
  });

  await t.step("the types filter", () => {
    const block =
      '```action\n{"type": "decision"}\n```\n```action\n{"type": "note"}\n```\n```action\n{"type": "question"}\n```';
    assert.deepEqual(
      extractActions(block, { types: ["decision", "question"] }).map((a) => a.type),
      ["decision", "question"],
    );
    assert.equal(extractActions(block, { types: [] }).length, 3);
  });

  await t.step("malformed JSON is skipped, the rest kept", () => {
    const block =
      '```action\n{"type": "decision", text: unquoted}\n```\n```action\n{"type": "decision", "text": "ok"}\n```';
    assert.deepEqual(extractActions(block), [
      { type: "decision", text: "ok" },
    ]);
  });

  await t.step("bodies without a string type are skipped", () => {
    for (const body of ['{"text": "x"}', '{"type": 3}', '"decision"', "null"]) {
      assert.deepEqual(extractActions(`\`\`\`action\n${body}\n\`\`\``), []);
    }
  });

  await t.step("an array body gives one action per typed element", () => {
    const block = '```action\n[{"type": "decision", "n": 1}, {"n": 2}, "x", {"type": "note"}]\n```';
    assert.deepEqual(extractActions(block), [
      { type: "decision", n: 1 },
      { type: "note" },
    ]);
    assert.deepEqual(
      extractActions(block, { types: ["note"] }),
      [{ type: "note" }],
    );
  });

  await t.step("~~~ fences and longer fences", () => {
    const block = [
      "~~~action",
      '{"type": "tilde"}',
      "~~~",
      "````action",
      '{"type": "four", "code": "```"}',
      "````",
    ].join("\n");
    assert.deepEqual(extractActions(block).map((a) => a.type), [
      "tilde",
      "four",
    ]);
  });

  await t.step("a fence must close with its own kind", () => {
    assert.deepEqual(extractActions('~~~action\n{"type": "x"}\n```'), []);
  });

  await t.step("multi-line bodies, indented fences and CRLF", () => {
    const block =
      '  ```action\r\n  {\r\n    "type": "decision",\r\n    "text": "x"\r\n  }\r\n  ```';
    assert.deepEqual(extractActions(block), [{ type: "decision", text: "x" }]);
  });

  await t.step("detection can be turned off", () => {
    const builder = new SummaryBuilder(1, { enabled: false });
    builder.add(assistant([text('```action\n{"type": "x"}\n```')]));
    assert.deepEqual(builder.current.detectedActions, []);
  });

  await t.step("blocks in tool inputs are not actions", () => {
    const summary = summarise([
      assistant([
        toolUse("toolu_1", "Write", {
          file_path: "notes.md",
          content: '```action\n{"type": "decision"}\n```',
        }),
      ]),
    ]);
    assert.deepEqual(summary.detectedActions, []);
  });
});

Deno.test("emptySummary has nothing in it", () => {
  assert.deepEqual(emptySummary(4), {
    iteration: 4,
    assistantResponses: [],
    toolsUsed: [],
    toolCalls: [],
    detectedActions: [],
    errors: [],
    costUsd: 0,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 },
    turns: 0,
    durationMs: 0,
    stopReason: null,
  });
  assert.notEqual(emptySummary(1).errors, emptySummary(1).errors);
});
