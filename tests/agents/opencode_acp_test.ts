import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { git } from "./_codex.ts";
import { opencodeBinary, opencodeConfig, opencodeEnv } from "./_opencode.ts";

Deno.test("opencode acp: a prompt turn runs a scripted bash call that commits a file", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[
      toolTurn("bash", {
        command: "echo acp > acp.txt && git add acp.txt && git commit -qm 'add acp'",
        description: "Commit acp.txt",
      }),
      textTurn("Committed acp.txt."),
    ]],
    isSideRequest: (body) => !Array.isArray(body.tools),
  });
  const home = await Deno.makeTempDir({ prefix: "opencode-home-" });
  const repo = await Deno.makeTempDir({ prefix: "opencode-repo-" });
  await git(repo, "init", "-q");
  await Deno.writeTextFile(`${repo}/opencode.json`, opencodeConfig(server));
  const child = new Deno.Command(await opencodeBinary(), {
    args: ["acp"],
    cwd: repo,
    env: opencodeEnv(home),
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const updates: acp.SessionNotification[] = [];
  const client: acp.Client = {
    requestPermission: (params) =>
      Promise.resolve({
        outcome: { outcome: "selected", optionId: params.options[0].optionId },
      }),
    sessionUpdate: (params) => {
      updates.push(params);
      return Promise.resolve();
    },
  };
  const connection = new acp.ClientSideConnection(
    () => client,
    acp.ndJsonStream(child.stdin, child.stdout),
  );
  let result: acp.PromptResponse;
  try {
    await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await connection.newSession({ cwd: repo, mcpServers: [] });
    result = await connection.prompt({
      sessionId,
      prompt: [{ type: "text", text: "Commit acp.txt" }],
    });
    assert.equal(await git(repo, "log", "--format=%s"), "add acp");
  } finally {
    child.stdin.close().catch(() => {});
    child.kill("SIGTERM");
    await child.status;
    await Deno.remove(home, { recursive: true });
    await Deno.remove(repo, { recursive: true });
  }
  assert.equal(result.stopReason, "end_turn");
  assert.deepEqual(result.usage, { inputTokens: 100, outputTokens: 20, totalTokens: 120 });
  const kinds = updates.map((u) => u.update.sessionUpdate);
  assert.ok(kinds.includes("tool_call"), `a tool_call update: ${kinds}`);
  const text = updates.map((u) => u.update)
    .map((u) =>
      u.sessionUpdate === "agent_message_chunk" && u.content.type === "text" ? u.content.text : ""
    )
    .join("");
  assert.equal(text, "Committed acp.txt.");
});
