import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { codexAcpBinary, codexPlace, git, ROOT } from "./_codex.ts";

/** An ACP client that records session updates and permission requests. */
class RecordingClient implements acp.Client {
  updates: acp.SessionNotification[] = [];
  permissions: acp.RequestPermissionRequest[] = [];

  requestPermission(
    params: acp.RequestPermissionRequest,
  ): Promise<acp.RequestPermissionResponse> {
    this.permissions.push(params);
    const allow = params.options.find((o) => o.kind.startsWith("allow")) ?? params.options[0];
    return Promise.resolve({ outcome: { outcome: "selected", optionId: allow.optionId } });
  }

  sessionUpdate(params: acp.SessionNotification): Promise<void> {
    this.updates.push(params);
    return Promise.resolve();
  }

  kinds(): string[] {
    return this.updates.map((u) => u.update.sessionUpdate);
  }
}

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
  const child = new Deno.Command(await codexAcpBinary(), {
    cwd: ROOT,
    env: place.env,
    clearEnv: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  const client = new RecordingClient();
  const connection = new acp.ClientSideConnection(
    () => client,
    acp.ndJsonStream(child.stdin, child.stdout),
  );
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
    assert.equal(result.stopReason, "end_turn", await Promise.race([stderr, "(running)"]));
  } finally {
    child.stdin.close().catch(() => {});
    child.kill("SIGTERM");
    await child.status;
    await stderr;
  }
  assert.equal(await git(place.repo, "log", "--format=%s"), "add acp");
  const kinds = client.kinds();
  assert.ok(kinds.includes("tool_call"), `a tool_call update: ${kinds}`);
  const text = client.updates
    .map((u) => u.update)
    .filter((u) => u.sessionUpdate === "agent_message_chunk")
    .map((u) => u.content.type === "text" ? u.content.text : "")
    .join("");
  assert.equal(text, "Committed acp.txt.");
  assert.deepEqual(server.requests.filter((r) => !r.side).map((r) => r.turnIndex), [0, 1]);
});
