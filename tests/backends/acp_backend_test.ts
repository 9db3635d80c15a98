/**
 * The ACP backend's pieces without an agent: permission answers, session
 * updates turned into summary messages, backend presets, and the stdio
 * complete_task MCP server (spawned for real, calling back to a local port).
 */

import assert from "node:assert/strict";
import type * as acp from "@agentclientprotocol/sdk";
import {
  permissionAnswer,
  promptUsage,
  toolName,
  UpdateTranslator,
} from "../../agents/backends/_acp_updates.ts";
import { resolveBackend } from "../../agents/backends/presets.ts";
import { CALLBACK_URL_ENV, FINISH_TOOL_ENV } from "../../agents/backends/complete_task_mcp.ts";
import { FINISH_TOOL } from "../../agents/record/finish_tool.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { SummaryBuilder } from "../../agents/loop/summary_builder.ts";
import type { AgentMessage } from "../../agents/backends/port.ts";

const OPTIONS: acp.PermissionOption[] = [
  { optionId: "yes", name: "Allow", kind: "allow_once" },
  { optionId: "no", name: "Reject", kind: "reject_once" },
];

function ask(toolName: string, rawInput: unknown = {}, kind?: acp.ToolKind) {
  return {
    sessionId: "s",
    options: OPTIONS,
    toolCall: {
      toolCallId: "t",
      title: toolName,
      kind,
      rawInput,
      _meta: { claudeCode: { toolName } },
    },
  };
}

function chosen(response: acp.RequestPermissionResponse): string {
  return response.outcome.outcome === "selected" ? response.outcome.optionId : "cancelled";
}

Deno.test("permission requests are answered from allowed tools, permission mode and refusals", () => {
  const settings = {
    allowedTools: ["Bash", "Read"],
    disallowedTools: ["WebFetch"],
    permissionMode: "default" as const,
    refuseCommands: [{ pattern: "git push", reason: "no pushing" }],
  };
  assert.equal(chosen(permissionAnswer(ask("Bash", { command: "ls" }), settings)), "yes");
  assert.equal(chosen(permissionAnswer(ask("Bash", { command: "git push" }), settings)), "no");
  assert.equal(chosen(permissionAnswer(ask("Write", {}, "edit"), settings)), "no");
  assert.equal(
    chosen(
      permissionAnswer(ask("Write", {}, "edit"), { ...settings, permissionMode: "acceptEdits" }),
    ),
    "yes",
  );
  assert.equal(
    chosen(permissionAnswer(ask("WebFetch"), { ...settings, permissionMode: "bypassPermissions" })),
    "no",
    "a disallowed tool stays disallowed",
  );
  assert.equal(chosen(permissionAnswer(ask("mcp__finishline__complete_task"), settings)), "yes");
});

Deno.test("other agents' tools are matched by their ACP kind: execute is Bash, edit is Edit and Write", () => {
  const settings = {
    allowedTools: ["Bash", "Read"],
    disallowedTools: [] as string[],
    permissionMode: "default" as const,
    refuseCommands: [{ pattern: "git push", reason: "no pushing" }],
  };
  function other(title: string, rawInput: unknown, kind: acp.ToolKind) {
    return {
      sessionId: "s",
      options: OPTIONS,
      toolCall: { toolCallId: "t", title, kind, rawInput },
    };
  }
  // opencode names its shell tool `bash`; Codex titles a call with its command.
  assert.equal(
    chosen(permissionAnswer(other("bash", { command: "ls" }, "execute"), settings)),
    "yes",
  );
  assert.equal(
    chosen(permissionAnswer(other("git push", { command: ["git", "push"] }, "execute"), settings)),
    "no",
    "a refused command given as an argument list is still refused",
  );
  assert.equal(chosen(permissionAnswer(other("cat a", { cmd: "cat a" }, "read"), settings)), "yes");
  assert.equal(chosen(permissionAnswer(other("write", {}, "edit"), settings)), "no");
  assert.equal(chosen(permissionAnswer(other("rm a", {}, "delete"), settings)), "no");
  assert.equal(
    chosen(permissionAnswer(other("rm a", {}, "delete"), { ...settings, allowedTools: ["Write"] })),
    "yes",
  );
  assert.equal(
    chosen(
      permissionAnswer(other("bash", { command: "ls" }, "execute"), {
        ...settings,
        disallowedTools: ["Bash"],
      }),
    ),
    "no",
    "disallowing Bash stops every agent's shell",
  );
  assert.equal(chosen(permissionAnswer(other("webfetch", {}, "other"), settings)), "no");
});

Deno.test("session updates become one text block per run of chunks, tool calls with their input, and plan entries", () => {
  const messages: AgentMessage[] = [];
  const translator = new UpdateTranslator("s1", (message) => messages.push(message));
  translator.add({
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: "All do" },
  });
  translator.add({
    sessionUpdate: "agent_message_chunk",
    content: { type: "text", text: "ne. SHIP" },
  });
  translator.add({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "PED" } });
  translator.add({
    sessionUpdate: "tool_call",
    toolCallId: "c1",
    title: "complete_task",
    rawInput: {},
  });
  translator.add({
    sessionUpdate: "tool_call_update",
    toolCallId: "c1",
    rawInput: { status: "success", original_request_summary: "x", summary: "y" },
  });
  translator.add({
    sessionUpdate: "plan",
    entries: [{ content: "step one", priority: "high", status: "pending" }],
  });
  translator.add({ sessionUpdate: "tool_call", toolCallId: "c2", title: "Terminal", rawInput: {} });
  translator.add({
    sessionUpdate: "tool_call_update",
    toolCallId: "c2",
    status: "failed",
    rawOutput: "boom",
  });
  translator.add({
    sessionUpdate: "usage_update",
    size: 10,
    used: 1,
    cost: { amount: 0.25, currency: "USD" },
  });
  translator.flush();
  const builder = new SummaryBuilder(1);
  for (const message of messages) builder.add(message);
  const summary = builder.current;
  assert.deepEqual(summary.assistantResponses, ["All done. SHIPPED"]);
  assert.deepEqual(summary.toolsUsed, [COMPLETE_TASK_TOOL, "plan", "Terminal"]);
  assert.equal(summary.completeTask?.status, "success");
  assert.deepEqual(summary.errors, ["Terminal: boom"]);
  assert.equal(translator.costUsd, 0.25);
});

Deno.test("backend presets resolve to their ACP commands; unknown names are refused", () => {
  assert.equal(resolveBackend("claude"), "claude");
  assert.deepEqual(resolveBackend("opencode"), {
    name: "opencode",
    acp: { command: ["opencode", "acp"] },
  });
  assert.deepEqual(resolveBackend({ acp: { command: ["x"] } }), {
    name: "acp",
    acp: { command: ["x"] },
  });
  assert.deepEqual(resolveBackend("gemini"), {
    name: "gemini",
    acp: {
      command: ["gemini", "--acp"],
      env: { GEMINI_CLI_NO_RELAUNCH: "true", GEMINI_CLI_TRUST_WORKSPACE: "true" },
    },
  });
  assert.throws(() => resolveBackend("nope"), /unknown backend "nope"/);
});

Deno.test("the stdio complete_task MCP server lists the tool and passes calls to the runner's port", async () => {
  const calls: unknown[] = [];
  await using callback = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      calls.push(await request.json());
      return new Response("Recorded: success; the checks passed");
    },
  );
  const script = new URL("../../agents/backends/complete_task_mcp.ts", import.meta.url);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-net", "--allow-env", "--allow-read", script.href],
    env: { [CALLBACK_URL_ENV]: `http://127.0.0.1:${callback.addr.port}/` },
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const requests = [
    { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18" } },
    { jsonrpc: "2.0", method: "notifications/initialized" },
    { jsonrpc: "2.0", id: 2, method: "tools/list" },
    {
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "complete_task", arguments: { status: "success", summary: "done" } },
    },
  ];
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(requests.map((r) => JSON.stringify(r)).join("\n") + "\n"),
  );
  await writer.close();
  const output = new TextDecoder().decode((await child.output()).stdout);
  const replies = output.trim().split("\n").map((line) => JSON.parse(line));
  assert.deepEqual(replies.map((reply) => reply.id), [1, 2, 3], "no reply to a notification");
  assert.equal(replies[0].result.serverInfo.name, "finishline");
  const tool = replies[1].result.tools[0];
  assert.equal(tool.name, "complete_task");
  assert.deepEqual(tool.inputSchema.required, ["status", "original_request_summary", "summary"]);
  assert.equal(replies[2].result.content[0].text, "Recorded: success; the checks passed");
  assert.deepEqual(calls, [{
    tool: "complete_task",
    arguments: { status: "success", summary: "done" },
  }]);
});

Deno.test("with FINISHLINE_FINISH_TOOL=1 the stdio MCP server lists the finish tool too and names the tool of each call", async () => {
  const calls: unknown[] = [];
  await using callback = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (request) => {
      calls.push(await request.json());
      return new Response('{"status":"completed"}');
    },
  );
  const script = new URL("../../agents/backends/complete_task_mcp.ts", import.meta.url);
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", "--allow-net", "--allow-env", "--allow-read", script.href],
    env: {
      [CALLBACK_URL_ENV]: `http://127.0.0.1:${callback.addr.port}/`,
      [FINISH_TOOL_ENV]: "1",
    },
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const requests = [
    { jsonrpc: "2.0", id: 1, method: "tools/list" },
    {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "finish", arguments: { success: true, summary: "done" } },
    },
  ];
  const writer = child.stdin.getWriter();
  await writer.write(
    new TextEncoder().encode(requests.map((r) => JSON.stringify(r)).join("\n") + "\n"),
  );
  await writer.close();
  const output = new TextDecoder().decode((await child.output()).stdout);
  const [list, call] = output.trim().split("\n").map((line) => JSON.parse(line));
  const tools = list.result.tools as Array<{ name: string; inputSchema: { required: string[] } }>;
  assert.deepEqual(tools.map((tool) => tool.name), ["complete_task", "finish"]);
  assert.deepEqual(tools[1].inputSchema.required, ["success", "summary"]);
  assert.equal(call.result.content[0].text, '{"status":"completed"}');
  assert.deepEqual(calls, [{ tool: "finish", arguments: { success: true, summary: "done" } }]);
});

Deno.test("other agents' tool calls are named by their kind; a command that mentions complete_task is not complete_task", () => {
  assert.equal(toolName({ title: "git status", kind: "execute" }), "Bash");
  assert.equal(toolName({ title: "Read a.txt", kind: "read" }), "Read");
  assert.equal(toolName({ title: "write", kind: "edit" }), "Edit");
  assert.equal(toolName({ title: "finishline_complete_task", kind: "other" }), COMPLETE_TASK_TOOL);
  assert.equal(toolName({ title: "Tool: finishline/complete_task" }), COMPLETE_TASK_TOOL);
  assert.equal(toolName({ title: "grep -r complete_task .", kind: "execute" }), "Bash");
  assert.equal(toolName({ title: "todowrite", kind: "other" }), "todowrite");
  assert.equal(toolName({ title: "finishline_finish", kind: "other" }), FINISH_TOOL);
  assert.equal(toolName({ title: "Tool: finishline/finish" }), FINISH_TOOL);
  assert.equal(toolName({ title: "finish the report", kind: "other" }), "finish the report");
  assert.equal(
    toolName({ title: "Bash", kind: "execute", _meta: { claudeCode: { toolName: "Bash" } } }),
    "Bash",
  );
  const settings = {
    allowedTools: [] as string[],
    disallowedTools: [] as string[],
    permissionMode: "default" as const,
  };
  const request = {
    sessionId: "s",
    options: OPTIONS,
    toolCall: {
      toolCallId: "t",
      title: "echo complete_task",
      kind: "execute" as const,
      rawInput: { command: "echo complete_task" },
    },
  };
  assert.equal(chosen(permissionAnswer(request, settings)), "no", "not allowed as complete_task");
});

Deno.test("Gemini CLI's calls: the first update of a call it asked permission for is its end, the title is the command, tokens are in _meta", () => {
  const settings = {
    allowedTools: ["Bash"],
    disallowedTools: [] as string[],
    permissionMode: "default" as const,
    refuseCommands: [{ pattern: "git push", reason: "no pushing" }],
  };
  // As Gemini CLI 0.61 asks: no rawInput, the command as the title.
  const gemini = (title: string) => ({
    sessionId: "s",
    options: [
      { optionId: "proceed_always", name: "Allow for this session", kind: "allow_always" as const },
      { optionId: "proceed_once", name: "Allow", kind: "allow_once" as const },
      { optionId: "cancel", name: "Reject", kind: "reject_once" as const },
    ],
    toolCall: { toolCallId: "t", title, kind: "execute" as const, status: "pending" as const },
  });
  assert.equal(chosen(permissionAnswer(gemini("git status"), settings)), "proceed_once");
  assert.equal(chosen(permissionAnswer(gemini("git push origin main"), settings)), "cancel");
  const messages: AgentMessage[] = [];
  const translator = new UpdateTranslator("s1", (message) => messages.push(message));
  translator.add({
    sessionUpdate: "tool_call_update",
    toolCallId: "run_shell_command__1",
    status: "completed",
    title: "git status",
    kind: "execute",
    content: [],
  });
  const builder = new SummaryBuilder(1);
  for (const message of messages) builder.add(message);
  assert.deepEqual(builder.current.toolCalls, [{ name: "Bash", input: { command: "git status" } }]);
  assert.deepEqual(
    promptUsage({
      stopReason: "end_turn",
      _meta: { quota: { token_count: { input_tokens: 200, output_tokens: 40 } } },
    }),
    { input: 200, output: 40, cacheRead: 0 },
  );
  assert.deepEqual(
    promptUsage({
      stopReason: "end_turn",
      usage: { inputTokens: 1, outputTokens: 2, totalTokens: 3 },
    }),
    { input: 1, output: 2, cacheRead: 0 },
  );
});
