import assert from "node:assert/strict";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { git } from "./_codex.ts";
import { opencodeBinary, opencodeConfig, opencodeEnv } from "./_opencode.ts";

Deno.test("the real opencode run runs a scripted bash call that commits a file", async () => {
  await using server = await ScriptedResponsesServer.start({
    scripts: [[
      toolTurn("bash", {
        command: "echo oc > oc.txt && git add oc.txt && git commit -qm 'add oc'",
        description: "Commit oc.txt",
      }),
      textTurn("Committed oc.txt."),
    ]],
    // opencode asks for a session title with a request that offers no tools.
    isSideRequest: (body) => !Array.isArray(body.tools),
  });
  const home = await Deno.makeTempDir({ prefix: "opencode-home-" });
  const repo = await Deno.makeTempDir({ prefix: "opencode-repo-" });
  try {
    await git(repo, "init", "-q");
    await Deno.writeTextFile(`${repo}/opencode.json`, opencodeConfig(server));
    const out = await new Deno.Command(await opencodeBinary(), {
      args: ["run", "Commit oc.txt"],
      cwd: repo,
      env: opencodeEnv(home),
      clearEnv: true,
      stdin: "null",
    }).output();
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.code, 0, stderr);
    assert.match(new TextDecoder().decode(out.stdout), /Committed oc\.txt\./);
    assert.equal(await git(repo, "log", "--format=%s"), "add oc");
  } finally {
    await Deno.remove(home, { recursive: true });
    await Deno.remove(repo, { recursive: true });
  }
  const main = server.requests.filter((r) => !r.side);
  assert.deepEqual(main.map((r) => [r.path, r.turnIndex]), [
    ["/v1/chat/completions", 0],
    ["/v1/chat/completions", 1],
  ]);
  const tools = (main[0].body.tools as { function: { name: string } }[]).map((t) =>
    t.function.name
  );
  assert.ok(tools.includes("bash"), `opencode offers bash: ${tools}`);
  assert.equal(main[0].body.stream, true, "opencode streams");
});
