/**
 * End to end for the completion handlers design's own custom handler (the
 * facilitator that counts decisions with `+=`): dropped into
 * `.agent/facilitator/completion/`, run by the CLI with the real Claude Code
 * binary against the scripted model and real git, in a run where every
 * iteration's work is committed by the commit rescue. The handler is asked
 * once per iteration, so its count equals the iterations.
 *
 * And for its "Handler Registration": a command that registers a handler in
 * code and calls the CLI's `main` runs an agent.json that names the
 * registered type as its completionType.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { RESCUE_PROMPT } from "../../agents/loop/runner.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  textTurn,
  toolTurn,
} from "../../agents/testing/mod.ts";
import { git, runCli, tempRepo } from "../_helpers.ts";

const FENCE = "`".repeat(3);

/** One iteration of the facilitator: a decision written down but not committed, then the rescue's commit. */
function facilitation(n: number): ScriptStep[] {
  return [
    toolTurn("Bash", {
      command: `printf 'Decision ${n}: ship on Tuesday ${n}\\n' >> decisions.md`,
    }),
    {
      text:
        `Decision ${n} is recorded.\n${FENCE}action\n{"type": "decision", "title": "Decision ${n}"}\n${FENCE}`,
      toolUses: [{
        name: COMPLETE_TASK_TOOL,
        input: {
          status: "success",
          original_request_summary: "Facilitate the release planning",
          summary: `Recorded decision ${n} in decisions.md`,
        },
      }],
    },
    textTurn("This round is done."),
    // The commit rescue resumes the session: it must ask to commit.
    (ctx) =>
      ctx.lastUserText.includes("COMMIT RESCUE")
        ? toolTurn("Bash", {
          command: `git add decisions.md && git commit -qm "docs: decision ${n}"`,
        })
        : textTurn("SCRIPT ERROR: expected the commit rescue prompt"),
    textTurn(`Committed decision ${n}.`),
  ];
}

Deno.test("the design's counting handler is asked once per iteration, after the commit rescue: its count equals the iterations", async () => {
  await using repo = await tempRepo();
  const agentDir = `${repo.path}/.agent/facilitator`;
  await Deno.mkdir(`${agentDir}/completion`, { recursive: true });
  await Deno.copyFile(
    new URL("../fixtures/seed_handlers/custom_handler.ts", import.meta.url),
    `${agentDir}/completion/custom-handler.ts`,
  );
  await Deno.writeTextFile(
    `${agentDir}/agent.json`,
    JSON.stringify({
      name: "facilitator",
      behavior: {
        completionType: "custom",
        completionConfig: { handlerPath: "completion/custom-handler.ts", maxIterations: 6 },
        allowedTools: ["Bash"],
      },
      parameters: {
        topic: { type: "string", required: true },
        targetDecisions: { type: "number", default: 3 },
      },
      probe: { enabled: false },
    }),
  );
  await git(repo.path, "add", ".agent");
  await git(repo.path, "commit", "-qm", "chore: the facilitator agent");
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => facilitation(sessionIndex + 1),
  });

  const run = await runCli(
    ["--agent", "facilitator", "--topic", "Release planning", "--json"],
    { cwd: repo.path, server },
  );

  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 3, "one decision per iteration, three wanted");
  assert.equal(result.completionReason, "Achieved 3 decisions");
  const records = (await Deno.readTextFile(result.logFile)).trim().split("\n")
    .map((line) => JSON.parse(line));
  const summaries = records.filter((record) => record.kind === "iteration_finished")
    .map((record) => record.summary);
  assert.deepEqual(
    records.filter((record) => record.kind === "iteration_finished").map((record) =>
      record.verdict
    ),
    ["continue", "continue", "complete"],
  );
  const commits = (await git(repo.path, "log", "--format=%H", "-3")).split("\n").reverse();
  for (const summary of summaries) {
    assert.deepEqual(
      summary.rescue,
      { files: ["decisions.md"], by: "agent", clean: true, commit: commits[summary.iteration - 1] },
      `iteration ${summary.iteration}: the rescue committed the work`,
    );
    assert.equal(summary.git.newCommits, 1, `iteration ${summary.iteration}: one commit`);
  }
  assert.equal(
    await git(repo.path, "log", "--format=%s", "-3"),
    "docs: decision 3\ndocs: decision 2\ndocs: decision 1",
  );
  const prompts = server.requests.filter((request) => !request.side && request.turnIndex === 0)
    .map((request) => JSON.stringify(request.body));
  assert.ok(prompts[0].includes("Release planning"), "the topic reaches the first prompt");
  assert.ok(prompts[1].includes("Current decisions: 1/3"), "the count after iteration 1");
  assert.ok(prompts[2].includes("Current decisions: 2/3"), "the count after iteration 2");
  assert.ok(RESCUE_PROMPT.startsWith("COMMIT RESCUE"));
});

/** An agent whose completionType is a type registered in code, with its own continuation template. */
async function registeredTypeAgent(repoPath: string): Promise<void> {
  const agentDir = `${repoPath}/.agent/seeded`;
  await Deno.mkdir(`${agentDir}/prompts`, { recursive: true });
  await Deno.writeTextFile(
    `${agentDir}/agent.json`,
    JSON.stringify({
      name: "seeded",
      behavior: {
        completionType: "seed-iterate",
        completionConfig: { maxIterations: 5 },
        allowedTools: ["Bash"],
      },
      probe: { enabled: false },
    }),
  );
  await Deno.writeTextFile(
    `${agentDir}/prompts/continuation_iterate.md`,
    "Seeded continuation: iteration {uv-iteration} of {uv-max_iterations}, {uv-remaining} left.\n",
  );
  await git(repoPath, "add", ".agent");
  await git(repoPath, "commit", "-qm", "chore: the seeded agent");
}

Deno.test("a handler registered in code is named as completionType in agent.json and decides the run", async () => {
  await using repo = await tempRepo();
  await registeredTypeAgent(repo.path);
  await using server = await ScriptedModelServer.start({
    scripts: ({ sessionIndex }) => [
      toolTurn("Bash", {
        command: `echo "note ${
          sessionIndex + 1
        }" >> notes.txt && git add notes.txt && git commit -qm "docs: note ${sessionIndex + 1}"`,
      }),
      textTurn(`Note ${sessionIndex + 1} written.`),
    ],
  });

  const run = await runCli(["--agent", "seeded", "--task", "Write notes", "--json"], {
    cwd: repo.path,
    server,
    entry: new URL("../fixtures/seed_handlers/registered_main.ts", import.meta.url).pathname,
  });

  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 2, "the registered handler's 2, not the definition's cap of 5");
  assert.equal(result.completionReason, "Completed 2/2 iterations");
  assert.equal(server.sessionIds().length, 2);
  assert.equal(await git(repo.path, "log", "--format=%s", "-2"), "docs: note 2\ndocs: note 1");
  const prompts = server.requests.filter((request) => !request.side && request.turnIndex === 0)
    .map((request) => JSON.stringify(request.body));
  assert.ok(prompts[0].includes("Write notes"), "the task reaches the first prompt");
  assert.ok(
    prompts[1].includes("Seeded continuation: iteration 2 of 2, 0 left."),
    "the second prompt comes from the agent's own template, through the resolver the factory got",
  );
});

Deno.test("the same agent.json without the registration is refused with the built-in types listed", async () => {
  await using repo = await tempRepo();
  await registeredTypeAgent(repo.path);
  await using server = await ScriptedModelServer.start({
    fallback: textTurn("This session must never start."),
  });

  const run = await runCli(["--agent", "seeded", "--task", "Write notes"], {
    cwd: repo.path,
    server,
  });

  assert.equal(run.code, 2, run.stderr);
  assert.equal(
    run.stderr.trim(),
    'finishline: Cannot load agent definition ".agent/seeded/agent.json": "behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"',
  );
  assert.equal(server.sessionIds().length, 0);
  assert.deepEqual(
    [...Deno.readDirSync(`${repo.path}/.agent/seeded`)].map((entry) => entry.name).sort(),
    ["agent.json", "prompts"],
    "nothing written",
  );
});
