/**
 * End to end for the finish workflow's model steps on the lightweight
 * model: the structured summary, learning extraction, skill assessment and
 * next actions answered by the scripted model in one request, from a
 * conversation opened while the last iteration ran and gone after the run;
 * a reply that is not JSON, or lacks a part, falling back to what the run
 * recorded (for that part only); the cost cap; a spent budget leaving the
 * learnings out of the question; and a finish killed during its request
 * that `finish RUN_ID` completes with one request. The CLI as a subprocess,
 * the real Claude Code binary against the scripted model, real git and
 * real SQLite.
 */

import assert from "node:assert/strict";
import { COMPLETE_TASK_TOOL } from "../../agents/record/complete_task_tool.ts";
import { SqliteStore } from "../../agents/store/mod.ts";
import { STEP_MARKERS } from "../../agents/finish/steps.ts";
import { FINISH_SYSTEM_PROMPT } from "../../agents/finish/model.ts";
import { FINISH_MARKER } from "../../agents/finish/question.ts";
import { RUN_TAG, taggedProcesses } from "../../agents/support/process_tags.ts";
import {
  type RecordedRequest,
  ScriptedModelServer,
  type ScriptedTurn,
  textTurn,
  toolTurn,
  type TurnContext,
} from "../../agents/testing/mod.ts";
import { runCli, tempRepo } from "../_helpers.ts";

const STORE = ".agent/.finishline/state.db";
type Step = keyof typeof STEP_MARKERS;

/** The agent's one iteration: a commit and a partial complete_task report. */
const AGENT_SCRIPT = [
  toolTurn("Bash", {
    command: "printf 'a\\n' > tz.txt && git add tz.txt && git commit -qm 'fix: pin TZ'",
  }),
  toolTurn(COMPLETE_TASK_TOOL, {
    status: "partial",
    original_request_summary: "Fix the flaky login test",
    summary: "Pinned TZ=UTC in tz.txt",
    remaining_work: "Pin it in CI too",
    learned: ["Login tests depend on TZ"],
    skills_used: ["git"],
    new_skills_needed: ["ci-config"],
    files_modified: ["tz.txt"],
    next_steps: "Watch CI",
  }),
  textTurn("Partly done."),
];

/** What the scripted finish model answers for each step's part. */
const ANSWERS: Record<Step, unknown> = {
  summary: {
    task: "Fix the flaky login test",
    done: ["Pinned TZ=UTC"],
    files: ["tz.txt"],
    remaining: ["Pin TZ in CI"],
    approaches_tried: ["Pinning TZ locally: worked"],
    lessons: ["Timezones make tests flaky"],
    challenges: ["The failure showed only at night"],
  },
  learnings: [{
    learning: "Set TZ=UTC for date tests",
    tool_or_technique: "env pinning",
    applicability: "any date-dependent test",
    tags: ["ci", "flaky tests"],
  }],
  skills: {
    used: [{ name: "git", description: "committed the fix" }],
    missing: [{ name: "ci-config", description: "would have pinned TZ in CI" }],
    update: [{ name: "flaky-test-triage", description: "add a timezone check" }],
  },
  next_actions: ["Pin TZ=UTC in the CI workflow", "Re-run the login tests"],
};

/** The steps a finish question asks about, from their markers; undefined for other questions. */
function stepsOf(text: string): Step[] | undefined {
  if (!text.includes(FINISH_MARKER)) return undefined;
  return (Object.keys(STEP_MARKERS) as Step[]).filter((step) => text.includes(STEP_MARKERS[step]));
}

/**
 * The usage a real API would report: about four characters a token for the
 * whole request (system prompt, messages, tools), and for the reply.
 */
function usageOf(ctx: TurnContext, reply: string): ScriptedTurn["usage"] {
  return {
    input_tokens: Math.ceil(JSON.stringify(ctx.request.body).length / 4),
    output_tokens: Math.ceil(reply.length / 4),
  };
}

/**
 * Answers the finish question with one JSON object holding the part of each
 * step asked (from `answers`; a step left out there is a missing part), with
 * realistic usage; `turn` may answer instead (a delay, other usage).
 */
function finishModel(
  answers: Partial<Record<Step, unknown>> = ANSWERS,
  turn?: (ctx: TurnContext, text: string) => ScriptedTurn | undefined,
) {
  return (ctx: TurnContext): ScriptedTurn | Promise<ScriptedTurn> => {
    const steps = stepsOf(ctx.lastUserText);
    if (!steps) return textTurn("OK.");
    const text = JSON.stringify(
      Object.fromEntries(steps.flatMap((step) => step in answers ? [[step, answers[step]]] : [])),
    );
    return turn?.(ctx, text) ?? { text, usage: usageOf(ctx, text) };
  };
}

/** The finish questions the server received, with the steps each asked about. */
function finishRequests(server: ScriptedModelServer): Array<[Step[], RecordedRequest]> {
  return server.requests.flatMap((request) => {
    const messages = request.body.messages as Array<{ role: string; content: unknown }>;
    const last = messages?.at(-1);
    const steps = last?.role === "user" ? stepsOf(JSON.stringify(last.content)) : undefined;
    return request.side && steps ? [[steps, request] as [Step[], RecordedRequest]] : [];
  });
}

const ALL_STEPS: Step[] = ["summary", "learnings", "skills", "next_actions"];

/** The run's log events of one kind. */
async function events(logFile: string, kind: string): Promise<Array<Record<string, unknown>>> {
  return (await Deno.readTextFile(logFile)).split("\n").filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((event) => event.kind === kind);
}

/** The next actions every finish ends with: resume the agent's session, start a new one here. */
function always(server: ScriptedModelServer, cwd: string): string[] {
  const [sessionId] = server.sessionIds();
  return [`Resume this session later: claude --resume ${sessionId}`, `Start new session in ${cwd}`];
}

/** An agent with a finish section. */
async function writeAgent(root: string, finish: Record<string, unknown>): Promise<void> {
  await Deno.mkdir(`${root}/.agent/fixer`, { recursive: true });
  await Deno.writeTextFile(
    `${root}/.agent/fixer/agent.json`,
    JSON.stringify({
      name: "fixer",
      behavior: { completionType: "iterate", completionConfig: { maxIterations: 1 } },
      finish,
    }),
  );
}

Deno.test("the four finish model steps make one request on the lightweight model, from a process opened ahead and gone after the run; the answers reach the history, the report and runs show", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: [AGENT_SCRIPT],
    sideReply: finishModel(),
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Fix the flaky login test", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);

  const asked = finishRequests(server);
  // Exactly one finish request for the run, asking for the four parts.
  assert.deepEqual(asked.map(([steps]) => steps), [ALL_STEPS]);
  assert.equal(
    server.requests.filter((request) =>
      request.side && JSON.stringify(request.body.messages).includes(FINISH_MARKER)
    ).length,
    1,
  );
  for (const [, request] of asked) {
    assert.equal(request.body.model, "claude-haiku-4-5");
    assert.deepEqual(request.body.tools ?? [], []);
    // The finish model's own short system prompt, not Claude Code's.
    const system = JSON.stringify(request.body.system);
    assert.ok(system.includes(FINISH_SYSTEM_PROMPT.slice(0, 60)), system.slice(0, 300));
    assert.ok(!system.includes("You are Claude Code"), "Claude Code's system prompt is replaced");
  }
  assert.equal(server.sessionIds().length, 1, "the finish session takes no scripted session");
  // The finish model's process was started when the iteration cap was near, and used.
  assert.deepEqual(
    (await events(result.logFile, "finish_model_opened")).map((event) => event.why),
    ["iteration cap near"],
  );
  assert.deepEqual(
    (await events(result.logFile, "finish_model")).map((event) => [event.steps, event.opened]),
    [[ALL_STEPS, true]],
  );
  // Nothing the run started is left running, the finish model's process included.
  assert.deepEqual(await taggedProcesses(RUN_TAG, `${result.runId}/`, { prefix: true }), []);
  const firstPrompt = JSON.stringify(asked[0][1].body.messages);
  assert.match(firstPrompt, /Pinned TZ=UTC in tz\.txt/);
  assert.match(firstPrompt, /skills wished for: ci-config/);

  const store = SqliteStore.open(`${repo.path}/${STORE}`);
  try {
    const finish = store.getFinish(result.runId);
    assert.deepEqual(finish.steps, [
      "summary",
      "learnings",
      "skills",
      "next_actions",
      "persist",
      "cleanup",
    ]);
    assert.equal(finish.summary?.summarySource, "model");
    assert.deepEqual(finish.summary?.structured, {
      task: "Fix the flaky login test",
      done: ["Pinned TZ=UTC"],
      files: ["tz.txt"],
      remaining: ["Pin TZ in CI"],
      approachesTried: ["Pinning TZ locally: worked"],
      lessons: ["Timezones make tests flaky"],
      challenges: ["The failure showed only at night"],
    });
    const [extracted] = store.searchLearnings("UTC date tests");
    assert.equal(extracted.text, "Set TZ=UTC for date tests");
    assert.equal(extracted.source, "extracted");
    assert.deepEqual(extracted.tags, ["ci", "flaky tests"]);
    assert.deepEqual(store.skills(result.runId), [
      { name: "git", kind: "used", description: "committed the fix", lifecycle: "implemented" },
      {
        name: "ci-config",
        kind: "missing",
        description: "would have pinned TZ in CI",
        lifecycle: "proposed",
      },
      {
        name: "flaky-test-triage",
        kind: "update",
        description: "add a timezone check",
        lifecycle: "proposed",
      },
    ]);
    // The model's actions, then the seed's always-present ones (issue 30, point 7).
    assert.deepEqual(finish.nextActions, [
      "Pin TZ=UTC in the CI workflow",
      "Re-run the login tests",
      ...always(server, store.getRun(result.runId)!.cwd),
    ]);

    // What the finish cost, as Claude Code reported it for the usage the server sent.
    const usage = finish.usage!;
    assert.equal(usage.model, "claude-haiku-4-5");
    assert.equal(usage.requests, 1);
    assert.ok(usage.costUsd > 0 && usage.costUsd < 0.05, `cost ${usage.costUsd}`);
    const sent = asked.reduce(
      (sum, [, request]) => sum + Math.ceil(JSON.stringify(request.body).length / 4),
      0,
    );
    assert.equal(usage.tokens.input, sent);
    console.log(
      `finish model steps: ${usage.requests} request${
        usage.requests === 1 ? "" : "s"
      }, ${usage.tokens.input} input / ${usage.tokens.output} output tokens, $${
        usage.costUsd.toFixed(4)
      } at Haiku 4.5 prices (no cache reads counted)`,
    );
  } finally {
    store.close();
  }

  const report = await Deno.readTextFile(result.report);
  assert.match(
    report,
    /\n## Next actions\n\n- Pin TZ=UTC in the CI workflow\n- Re-run the login tests\n- Resume this session later: claude --resume \S+\n- Start new session in \S+\n$/,
  );
  const show = await runCli(["runs", "show", result.runId], { cwd: repo.path });
  assert.match(
    show.stdout,
    /^Finish: +summary, learnings, skills, next_actions, persist, cleanup; model claude-haiku-4-5: 1 request, \d+ input \/ \d+ output tokens, \$0\.\d{4}$/m,
  );
  assert.match(
    show.stdout,
    /^Skills: +git \(used, implemented\), ci-config \(missing, proposed\), flaky-test-triage \(to update, proposed\)$/m,
  );
  assert.match(
    show.stdout,
    /^Next: +- Pin TZ=UTC in the CI workflow\n +- Re-run the login tests\n +- Resume this session later: claude --resume \S+\n +- Start new session in \S+$/m,
  );
});

Deno.test("a finish model that answers no JSON falls back to what the run recorded, and the log says so", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    scripts: [AGENT_SCRIPT],
    sideReply: () => textTurn("I am not sure what you mean. {broken json"),
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Fix the flaky login test", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.equal(finishRequests(server).length, 1, "one question for the four steps");
  const fallbacks = await events(result.logFile, "finish_fallback");
  assert.deepEqual(
    fallbacks.map((event) => [event.step, event.reason]),
    (["summary", "learnings", "skills", "next_actions"] as const).map((step) => [
      step,
      "the reply was not the JSON asked for",
    ]),
  );

  const store = SqliteStore.open(`${repo.path}/${STORE}`);
  try {
    const finish = store.getFinish(result.runId);
    assert.equal(finish.summary?.summarySource, "aggregation");
    assert.deepEqual(finish.summary?.structured, {
      task: "Fix the flaky login test",
      done: ["Pinned TZ=UTC in tz.txt"],
      files: ["tz.txt"],
      remaining: ["Pin it in CI too"],
      approachesTried: [],
      lessons: ["Login tests depend on TZ"],
      challenges: [],
    });
    assert.deepEqual(store.learningsOf(result.runId).map((learning) => learning.text), [
      "Login tests depend on TZ",
    ]);
    assert.deepEqual(store.skills(result.runId), [
      { name: "git", kind: "used", description: "", lifecycle: "implemented" },
      { name: "ci-config", kind: "missing", description: "", lifecycle: "proposed" },
    ]);
    assert.deepEqual(finish.nextActions, [
      "Complete: Pin it in CI too",
      "Follow up: Watch CI",
      ...always(server, store.getRun(result.runId)!.cwd),
    ]);
    assert.equal(finish.usage?.requests, 1, "the failed answer still costs");
  } finally {
    store.close();
  }
});

Deno.test("a reply without one part falls back for that part only", async () => {
  await using repo = await tempRepo();
  const { skills: _, ...withoutSkills } = ANSWERS;
  await using server = await ScriptedModelServer.start({
    scripts: [AGENT_SCRIPT],
    sideReply: finishModel(withoutSkills),
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Fix the flaky login test", "--json"], {
    cwd: repo.path,
    server,
  });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.deepEqual(finishRequests(server).map(([steps]) => steps), [ALL_STEPS]);
  const fallbacks = await events(result.logFile, "finish_fallback");
  assert.deepEqual(fallbacks.map((event) => [event.step, event.reason]), [
    ["skills", 'the reply had no "skills" part'],
  ]);
  const store = SqliteStore.open(`${repo.path}/${STORE}`);
  try {
    const finish = store.getFinish(result.runId);
    assert.equal(finish.summary?.summarySource, "model");
    assert.equal(store.searchLearnings("UTC date tests")[0].source, "extracted");
    // The skills the agent reported, without the model's descriptions.
    assert.deepEqual(store.skills(result.runId), [
      { name: "git", kind: "used", description: "", lifecycle: "implemented" },
      { name: "ci-config", kind: "missing", description: "", lifecycle: "proposed" },
    ]);
    assert.deepEqual(finish.nextActions.slice(0, 2), [
      "Pin TZ=UTC in the CI workflow",
      "Re-run the login tests",
    ]);
  } finally {
    store.close();
  }
});

Deno.test("the finish cost cap is checked before the one question: an answer that ends over it is kept, and nothing more is asked", async () => {
  await using repo = await tempRepo();
  await writeAgent(repo.path, { maxCostUsd: 0.01 });
  await using server = await ScriptedModelServer.start({
    scripts: [AGENT_SCRIPT],
    // 20,000 input tokens at Haiku 4.5's $1 per million: $0.02, over the cap of $0.01.
    sideReply: finishModel(ANSWERS, (_ctx, text) => ({
      text,
      usage: { input_tokens: 20_000, output_tokens: 100 },
    })),
  });
  const run = await runCli(["--agent", "fixer", "--json"], { cwd: repo.path, server });
  assert.equal(run.code, 0, run.stderr);
  const result = JSON.parse(run.stdout);
  assert.deepEqual(finishRequests(server).map(([steps]) => steps), [ALL_STEPS]);
  assert.deepEqual(await events(result.logFile, "finish_fallback"), []);
  const store = SqliteStore.open(`${repo.path}/${STORE}`);
  try {
    const finish = store.getFinish(result.runId);
    assert.equal(finish.summary?.summarySource, "model", "the question started under the cap");
    assert.equal(finish.usage?.requests, 1);
    assert.ok(finish.usage!.costUsd > 0.01, `cost ${finish.usage!.costUsd}`);
    assert.deepEqual(finish.steps.length, 6);
  } finally {
    store.close();
  }
  // Every step is done: `finish RUN_ID` asks nothing (a replay over the cap is in tests/finish).
  const again = await runCli(["finish", result.runId], { cwd: repo.path, server });
  assert.match(again.stdout, /already finished/);
  assert.equal(finishRequests(server).length, 1);
});

Deno.test("a run whose budget is spent gets no learning extraction; the other steps still run", async () => {
  await using repo = await tempRepo();
  await using server = await ScriptedModelServer.start({
    // One expensive main-loop turn spends the run's budget of $0.01.
    scripts: [[{ text: "Looked around.", usage: { input_tokens: 200_000, output_tokens: 10 } }]],
    sideReply: finishModel(),
  });
  const run = await runCli(
    ["--iterate-max", "3", "--task", "Look around", "--max-budget-usd", "0.01", "--json"],
    { cwd: repo.path, server },
  );
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "budget_exhausted", run.stderr);
  // One question, without the learnings part.
  assert.deepEqual(finishRequests(server).map(([steps]) => steps), [[
    "summary",
    "skills",
    "next_actions",
  ]]);
  const skipped = await events(result.logFile, "learnings_extraction_skipped");
  assert.deepEqual(skipped.map((event) => event.reason), ["the run's budget is spent"]);
});

Deno.test("a finish killed during its request is completed by finish RUN_ID with one request, and redoes no step done", async () => {
  await using repo = await tempRepo();
  let hanging: () => void;
  const inQuestion = new Promise<void>((resolve) => hanging = resolve);
  let killed = false;
  await using server = await ScriptedModelServer.start({
    scripts: [AGENT_SCRIPT],
    sideReply: finishModel(ANSWERS, () => {
      if (killed) return undefined;
      hanging();
      return { text: "{}", delayMs: 120_000 };
    }),
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Fix the flaky login test"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await inQuestion;
      killed = true;
      child.kill("SIGKILL");
    },
  });
  assert.equal(run.code, 137, run.stderr);
  const store = () => SqliteStore.open(`${repo.path}/${STORE}`);
  const before = store();
  const [{ id }] = before.listRuns();
  assert.deepEqual(before.getFinish(id).steps, []);
  assert.equal(before.getRun(id)?.status, "completed", "the outcome was recorded first");
  before.close();
  assert.deepEqual(finishRequests(server).map(([steps]) => steps), [ALL_STEPS]);

  const finished = await runCli(["finish", id], { cwd: repo.path, server });
  assert.equal(finished.code, 0, finished.stderr);
  assert.equal(
    finished.stdout,
    `Finished run ${id}: summary, learnings, skills, next_actions, persist, cleanup\n`,
  );
  // The replay asks once, for every part (none was checkpointed; tests/finish has a
  // replay after some steps, which asks for the missing parts only).
  const replayed = finishRequests(server).slice(1);
  assert.deepEqual(replayed.map(([steps]) => steps), [ALL_STEPS]);
  assert.match(JSON.stringify(replayed[0][1].body.messages), /Pinned TZ=UTC in tz\.txt/);

  const after = store();
  try {
    const finish = after.getFinish(id);
    assert.equal(finish.steps.length, 6);
    assert.equal(finish.summary?.summarySource, "model");
    assert.deepEqual(finish.nextActions, [
      "Pin TZ=UTC in the CI workflow",
      "Re-run the login tests",
      ...always(server, after.getRun(id)!.cwd),
    ]);
    assert.ok(after.searchLearnings("UTC date tests").some((l) => l.source === "extracted"));
    // The killed request never answered: the tally counts the one answered.
    assert.equal(finish.usage?.requests, 1);
    assert.equal(after.getRun(id)?.status, "completed");
  } finally {
    after.close();
  }
  const again = await runCli(["finish", id], { cwd: repo.path, server });
  assert.match(again.stdout, /already finished/);
  assert.equal(finishRequests(server).length, 2, "nothing asked again");
});

Deno.test("a finish model process opened ahead but not used (the run was interrupted) asks nothing, counts no request, and is gone after the run", async () => {
  await using repo = await tempRepo();
  let started: () => void;
  const inIteration = new Promise<void>((resolve) => started = resolve);
  await using server = await ScriptedModelServer.start({
    scripts: [[() => {
      started();
      return { text: "too late", delayMs: 60_000 };
    }]],
    sideReply: finishModel(),
  });
  const run = await runCli(["--iterate-max", "1", "--task", "Fix the flaky login test", "--json"], {
    cwd: repo.path,
    server,
    onSpawn: async (child) => {
      await inIteration;
      child.kill("SIGINT");
    },
  });
  const result = JSON.parse(run.stdout);
  assert.equal(result.status, "interrupted", run.stderr);
  // Opened as the iteration cap neared; the interrupted run's finish asks no model.
  assert.deepEqual(
    (await events(result.logFile, "finish_model_opened")).map((event) => event.why),
    ["iteration cap near"],
  );
  assert.deepEqual(await events(result.logFile, "finish_model"), []);
  assert.deepEqual(finishRequests(server), []);
  assert.equal(server.requests.filter((request) => request.side).length, 0);
  const store = SqliteStore.open(`${repo.path}/${STORE}`);
  try {
    assert.equal(store.getFinish(result.runId).usage, null, "no finish request counted");
  } finally {
    store.close();
  }
  assert.deepEqual(await taggedProcesses(RUN_TAG, `${result.runId}/`, { prefix: true }), []);
});
