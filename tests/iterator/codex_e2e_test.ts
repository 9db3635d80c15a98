/**
 * End to end through the Agent Client Protocol with Codex: the CLI as a
 * subprocess, the real codex-acp native binary, the scripted Responses API
 * server, real git in a temp repository.
 */

import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { CONTINUATION_MESSAGE } from "../../agents/iterator/completion_guard.ts";
import { ScriptedResponsesServer, textTurn, toolTurn } from "../../agents/testing/mod.ts";
import { codexAcpBinary, codexPlace } from "../agents/_codex.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";

/**
 * Writes `.agent/codex/agent.json` with the real codex-acp binary as an explicit
 * ACP backend, CODEX_HOME pointing at the scripted server. HOME stays the
 * parent's: codex starts the complete_task MCP server (`deno run`) without
 * DENO_DIR, so Deno must find its cache under HOME.
 */
async function codexAgent(repo: string, codexHome: string, behavior: Record<string, unknown>) {
  await Deno.mkdir(`${repo}/.agent/codex`, { recursive: true });
  await Deno.writeTextFile(
    `${repo}/.agent/codex/agent.json`,
    JSON.stringify({
      name: "codex",
      behavior: {
        ...behavior,
        backend: {
          acp: {
            command: [await codexAcpBinary()],
            env: { CODEX_HOME: codexHome, SCRIPTED_API_KEY: "sk-test" },
            mode: "full-access",
          },
        },
      },
      probe: { enabled: false },
    }),
  );
  await git(repo, "add", ".agent");
  await git(repo, "commit", "-qm", "chore: agent");
}

Deno.test("codex: iterate runs 2 sessions through codex-acp, each committing with exec_command", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedResponsesServer.start({
    scripts: [1, 2].map((n) => [
      toolTurn("exec_command", {
        cmd: `echo "iteration ${n}" >> progress.txt && git add progress.txt && ` +
          `git commit -qm "docs: progress ${n}"`,
      }),
      textTurn(`Iteration ${n} done.`),
    ]),
  });
  await using place = await codexPlace(server);
  await codexAgent(repo.path, place.home, {
    completionType: "iterate",
    completionConfig: { maxIterations: 2 },
    // Sessions and commits through Codex are under test; complete_task has its own test.
    requireCompleteTask: false,
  });
  const run = await runCli(["--agent", "codex", "--json", "--task", "Write progress notes"], {
    cwd: repo.path,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(
    await Deno.readTextFile(`${repo.path}/progress.txt`),
    "iteration 1\niteration 2\n",
  );
  assert.equal(
    await git(repo.path, "log", "-2", "--format=%s"),
    "docs: progress 2\ndocs: progress 1",
  );
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 2);
  const finished = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line))
    .filter((record) => record.kind === "iteration_finished");
  assert.equal(finished.length, 2, "the run log holds both iterations");
  const db = new DatabaseSync(`${repo.path}/.agent/.finishline/state.db`, { readOnly: true });
  try {
    const rows = db.prepare("SELECT number FROM iterations ORDER BY number").all();
    assert.deepEqual(rows.map((row) => Number(row.number)), [1, 2], "the store holds both");
  } finally {
    db.close();
  }
  const main = server.requests.filter((request) => !request.side);
  // Sessions 0 and 1 are the iterations, each a new codex-acp process; the
  // run's summary, learnings and skills prompts follow as their own sessions.
  const turns = (index: number) =>
    main.filter((request) => request.sessionIndex === index).map((request) => request.turnIndex);
  assert.deepEqual([turns(0), turns(1)], [[0, 1], [0, 1]]);
  assert.ok(
    JSON.stringify(main[0].body).includes("Write progress notes"),
    "the task reaches the model",
  );
  const tools = main[0].body.tools as Array<{ name?: string; tools?: Array<{ name: string }> }>;
  const namespace = tools.find((tool) => tool.name === "mcp__finishline");
  assert.deepEqual(
    namespace?.tools?.map((tool) => tool.name),
    ["complete_task"],
    "codex offers complete_task from finishline's MCP server",
  );
});

Deno.test("codex: complete_task through finishline's MCP server is recorded, with requireCompleteTask", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedResponsesServer.start({
    scripts: [[
      toolTurn("exec_command", {
        cmd: "echo done > status.txt && git add status.txt && git commit -qm 'feat: status'",
      }),
      {
        toolUses: [{
          name: "complete_task",
          namespace: "mcp__finishline",
          input: {
            status: "success",
            original_request_summary: "Write the status file",
            summary: "Wrote and committed status.txt",
          },
        }],
      },
      textTurn("Finished."),
    ]],
  });
  await using place = await codexPlace(server);
  await codexAgent(repo.path, place.home, {
    completionType: "iterate",
    completionConfig: { maxIterations: 1 },
    requireCompleteTask: true,
  });
  const run = await runCli(["--agent", "codex", "--json", "--task", "Write the status file"], {
    cwd: repo.path,
  });
  assert.equal(run.code, 0, run.stderr);
  assert.equal(await git(repo.path, "log", "-1", "--format=%s"), "feat: status");
  const result = JSON.parse(run.stdout);
  const finished = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line))
    .find((record) => record.kind === "iteration_finished");
  assert.equal(finished.summary.completeTask.status, "success");
  const main = server.requests.filter((request) => request.sessionIndex === 0);
  assert.deepEqual(main.map((request) => request.turnIndex), [0, 1, 2]);
  const input = JSON.stringify(main[2].body.input);
  assert.ok(input.includes("Recorded: success"), "the tool result reaches the model");
  assert.ok(
    !main.some((request) =>
      JSON.stringify(request.body).includes(CONTINUATION_MESSAGE.slice(0, 40))
    ),
    "no continuation prompt",
  );
});
