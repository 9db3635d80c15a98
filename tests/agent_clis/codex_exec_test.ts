import assert from "node:assert/strict";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { CODEX, codexPlace, git, ROOT } from "./_codex.ts";

Deno.test("the real codex exec runs a scripted shell call that commits a file", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[
      toolTurn("exec_command", {
        cmd: "echo hello > hello.txt && git add hello.txt && git commit -qm 'add hello'",
      }),
      textTurn("Committed hello.txt."),
    ]],
  });
  await using place = await codexPlace(server);
  const [command, ...prefix] = CODEX;
  const args = [
    ...prefix,
    "exec",
    "--dangerously-bypass-approvals-and-sandbox",
    "-C",
    place.repo,
    "Commit hello.txt",
  ];
  const out = await new Deno.Command(command, {
    args,
    cwd: ROOT,
    env: place.env,
    clearEnv: true,
    stdin: "null",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.equal(out.code, 0, stderr);
  assert.equal(stdout.trim(), "Committed hello.txt.", "exec prints the last message");
  assert.equal(await git(place.repo, "log", "--format=%s"), "add hello");
  assert.equal(await Deno.readTextFile(`${place.repo}/hello.txt`), "hello\n");

  const turns = server.requests.filter((r) => !r.side);
  assert.deepEqual(turns.map((r) => [r.path, r.turnIndex]), [
    ["/v1/responses", 0],
    ["/v1/responses", 1],
  ]);
  assert.equal(server.sessionIds().length, 1, "one Codex session, keyed by its session-id");
  const tools = (turns[0].body.tools as { name?: string }[]).map((t) => t.name);
  assert.ok(tools.includes("exec_command"), `Codex offers exec_command: ${tools}`);
  const input = turns[1].body.input as Record<string, unknown>[];
  const output = input.find((item) => item.type === "function_call_output");
  assert.match(String(output?.output), /Process exited with code 0/);
});
