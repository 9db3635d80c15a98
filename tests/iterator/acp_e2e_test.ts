/**
 * End to end through the Agent Client Protocol: the CLI as a subprocess, the
 * real claude-agent-acp adapter driving the real Claude Code, the scripted
 * model server, real git in temp repositories.
 */

import assert from "node:assert/strict";
import {
  ScriptedModelServer,
  type ScriptStep,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { CONTINUATION_MESSAGE } from "../../agents/iterator/completion_guard.ts";
import { PROBE_MARKER } from "../../agents/iterator/status_probe.ts";
import { COMPLETE_TASK_TOOL } from "../../agents/common/complete_task.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";

/**
 * claude-agent-acp as deno.json pins it, run by Deno. IS_SANDBOX: it passes
 * --allow-dangerously-skip-permissions, which Claude Code refuses as root
 * outside a sandbox (tests may run as root in a container).
 */
const CLAUDE_ACP = [Deno.execPath(), "run", "-A", "npm:@zed-industries/claude-agent-acp@0.23.1"];

async function acpAgent(
  repo: string,
  behavior: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): Promise<void> {
  await Deno.mkdir(`${repo}/.agent/acp`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.agent/acp/agent.json`,
    JSON.stringify({
      name: "acp",
      behavior: {
        backend: { acp: { command: CLAUDE_ACP, env: { IS_SANDBOX: "1" } } },
        ...behavior,
      },
      probe: { enabled: false },
      ...extra,
    }),
  );
  await git(repo, "add", ".agent");
  await git(repo, "commit", "-qm", "chore: agent");
}

Deno.test("acp: iterate runs N sessions through claude-agent-acp, each running its Bash call", async () => {
  await using repo = await tempRepo();
  await acpAgent(repo.path, {
    completionType: "iterate",
    completionConfig: { maxIterations: 2 },
    // Sessions and tool calls through ACP are under test; enforcement has its own test.
    requireCompleteTask: false,
  });
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => [
      toolTurn("Bash", {
        command:
          `echo "iteration ${sessionIndex + 1}" >> progress.txt && git add progress.txt && ` +
          `git commit -qm "docs: progress ${sessionIndex + 1}"`,
      }),
      textTurn(`Iteration ${sessionIndex + 1} done.`),
    ],
  });
  const run = await runCli(["--agent", "acp", "--json", "--task", "Write progress notes"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const progress = await Deno.readTextFile(`${repo.path}/progress.txt`);
  assert.equal(progress, "iteration 1\niteration 2\n");
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 2);
  assert.ok(result.costUsd > 0, "the cost the agent reports over ACP is counted");
  assert.match(run.stderr, /tools: Bash/);
  const firstPrompt = JSON.stringify(server.requests.find((request) => !request.side)?.body);
  assert.ok(firstPrompt.includes("Write progress notes"), "the task reaches the model");
});

function completeTask(summary: string) {
  return toolTurn(COMPLETE_TASK_TOOL, {
    status: "success",
    original_request_summary: "Ship the feature",
    summary,
  });
}

/** A step that checks what the agent was last told, then replies. */
function expecting(text: string, reply: ScriptStep): ScriptStep {
  return async (ctx) => {
    if (!ctx.lastUserText.includes(text)) {
      return textTurn(`SCRIPT ERROR: expected the last user message to include ${text}`);
    }
    return typeof reply === "function" ? await reply(ctx) : reply;
  };
}

function noScriptErrors(server: ScriptedModelServer): void {
  assert.ok(
    !server.requests.some((request) => JSON.stringify(request.body).includes("SCRIPT ERROR")),
    "the model was told what it expected at each step",
  );
}

const MANUAL = {
  completionType: "manual",
  completionConfig: { completionKeyword: "SHIPPED", maxIterations: 3 },
  allowedTools: ["Bash"],
};

Deno.test("acp: a turn that ends without complete_task gets the continuation prompt in the same session", async () => {
  await using repo = await tempRepo();
  await acpAgent(repo.path, MANUAL);
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn("All done. SHIPPED"),
      expecting(CONTINUATION_MESSAGE.slice(0, 40), completeTask("Shipped the feature")),
      expecting("Recorded: success", textTurn("Finished. SHIPPED")),
    ]],
  });
  const run = await runCli(["--agent", "acp", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  noScriptErrors(server);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 1);
  const main = server.requests.filter((request) => !request.side);
  assert.equal(new Set(main.map((request) => request.sessionId)).size, 1, "one session");
  const tools = (main[0].body.tools as Array<{ name: string }>).map((tool) => tool.name);
  assert.ok(tools.includes(COMPLETE_TASK_TOOL), "the model sees complete_task from the MCP server");
  const finished = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line))
    .find((record) => record.kind === "iteration_finished");
  assert.equal(finished.summary.completeTask.status, "success");
  assert.equal(finished.summary.continuations, 1);
});

Deno.test("acp: complete_task with a failing check gets the failure as its tool result, and the fix completes", async () => {
  await using repo = await tempRepo();
  await acpAgent(repo.path, MANUAL, {
    verify: { checks: [{ type: "command", command: "grep -q fixed status.txt", name: "status" }] },
  });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "echo broken > status.txt" }),
      completeTask("Wrote the status file"),
      expecting(
        "did NOT pass (status)",
        toolTurn("Bash", {
          command: "echo fixed > status.txt && git add status.txt && git commit -qm 'fix: status'",
        }),
      ),
      completeTask("Fixed the status file"),
      expecting("the checks passed", textTurn("Now it is right. SHIPPED")),
    ]],
  });
  const run = await runCli(["--agent", "acp", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  noScriptErrors(server);
  assert.equal(JSON.parse(run.stdout).iterations, 1);
});

Deno.test("acp: uncommitted work gets the commit rescue prompt in the same ACP session", async () => {
  await using repo = await tempRepo();
  await acpAgent(repo.path, {
    completionType: "iterate",
    completionConfig: { maxIterations: 1 },
    // The rescue is under test: without complete_task the agent is not sent back first.
    requireCompleteTask: false,
  });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "printf 'draft' > draft.txt" }),
      textTurn("Wrote a draft."),
      expecting(
        "COMMIT RESCUE",
        toolTurn("Bash", { command: "git add draft.txt && git commit -qm 'docs: draft'" }),
      ),
      textTurn("Committed the draft."),
    ]],
  });
  const run = await runCli(["--agent", "acp", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  noScriptErrors(server);
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "docs: draft");
  const main = server.requests.filter((request) => !request.side);
  assert.equal(new Set(main.map((request) => request.sessionId)).size, 1, "one session");
});

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

Deno.test("acp: the status probe is a follow-up prompt in the same ACP session", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/.agent/acp/completion`, { recursive: true });
  await Deno.copyFile(
    new URL("../fixtures/scenarios/commits_handler.ts", import.meta.url),
    `${repo.path}/.agent/acp/completion/commits.ts`,
  );
  await acpAgent(repo.path, {
    completionType: "custom",
    completionConfig: { handlerPath: "completion/commits.ts", maxIterations: 1 },
    // The probe is under test; complete_task enforcement has its own test.
    requireCompleteTask: false,
  }, { probe: { maxProbes: 1, probeIntervalSeconds: 0, probeTimeoutSeconds: 60 } });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      textTurn("Not sure where I am."),
      expecting(PROBE_MARKER, textTurn('{"status": "blocked", "message": "needs a token"}')),
    ]],
  });
  const run = await runCli(["--agent", "acp", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 5, run.stderr);
  noScriptErrors(server);
  assert.match(JSON.parse(run.stdout).completionReason, /needs a token/);
  const main = server.requests.filter((request) => !request.side);
  assert.equal(new Set(main.map((request) => request.sessionId)).size, 1, "one session");
});

Deno.test("acp: an agent command that exits at once fails the iteration, never hangs", async () => {
  await using repo = await tempRepo();
  await Deno.mkdir(`${repo.path}/.agent/gone`, { recursive: true });
  await Deno.writeTextFile(
    `${repo.path}/.agent/gone/agent.json`,
    JSON.stringify({
      name: "gone",
      behavior: {
        completionType: "iterate",
        completionConfig: { maxIterations: 1 },
        // The agent dies before any turn: no complete_task to wait for.
        requireCompleteTask: false,
        backend: { acp: { command: ["false"] } },
      },
      probe: { enabled: false },
    }),
  );
  await using server = await ScriptedModelServer.start({ scripts: [[textTurn("unused")]] });
  const run = await runCli(["--agent", "gone", "--task", "x"], { cwd: repo.path, server });
  assert.notEqual(run.code, 0);
  assert.match(run.stderr, /the agent process ended/);
  assert.equal(server.requests.length, 0);
});
