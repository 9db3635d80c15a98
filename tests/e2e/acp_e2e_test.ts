/**
 * The ACP backend's edges through the CLI: how `--backend` resolves and is
 * refused, `--model` through the agent's model option, and an agent command
 * that dies at once. What every backend must do
 * (iterate, the keyword, complete_task, checks, the rescue, the probe) is in
 * backends_e2e_test.ts.
 */

import assert from "node:assert/strict";
import { ScriptedModelServer, textTurn } from "../../agents/testing/mod.ts";
import { commitAgent, runCli, tempRepo } from "../_helpers.ts";
import { CODEX } from "./_backends.ts";

/**
 * Commits `.agent/NAME/agent.json`: one `iterate` iteration on `backend`, with
 * complete_task off (the backend's handling is under test here, not it).
 */
function iterateAgent(repo: string, name: string, backend: unknown): Promise<void> {
  return commitAgent(repo, {
    name,
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 1 },
      requireCompleteTask: false,
      backend,
    },
    probe: { enabled: false },
  });
}

Deno.test("acp: --backend codex --dry-run shows the resolved command; a bad name is one line, exit 2", async () => {
  await using repo = await tempRepo();
  const dry = await runCli(["--backend", "codex", "--dry-run", "--task", "x"], { cwd: repo.path });
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(dry.stdout, /^Backend: +codex \(ACP: npx -y @zed-industries\/codex-acp\)$/m);
  const bad = await runCli(["--backend", "nope", "--task", "x"], { cwd: repo.path });
  assert.equal(bad.code, 2);
  assert.equal(bad.stderr.trim().split("\n").length, 1);
  assert.match(bad.stderr, /--backend.*"nope"/);
});

Deno.test("acp: an agent command that exits at once fails the iteration, never hangs; a missing one is named, not retried", async () => {
  await using repo = await tempRepo();
  // The agent dies before any turn.
  await iterateAgent(repo.path, "gone", { acp: { command: ["false"] } });
  await using server = await ScriptedModelServer.start({ scripts: [[textTurn("unused")]] });
  const run = await runCli(["--agent", "gone", "--task", "x"], { cwd: repo.path, server });
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /the agent process ended/);
  assert.equal(server.requests.length, 0);
  await iterateAgent(repo.path, "gone", { acp: { command: ["finishline-no-such-agent", "acp"] } });
  const missing = await runCli(["--agent", "gone", "--task", "x"], { cwd: repo.path, server });
  assert.equal(missing.code, 1, missing.stderr);
  assert.match(
    missing.stderr,
    /Failed: .*cannot start "finishline-no-such-agent" \(not found\): install the agent/,
  );
  assert.doesNotMatch(missing.stderr, /retrying|Claude Code binary/, "said once, not retried");
});

Deno.test("acp: --model switches Codex through its model option; a model it does not offer is named", async () => {
  await using repo = await tempRepo();
  await using harness = await CODEX.start([[textTurn("Done.")]]);
  await iterateAgent(repo.path, "codex", harness.backend);
  const args = ["--agent", "codex", "--json", "--task", "x"];
  const run = await runCli([...args, "--model", "gpt-5.5"], { cwd: repo.path });
  assert.equal(run.code, 0, run.stderr);
  const first = harness.requests.find((request) => !request.side)!;
  assert.equal(first.body.model, "gpt-5.5", "the request runs on the chosen model");
  const report = await Deno.readTextFile(JSON.parse(run.stdout).report);
  assert.match(report, /^- Model: gpt-5\.5 \(ACP backend\)$/m);
  const requests = harness.requests.length;
  const bad = await runCli([...args, "--model", "gpt-0"], { cwd: repo.path });
  assert.notEqual(bad.code, 0);
  assert.match(
    bad.stderr,
    /does not offer the model "gpt-0" \(behavior\.model, --model\); it offers: .*gpt-5\.4/,
  );
  assert.doesNotMatch(bad.stderr, /retrying/, "a set-up fault is not retried");
  assert.equal(harness.requests.length, requests, "no model request with a model it lacks");
});

Deno.test("acp: an agent that ignores SIGTERM is killed at the end of the run, which does not wait on it", async () => {
  await using repo = await tempRepo();
  await using harness = await CODEX.start([[textTurn("Done.")]]);
  const { acp } = harness.backend as { acp: { command: string[] } };
  // An ignored signal stays ignored across exec: codex-acp itself ignores SIGTERM.
  const deaf = ["sh", "-c", `trap '' TERM; exec "$0" "$@"`, ...acp.command];
  await iterateAgent(repo.path, "deaf", { acp: { ...acp, command: deaf } });
  let guard: ReturnType<typeof setTimeout> | undefined;
  const run = await runCli(["--agent", "deaf", "--json", "--task", "x"], {
    cwd: repo.path,
    // A run that waits on the agent forever fails here instead of hanging the suite.
    onSpawn: (child) => void (guard = setTimeout(() => child.kill("SIGKILL"), 120_000)),
  });
  clearTimeout(guard);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(JSON.parse(run.stdout).status, "completed");
});
