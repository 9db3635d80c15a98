import { textTurn } from "../agents/testing/mod.ts";
import { git, runCli, tempRepo, tempDir } from "../tests/_helpers.ts";
import { CODEX, CLAUDE_ACP_BACKEND } from "../tests/iterator/_backends.ts";
import { codexConfig } from "../tests/agents/_codex.ts";
Deno.test("preset codex via npx", async () => {
  await using repo = await tempRepo();
  await using harness = await CODEX.start([[CODEX.shell("echo x > x.txt && git add x.txt && git commit -qm 'feat: x'"), textTurn("Done x.")]]);
  const home = (harness.backend as { acp: { env: Record<string, string> } }).acp.env.CODEX_HOME;
  const t0 = performance.now();
  const run = await runCli(["--backend", "codex", "--iterate-max", "1", "--task", "x", "--json"], { cwd: repo.path, env: { CODEX_HOME: home, SCRIPTED_API_KEY: "sk-test", HOME: Deno.env.get("HOME")! } });
  console.log("ms", performance.now() - t0, run.code, run.stderr.slice(-1500), await git(repo.path, "log", "--format=%s"));
});
Deno.test("preset claude-acp via npx", async () => {
  await using repo = await tempRepo();
  await using harness = await CLAUDE_ACP_BACKEND.start([[CLAUDE_ACP_BACKEND.shell("echo y > y.txt && git add y.txt && git commit -qm 'feat: y'"), textTurn("Done y.")]]);
  const t0 = performance.now();
  const run = await runCli(["--backend", "claude-acp", "--iterate-max", "1", "--task", "y", "--json"], { cwd: repo.path, server: harness.server, home: harness.home, env: { IS_SANDBOX: "1" } });
  console.log("ms", performance.now() - t0, run.code, run.stderr.slice(-1500), await git(repo.path, "log", "--format=%s"));
});
