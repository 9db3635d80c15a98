import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { AcpAgent } from "./_acp_client.ts";
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
  const agent = new AcpAgent(await opencodeBinary(), {
    args: ["acp"],
    cwd: repo,
    env: opencodeEnv(home),
    clearEnv: true,
  });
  const { connection } = agent;
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
    await agent.close();
    await Deno.remove(home, { recursive: true });
    await Deno.remove(repo, { recursive: true });
  }
  assert.equal(result.stopReason, "end_turn");
  assert.deepEqual(result.usage, { inputTokens: 100, outputTokens: 20, totalTokens: 120 });
  const kinds = agent.kinds();
  assert.ok(kinds.includes("tool_call"), `a tool_call update: ${kinds}`);
  assert.equal(agent.text(), "Committed acp.txt.");
});
