/**
 * End to end for the finish tool (seed 000): the agent calls
 * `mcp__finishline__finish`, the finish workflow runs at once (and not again
 * at the run's end) and the agent reads the seed's response; a failing check
 * answers `failed` with what to fix and the run goes on; `success: false`
 * ends the run blocked; next actions are never empty and gather every
 * iteration's next steps. The CLI as a subprocess, the real Claude Code
 * binary against the scripted model, real git and real SQLite.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { FINISH_TOOL } from "../../agents/record/finish_tool.ts";
import { STEP_MARKERS } from "../../agents/finish/steps.ts";
import { FINISH_MARKER } from "../../agents/finish/question.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import {
  ScriptedModelServer,
  type ScriptStep,
  textTurn,
  toolTurn,
  type TurnContext,
} from "../../agents/testing/mod.ts";
import { commitAgent, runCli, tempRepo } from "../_helpers.ts";
import { CLAUDE_ACP_BACKEND } from "./_backends.ts";

const STORE = ".agent/.finishline/state.db";

/** The seed's FinishResponse keys, in its order. */
const RESPONSE_KEYS = [
  "session_id",
  "status",
  "summary_updated",
  "skills_updated",
  "history_saved",
  "next_actions",
];

/** A finish model that answers no JSON: every model step falls back to what the run recorded. */
const NO_JSON = () => textTurn("No JSON today.");

/** The finish questions the server received, each with the steps it asked about. */
function finishQuestions(server: ScriptedModelServer): string[][] {
  return server.requests.flatMap((request) => {
    const text = JSON.stringify((request.body.messages as unknown[])?.at(-1) ?? "");
    if (!request.side || !text.includes(FINISH_MARKER)) return [];
    return [
      Object.entries(STEP_MARKERS).filter(([, marker]) => text.includes(marker))
        .map(([step]) => step),
    ];
  });
}

/** A step that keeps the tool result the agent read (the last user message), then replies. */
function reading(into: string[], reply: ScriptStep): ScriptStep {
  return async (ctx: TurnContext) => {
    into.push(ctx.lastUserText);
    return typeof reply === "function" ? await reply(ctx) : reply;
  };
}

/** The run's log events of one kind. */
async function events(logFile: string, kind: string): Promise<Array<Record<string, unknown>>> {
  return (await Deno.readTextFile(logFile)).split("\n").filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((event) => event.kind === kind);
}

async function writeAgent(root: string, extra: Record<string, unknown>): Promise<void> {
  await Deno.mkdir(`${root}/.agent/fixer`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/.agent/fixer/agent.json`,
    JSON.stringify({
      name: "fixer",
      behavior: {
        completionType: "iterate",
        completionConfig: { maxIterations: 1 },
        allowedTools: ["Bash"],
      },
      ...extra,
    }),
  );
}

function withStore<T>(repo: string, read: (store: SqliteStore) => T): T {
  const store = SqliteStore.open(`${repo}/${STORE}`);
  try {
    return read(store);
  } finally {
    store.close();
  }
}

Deno.test("the agent calls finish: the workflow runs once, and the agent reads the seed's response with follow-ups, resume and a new session", async () => {
  await using repo = await tempRepo();
  const answers: string[] = [];
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", {
        command: "printf 'a\\n' > tz.txt && git add tz.txt && git commit -qm 'fix: pin TZ'",
      }),
      toolTurn(FINISH_TOOL, {
        success: true,
        summary: "Pinned TZ",
        skills_used: ["git"],
        files_modified: ["tz.txt"],
        next_steps: "Watch CI",
      }),
      reading(answers, textTurn("Done.")),
    ]],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Fix the flaky login test", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");

  const main = server.requests.filter((request) => !request.side);
  const tools = (main[0].body.tools as Array<{ name: string }>).map((tool) => tool.name);
  assert.ok(tools.includes(FINISH_TOOL) && tools.includes(COMPLETE_TASK_TOOL), tools.join(", "));

  assert.equal(answers.length, 1);
  const answer = JSON.parse(answers[0]);
  assert.deepEqual(Object.keys(answer), RESPONSE_KEYS);
  const [sessionId] = server.sessionIds();
  const cwd = withStore(repo.path, (store) => store.getRun(result.runId)!.cwd);
  assert.deepEqual(answer, {
    session_id: sessionId,
    status: "completed",
    summary_updated: true,
    skills_updated: true,
    history_saved: true,
    next_actions: [
      "Follow up: Watch CI",
      `Resume this session later: claude --resume ${sessionId}`,
      `Start new session in ${cwd}`,
    ],
  });

  // The four model steps were asked once: during the call, not again at the run's end.
  // One question for the four steps.
  assert.deepEqual(finishQuestions(server), [["summary", "learnings", "skills", "next_actions"]]);
  const steps = (await events(result.logFile, "finish_step")).map((event) => event.step);
  assert.deepEqual(steps, ["summary", "learnings", "skills", "next_actions", "persist", "cleanup"]);
  assert.deepEqual(await events(result.logFile, "finish_redo"), []);
  withStore(repo.path, (store) => {
    const finish = store.getFinish(result.runId);
    assert.equal(finish.steps.length, 6);
    assert.deepEqual(finish.nextActions, answer.next_actions);
    assert.equal(finish.summary?.outcome, "completed");
    assert.equal(store.getRun(result.runId)?.status, "completed");
    assert.deepEqual(store.skills(result.runId).map((skill) => skill.name), ["git"]);
    // The finish call is the iteration's claim, as a complete_task call would be.
    const [iteration] = store.iterations(result.runId);
    assert.equal(iteration.summary.completeTask?.status, "success");
    assert.equal(iteration.summary.completeTask?.next_steps, "Watch CI");
  });
});

Deno.test("a finish call whose check fails answers failed with what to fix; the run goes on, and the second call completes", async () => {
  await using repo = await tempRepo();
  await writeAgent(repo.path, {
    verify: { checks: [{ type: "command", command: "grep -q fixed status.txt", name: "status" }] },
  });
  const answers: string[] = [];
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn("Bash", { command: "echo broken > status.txt" }),
      toolTurn(FINISH_TOOL, { success: true, summary: "Wrote the status file" }),
      reading(
        answers,
        toolTurn("Bash", {
          command: "echo fixed > status.txt && git add status.txt && git commit -qm 'fix: status'",
        }),
      ),
      toolTurn(FINISH_TOOL, { success: true, summary: "Fixed the status file" }),
      reading(answers, textTurn("Now it is right.")),
    ]],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--agent", "fixer", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(answers.length, 2);
  const [failed, passed] = answers.map((text) => JSON.parse(text));
  assert.deepEqual(Object.keys(failed), RESPONSE_KEYS);
  assert.equal(failed.status, "failed");
  assert.equal(failed.summary_updated, false);
  assert.equal(failed.history_saved, false);
  assert.match(failed.next_actions[0], /^Fix: .*status/);
  assert.ok(failed.next_actions.includes("Call finish again once the checks pass"));
  assert.match(failed.next_actions.at(-2), /^Resume this session later: claude --resume \S+$/);
  assert.match(failed.next_actions.at(-1), /^Start new session in \//);
  assert.equal(passed.status, "completed");
  assert.equal(passed.history_saved, true);
  // The workflow ran for the passing call only.
  // One question for the four steps.
  assert.deepEqual(finishQuestions(server), [["summary", "learnings", "skills", "next_actions"]]);
  withStore(repo.path, (store) => {
    const [iteration] = store.iterations(result.runId);
    assert.equal(iteration.summary.verification?.passed, true);
    assert.equal(iteration.summary.fixedChecks?.length, 1, "the first call's failure was fixed");
  });
});

/** A manual agent whose keyword is SHIPPED, with a check that passes once tz.txt is committed. */
async function manualAgent(root: string): Promise<void> {
  await writeAgent(root, {
    behavior: {
      completionType: "manual",
      completionConfig: { completionKeyword: "SHIPPED" },
      allowedTools: ["Bash"],
    },
    verify: { checks: [{ type: "command", command: "git cat-file -e HEAD:tz.txt", name: "tz" }] },
  });
}

const PIN_TZ = toolTurn("Bash", {
  command: "printf 'a\\n' > tz.txt && git add tz.txt && git commit -qm 'fix: pin TZ'",
});

Deno.test("a verified finish the handler does not accept yet answers continuing, with what the run waits for; the agent meets it and the run completes", async () => {
  await using repo = await tempRepo();
  await manualAgent(repo.path);
  const answers: string[] = [];
  await using server = await ScriptedModelServer.start({
    scripts: [[
      PIN_TZ,
      toolTurn(FINISH_TOOL, { success: true, summary: "Pinned TZ", next_steps: "Watch CI" }),
      // The keyword was never said: the manual handler is not satisfied, whatever the checks say.
      reading(answers, textTurn("Pinned TZ. SHIPPED")),
    ]],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--agent", "fixer", "--iterate-max", "3", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(result.iterations, 1, "the keyword said after the answer completes this iteration");
  const answer = JSON.parse(answers[0]);
  assert.deepEqual(Object.keys(answer), RESPONSE_KEYS);
  assert.equal(answer.status, "continuing");
  assert.deepEqual(answer.next_actions.slice(0, 2), [
    'The run continues: say "SHIPPED" when done',
    "Follow up: Watch CI",
  ]);
  assert.deepEqual([answer.summary_updated, answer.skills_updated, answer.history_saved], [
    false,
    false,
    false,
  ]);
  // No step ran at the call: the run's end ran the workflow once, for its real outcome.
  assert.deepEqual(finishQuestions(server), [["summary", "learnings", "skills", "next_actions"]]);
  assert.deepEqual(await events(result.logFile, "finish_redo"), []);
  withStore(repo.path, (store) => {
    assert.equal(store.getFinish(result.runId).summary?.outcome, "completed");
  });
});

Deno.test("a verified finish in the last iteration without the keyword answers failed: the run ends at its cap, not completed (exit 3)", async () => {
  await using repo = await tempRepo();
  await manualAgent(repo.path);
  const answers: string[] = [];
  await using server = await ScriptedModelServer.start({
    scripts: [
      [PIN_TZ, toolTurn(FINISH_TOOL, { success: true, summary: "Pinned TZ" }), textTurn("Done.")],
      [
        toolTurn(FINISH_TOOL, { success: true, summary: "Pinned TZ" }),
        reading(answers, textTurn("Done.")),
      ],
    ],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--agent", "fixer", "--iterate-max", "2", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 3, run.stderr);
  assert.equal(JSON.parse(run.stdout).status, "max_iterations");
  const answer = JSON.parse(answers[0]);
  assert.equal(answer.status, "failed");
  assert.equal(
    answer.next_actions[0],
    'This is the last iteration (2 of 2): the run ends after this session, not completed, unless: say "SHIPPED" when done',
  );
});

Deno.test("finish with success false ends the run blocked, like a blocked complete_task, and answers failed", async () => {
  await using repo = await tempRepo();
  await writeAgent(repo.path, {
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 3 },
      allowedTools: ["Bash"],
    },
  });
  const answers: string[] = [];
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn(FINISH_TOOL, { success: false, summary: "The API key for staging is missing" }),
      reading(answers, textTurn("Blocked.")),
    ]],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--agent", "fixer", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 5, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "blocked");
  assert.equal(result.iterations, 1);
  const answer = JSON.parse(answers[0]);
  assert.equal(answer.status, "failed");
  assert.equal(answer.history_saved, true);
  assert.ok(answer.next_actions.length >= 2);
  // One question for the four steps.
  assert.deepEqual(finishQuestions(server), [["summary", "learnings", "skills", "next_actions"]]);
  withStore(repo.path, (store) => {
    assert.equal(store.getFinish(result.runId).summary?.outcome, "blocked");
    assert.equal(store.getRun(result.runId)?.status, "blocked");
  });
});

Deno.test("a run that never calls finish still gets next actions: resume and a new session; finish.tool off hides the tool", async () => {
  await using repo = await tempRepo();
  await writeAgent(repo.path, { finish: { tool: false } });
  await using server = await ScriptedModelServer.start({
    scripts: [[
      toolTurn(COMPLETE_TASK_TOOL, {
        status: "success",
        original_request_summary: "Look around",
        summary: "Looked around",
      }),
      textTurn("Done."),
    ]],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--agent", "fixer", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  const main = server.requests.filter((request) => !request.side);
  const tools = (main[0].body.tools as Array<{ name: string }>).map((tool) => tool.name);
  assert.ok(!tools.includes(FINISH_TOOL) && tools.includes(COMPLETE_TASK_TOOL), tools.join(", "));
  const [sessionId] = server.sessionIds();
  const nextActions = withStore(repo.path, (store) => {
    const run = store.getRun(result.runId)!;
    const actions = store.getFinish(result.runId).nextActions;
    assert.deepEqual(actions, [
      `Resume this session later: claude --resume ${sessionId}`,
      `Start new session in ${run.cwd}`,
    ]);
    return actions;
  });
  const report = await Deno.readTextFile(result.report);
  assert.ok(report.endsWith(`## Next actions\n\n- ${nextActions.join("\n- ")}\n`), report);
});

Deno.test("next steps of every iteration become follow-ups, not only the last one's", async () => {
  await using repo = await tempRepo();
  const partial = (nextSteps: string) =>
    toolTurn(COMPLETE_TASK_TOOL, {
      status: "partial",
      original_request_summary: "Fix the flaky login test",
      summary: "Some of it",
      remaining_work: "The rest",
      next_steps: nextSteps,
    });
  await using server = await ScriptedModelServer.start({
    scripts: [[partial("Watch CI"), textTurn("Part one.")], [
      partial("Tell the team"),
      textTurn("Part two."),
    ]],
    sideReply: NO_JSON,
  });
  const run = await runCli(["--iterate-max", "2", "--task", "Fix the flaky login test", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.iterations, 2);
  withStore(repo.path, (store) => {
    const actions = store.getFinish(result.runId).nextActions;
    assert.deepEqual(actions.slice(0, 3), [
      "Complete: The rest",
      "Follow up: Watch CI",
      "Follow up: Tell the team",
    ]);
    assert.match(actions[3], /^Resume this session later: claude --resume \S+$/);
    assert.match(actions[4], /^Start new session in \//);
    assert.equal(actions.length, 5);
  });
});

Deno.test("over ACP (claude-agent-acp) the finish call reaches the runner and the agent reads the response", async () => {
  await using repo = await tempRepo();
  const answers: string[] = [];
  await using harness = await CLAUDE_ACP_BACKEND.start([[
    toolTurn("Bash", {
      command: "printf 'a\\n' > tz.txt && git add tz.txt && git commit -qm 'fix: pin TZ'",
    }),
    toolTurn(FINISH_TOOL, { success: true, summary: "Pinned TZ", next_steps: "Watch CI" }),
    reading(answers, textTurn("Done.")),
  ]]);
  await commitAgent(repo.path, {
    name: "suite",
    behavior: {
      completionType: "iterate",
      completionConfig: { maxIterations: 1 },
      allowedTools: ["Bash"],
      backend: harness.backend,
    },
    probe: { enabled: false },
  });
  const run = await runCli(["--agent", "suite", "--json"], {
    cwd: repo.path,
    server: harness.server,
    home: harness.home,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "completed");
  assert.equal(answers.length, 1, "the model read one tool result");
  const answer = JSON.parse(answers[0]);
  assert.deepEqual(Object.keys(answer), RESPONSE_KEYS);
  assert.equal(answer.status, "completed");
  assert.equal(answer.history_saved, true);
  assert.equal(answer.next_actions[0], "Follow up: Watch CI");
  assert.match(answer.next_actions.at(-1), /^Start new session in \//);
  // The agent's process is busy with the call: the model steps fell back, and ran once.
  const fallbacks = await events(result.logFile, "finish_fallback");
  assert.deepEqual(fallbacks.map((event) => event.step), [
    "summary",
    "learnings",
    "skills",
    "next_actions",
  ]);
  assert.match(String(fallbacks[0].reason), /busy with the finish call/);
  withStore(repo.path, (store) => {
    assert.equal(store.getFinish(result.runId).steps.length, 6);
    assert.equal(store.iterations(result.runId)[0].summary.completeTask?.status, "success");
  });
});
