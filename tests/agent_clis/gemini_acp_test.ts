import assert from "node:assert/strict";
import * as acp from "@agentclientprotocol/sdk";
import { ScriptedGeminiServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { tempDir, tempRepo } from "../_helpers.ts";
import { AcpAgent } from "./_acp_client.ts";
import { git } from "./_codex.ts";
import { GEMINI_ACP, geminiEnv, writeGeminiHome } from "./_gemini.ts";

Deno.test("gemini --acp: a prompt turn runs a scripted run_shell_command that commits a file", async () => {
  await using server = await ScriptedGeminiServer.start({
    scripts: [[
      toolTurn("run_shell_command", {
        command: "echo acp > acp.txt && git add acp.txt && git commit -qm 'add acp'",
      }),
      textTurn("Committed acp.txt."),
    ]],
  });
  await using home = await tempDir("gemini-home-");
  await using repo = await tempRepo();
  await writeGeminiHome(home.path);
  const agent = startGemini(repo.path, geminiEnv(server, home.path));
  const { connection, permissions } = agent;
  let result: acp.PromptResponse;
  try {
    const init = await connection.initialize({
      protocolVersion: acp.PROTOCOL_VERSION,
      clientCapabilities: {},
    });
    assert.equal(init.agentInfo?.name, "gemini-cli");
    const { sessionId } = await connection.newSession({ cwd: repo.path, mcpServers: [] });
    result = await connection.prompt({
      sessionId,
      prompt: [{ type: "text", text: "Commit acp.txt" }],
    });
    assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "add acp");
  } finally {
    await agent.close();
  }
  assert.equal(result.stopReason, "end_turn");
  // Gemini CLI 0.61 reports tokens in _meta.quota, not in `usage`, and no cost.
  assert.equal(result.usage, undefined);
  assert.deepEqual((result._meta?.quota as { token_count: unknown }).token_count, {
    input_tokens: 200,
    output_tokens: 40,
  });
  assert.equal(permissions.length, 1, "it asks before running the command");
  assert.equal(permissions[0].toolCall.kind, "execute");
  assert.match(permissions[0].toolCall.title ?? "", /git commit -qm 'add acp'/);
  assert.equal(agent.text(), "Committed acp.txt.");
  const main = server.requests.filter((request) => !request.side);
  assert.deepEqual(main.map((r) => [r.sessionIndex, r.turnIndex]), [[0, 0], [0, 1]]);
  assert.match(main[1].path, /^\/v1beta\/models\/gemini-2\.5-pro:streamGenerateContent$/);
  assert.ok(
    !server.requests.some((request) => request.headers["x-gemini-api-privileged-user-id"]),
    "usage statistics are off",
  );
});

Deno.test("gemini --acp: with the model on auto, the router's JSON request is a side request", async () => {
  await using server = await ScriptedGeminiServer.start({
    scripts: [[textTurn("Hello.")]],
    // What the router parses: a score under its threshold picks the flash model.
    sideReply: textTurn('{"complexity_reasoning": "a greeting", "complexity_score": 5}'),
  });
  await using home = await tempDir("gemini-home-");
  await using repo = await tempRepo();
  await writeGeminiHome(home.path, "auto");
  const agent = startGemini(repo.path, geminiEnv(server, home.path));
  const { connection } = agent;
  try {
    await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
    const { sessionId } = await connection.newSession({ cwd: repo.path, mcpServers: [] });
    const result = await connection.prompt({ sessionId, prompt: [{ type: "text", text: "Hi" }] });
    assert.equal(result.stopReason, "end_turn");
  } finally {
    await agent.close();
  }
  assert.equal(agent.permissions.length, 0, "a greeting runs no tool");
  const [router, ...rest] = server.requests;
  assert.equal(router.side, true);
  assert.match(router.path, /:generateContent$/);
  const config = router.body.generationConfig as Record<string, unknown>;
  assert.equal(config.responseMimeType, "application/json");
  assert.ok(!router.body.tools, "the router offers no tools");
  assert.deepEqual(rest.map((r) => [r.side, r.sessionIndex, r.turnIndex]), [[false, 0, 0]]);
  assert.match(rest[0].path, /^\/v1beta\/models\/[\w.-]+:streamGenerateContent$/);
});

function startGemini(cwd: string, env: Record<string, string>): AcpAgent {
  const [program, ...args] = GEMINI_ACP;
  return new AcpAgent(program, { args, cwd, env });
}
