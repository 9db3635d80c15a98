import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { AcpAgent } from "./_acp_client.ts";
import { codexAcpBinary, codexPlace, git, ROOT } from "./_codex.ts";

Deno.test("codex-acp over ACP: a prompt turn runs a scripted shell call that commits a file", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[
      toolTurn("exec_command", {
        cmd: "echo acp > acp.txt && git add acp.txt && git commit -qm 'add acp'",
      }),
      textTurn("Committed acp.txt."),
    ]],
  });
  await using place = await codexPlace(server);
  const agent = new AcpAgent(await codexAcpBinary(), {
    cwd: ROOT,
    env: place.env,
    clearEnv: true,
    keepStderr: true,
  });
  const { connection } = agent;
  try {
    const init = await connection.initialize({
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    assert.equal(init.protocolVersion, acp.PROTOCOL_VERSION);
    const session = await connection.newSession({ cwd: place.repo, mcpServers: [] });
    const { sessionId } = session;
    // codex-acp starts in "read-only" (a bubblewrap sandbox, and approval asked for
    // edits); "full-access" runs commands unsandboxed, as `codex exec
    // --dangerously-bypass-approvals-and-sandbox` does.
    const modes = session.modes?.availableModes.map((m) => m.id);
    assert.deepEqual(modes, ["read-only", "auto", "full-access"]);
    await connection.setSessionMode({ sessionId, modeId: "full-access" });
    const result = await connection.prompt({
      sessionId,
      prompt: [{ type: "text", text: "Commit acp.txt" }],
    });
    assert.equal(result.stopReason, "end_turn", await Promise.race([agent.stderr, "(running)"]));
  } finally {
    await agent.close();
  }
  assert.equal(await git(place.repo, "log", "--format=%s"), "add acp");
  const kinds = agent.kinds();
  assert.ok(kinds.includes("tool_call"), `a tool_call update: ${kinds}`);
  assert.equal(agent.text(), "Committed acp.txt.");
  assert.deepEqual(server.requests.filter((r) => !r.side).map((r) => r.turnIndex), [0, 1]);
});
