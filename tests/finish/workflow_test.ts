import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentBackend, SessionRequest } from "../../agents/backends/port.ts";
import type { CompleteTaskCall } from "../../agents/completion/handler_contract.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { Redactor } from "../../agents/support/redact.ts";
import { type RunStore, SqliteStore, type StoredRun } from "../../agents/store/mod.ts";
import { type AgentMessage, emptySummary } from "../../agents/record/iteration.ts";
import { FINISH_SYSTEM_PROMPT } from "../../agents/finish/model.ts";
import { STEP_MARKERS } from "../../agents/finish/steps.ts";
import { FINISH_MARKER } from "../../agents/finish/question.ts";
import { assessSkills, FINISH_STEPS, runFinish, runSummary } from "../../agents/finish/workflow.ts";
import { tempDir } from "../_helpers.ts";

const RUN_ID = "7c1d2e3f-4a5b-4c6d-8e9f-0a1b2c3d4e5f";

function report(fields: Partial<CompleteTaskCall> = {}): CompleteTaskCall {
  return {
    status: "partial",
    original_request_summary: "Fix the flaky login test",
    summary: "Pinned the timezone",
    ...fields,
  };
}

function iterationSummary(
  iteration: number,
  fields: Partial<IterationSummary> = {},
): IterationSummary {
  return { ...emptySummary(iteration), ...fields };
}

/** Two iterations: a partial report, then a successful one. */
function twoIterations(): IterationSummary[] {
  return [
    iterationSummary(1, {
      assistantResponses: ["Looking at the test", "The timezone is not pinned"],
      costUsd: 0.25,
      git: { newCommits: 1, staged: [], unstaged: ["tests/login_test.ts"] },
      completeTask: report({
        status: "partial",
        summary: "Found the cause: the timezone is not pinned",
        remaining_work: "Pin the timezone in CI",
        learned: ["Login tests depend on TZ", "  "],
        skills_used: ["deno-testing", " git-bisect "],
        new_skills_needed: ["ci-config"],
        files_modified: ["tests/login_test.ts"],
        next_steps: "Pin it in CI",
      }),
    }),
    iterationSummary(2, {
      assistantResponses: ["Done"],
      costUsd: 0.5,
      git: { newCommits: 2, staged: [], unstaged: [] },
      completeTask: report({
        status: "success",
        summary: "Pinned TZ=UTC in the CI workflow",
        remaining_work: "nothing, really",
        learned: ["CI sets no TZ by default"],
        skills_used: ["deno-testing"],
        new_skills_needed: ["ci-config", "timezone-audit"],
        files_modified: [".github/workflows/ci.yml", "tests/login_test.ts"],
        next_steps: "Watch the next CI runs",
      }),
    }),
  ];
}

/** The skills {@linkcode twoIterations} reported, as the fallback records them. */
const REPORTED_SKILLS = [
  { name: "deno-testing", kind: "used", description: "", lifecycle: "implemented" },
  { name: "git-bisect", kind: "used", description: "", lifecycle: "implemented" },
  { name: "ci-config", kind: "missing", description: "", lifecycle: "proposed" },
  { name: "timezone-audit", kind: "missing", description: "", lifecycle: "proposed" },
];

interface Fixture extends AsyncDisposable {
  store: SqliteStore;
  path: string;
}

async function fixture(
  summaries: IterationSummary[] = twoIterations(),
  run: Partial<Parameters<SqliteStore["createRun"]>[0]> = {},
): Promise<Fixture> {
  const dir = await tempDir("finishline-finish-");
  const path = join(dir.path, "state.db");
  const store = SqliteStore.open(path, { redactor: new Redactor({}) });
  try {
    store.createRun({
      id: RUN_ID,
      agent: "fixer",
      handler: "iterate",
      argv: ["--task", "fix the flaky login test"],
      cwd: "/repo",
      startedAt: "2025-01-01T10:00:00.000Z",
      baseline: null,
      branch: null,
      maxIterations: 5,
      cleanup: {},
      ...run,
    });
    for (const summary of summaries) {
      store.recordIteration({
        runId: RUN_ID,
        number: summary.iteration,
        sessionId: null,
        promptDigest: `digest-${summary.iteration}`,
        summary,
        verdict: "continue",
      });
    }
  } catch (error) {
    store.close();
    await dir[Symbol.asyncDispose]();
    throw error;
  }
  return {
    store,
    path,
    [Symbol.asyncDispose]: async () => {
      store.close();
      await dir[Symbol.asyncDispose]();
    },
  };
}

/** The store, with one method failing the first time it is called. */
function failingOnce(store: SqliteStore, method: keyof RunStore, message: string): RunStore {
  let failed = false;
  return new Proxy(store, {
    get(target, property) {
      if (property === method && !failed) {
        return () => {
          failed = true;
          throw new Error(`${message}\nsecond line of the error`);
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

type Step = keyof typeof STEP_MARKERS;

/** The steps the finish question asks about, from their markers. */
function stepsOf(prompt: string): Step[] {
  return (Object.keys(STEP_MARKERS) as Step[]).filter((step) =>
    prompt.includes(STEP_MARKERS[step])
  );
}

/** A reply to the finish question: the text, or made from the steps it asks about. */
type Reply = string | Error | ((steps: Step[]) => string | Error);

/** A backend without conversations replying to the finish question, recording each request. */
class ReplyingBackend implements AgentBackend {
  readonly name = "fake";
  readonly requests: SessionRequest[] = [];
  #reply: Reply;

  constructor(reply: Reply) {
    this.#reply = reply;
  }

  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    this.requests.push(request);
    yield { type: "system", subtype: "init", session_id: "finish-session" };
    const reply = typeof this.#reply === "function"
      ? this.#reply(stepsOf(request.prompt))
      : this.#reply;
    if (reply instanceof Error) throw reply;
    yield {
      type: "assistant",
      session_id: "finish-session",
      parent_tool_use_id: null,
      message: { content: [{ type: "text", text: reply }] },
    };
    yield {
      type: "result",
      subtype: "success",
      session_id: "finish-session",
      total_cost_usd: 0.001,
      num_turns: 1,
      usage: { input_tokens: 1000, output_tokens: 50 },
    };
  }

  /** The steps each request asked about, in order. */
  get steps(): Step[][] {
    return this.requests.map((request) => stepsOf(request.prompt));
  }
}

/** The one JSON answer holding these parts, for the steps asked (a part left undefined is missing). */
function answer(parts: Partial<Record<Step, unknown>>): (steps: Step[]) => string {
  return (steps) =>
    JSON.stringify(
      Object.fromEntries(steps.flatMap((step) => step in parts ? [[step, parts[step]]] : [])),
    );
}

/** Good answers to every step. */
const GOOD_ANSWERS: Record<Step, unknown> = {
  summary: {
    task: "Fix the flaky login test",
    done: ["Pinned TZ"],
    files: [".github/workflows/ci.yml"],
    remaining: [],
    approaches_tried: ["bisecting: too slow", "pinning TZ: worked"],
    lessons: ["CI has no TZ"],
    challenges: ["only failed at night"],
  },
  learnings: [{
    learning: "Pin TZ in CI workflows",
    tool_or_technique: "env pinning",
    applicability: "date-dependent tests",
    tags: ["ci", "timezone"],
  }],
  skills: {
    used: [{ name: "deno-testing", description: "ran the login test" }],
    missing: [{ name: "ci-config", description: "edit CI workflows" }],
    update: [{ name: "git-bisect", description: "skip merge commits" }],
  },
  next_actions: ["Watch two nightly CI runs"],
};

/** Every step answered well. */
const good = answer(GOOD_ANSWERS);

function events(): {
  list: Array<[string, Record<string, unknown>]>;
  onEvent: (kind: string, data: Record<string, unknown>) => void;
} {
  const list: Array<[string, Record<string, unknown>]> = [];
  return { list, onEvent: (kind, data) => list.push([kind, data]) };
}

Deno.test("runFinish", async (t) => {
  await t.step(
    "runs summary, learnings, skills, persist and cleanup in order and checkpoints each",
    async () => {
      await using f = await fixture();
      const seen = events();
      const stepsAtCleanup: string[][] = [];
      let statusAtCleanup: string | undefined;
      const result = await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "All checks passed" },
        onEvent: seen.onEvent,
        cleanup: () => {
          stepsAtCleanup.push(f.store.getFinish(RUN_ID).steps);
          statusAtCleanup = f.store.getRun(RUN_ID)?.status;
          return Promise.resolve();
        },
      });
      assert.deepEqual(FINISH_STEPS, [
        "summary",
        "learnings",
        "skills",
        "next_actions",
        "persist",
        "cleanup",
      ]);
      assert.deepEqual(result, { steps: [...FINISH_STEPS], ran: [...FINISH_STEPS] });
      const fallbacks = seen.list.filter(([kind]) => kind === "finish_fallback");
      assert.deepEqual(
        seen.list.filter(([kind]) => kind !== "finish_fallback"),
        FINISH_STEPS.map((step) => ["finish_step", { step }]),
      );
      // Cleanup runs last: the earlier steps are checkpointed and the outcome persisted.
      assert.deepEqual(stepsAtCleanup, [[
        "summary",
        "learnings",
        "skills",
        "next_actions",
        "persist",
      ]]);
      assert.equal(statusAtCleanup, "completed");

      const record = f.store.getFinish(RUN_ID);
      assert.deepEqual(record.steps, [...FINISH_STEPS]);
      assert.equal(record.error, null);
      assert.equal(record.summary?.outcome, "completed");
      assert.equal(record.summary?.reason, "All checks passed");
      assert.equal(record.summary?.iterations, 2);
      const run = f.store.getRun(RUN_ID);
      assert.equal(run?.status, "completed");
      assert.equal(run?.reason, "All checks passed");
      assert.ok(run?.endedAt);
      assert.deepEqual(f.store.skills(RUN_ID), REPORTED_SKILLS);
      // Without a backend every model step fell back, and said so.
      assert.deepEqual(
        fallbacks.map(([, data]) => data),
        ["summary", "learnings", "skills", "next_actions"].map((step) => ({
          step,
          reason: "no model backend",
        })),
      );
      // Every iteration's next steps (iteration 1 said "Pin it in CI"), then the seed's
      // always-present actions (the fixture's sessions have no id).
      assert.deepEqual(record.nextActions, [
        "Follow up: Pin it in CI",
        "Follow up: Watch the next CI runs",
        "Resume this session later",
        "Start new session in /repo",
      ]);
      assert.equal(record.usage, null);
    },
  );

  await t.step("a second call runs nothing and does not clean up again", async () => {
    await using f = await fixture();
    let cleanups = 0;
    const options = {
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "completed", reason: "done" },
      cleanup: () => {
        cleanups++;
        return Promise.resolve();
      },
    };
    await runFinish(options);
    const endedAt = f.store.getRun(RUN_ID)?.endedAt;
    const seen = events();
    const again = await runFinish({
      ...options,
      outcome: { status: "failed", reason: "should not be persisted" },
      onEvent: seen.onEvent,
    });
    assert.deepEqual(again, { steps: [...FINISH_STEPS], ran: [] });
    assert.equal(cleanups, 1);
    assert.deepEqual(seen.list, [], "no step ran, no model step fell back");
    assert.equal(f.store.getRun(RUN_ID)?.status, "completed");
    assert.equal(f.store.getRun(RUN_ID)?.endedAt, endedAt);
  });

  await t.step(
    "the finish tool's call stops after next_actions with the iteration under way; the run's end does the rest without redoing them",
    async () => {
      const [first, second] = twoIterations();
      await using f = await fixture([first]);
      const seen = events();
      const pending = { ...second, sessionId: "s2" };
      const tool = await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "The agent called finish" },
        pending,
        until: "next_actions",
      });
      assert.deepEqual(tool.ran, ["summary", "learnings", "skills", "next_actions"]);
      assert.equal(f.store.getRun(RUN_ID)?.status, "running", "persisting waits for the run's end");
      const record = f.store.getFinish(RUN_ID);
      assert.equal(record.summary?.iterations, 2, "the iteration under way is counted");
      assert.ok(record.nextActions.includes("Resume this session later: claude --resume s2"));

      // The run's end, the iteration now recorded, the same outcome: only persist and cleanup.
      f.store.recordIteration({
        runId: RUN_ID,
        number: 2,
        sessionId: "s2",
        promptDigest: "digest-2",
        summary: pending,
        verdict: "complete",
      });
      const end = await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "All checks passed" },
        onEvent: seen.onEvent,
      });
      assert.deepEqual(end.ran, ["persist", "cleanup"]);
      assert.deepEqual(seen.list.map(([kind]) => kind), ["finish_step", "finish_step"]);
    },
  );

  await t.step(
    "a summary made for another outcome or fewer iterations is redone at the run's end",
    async () => {
      const [first, second] = twoIterations();
      await using f = await fixture([first]);
      await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "The agent called finish" },
        until: "next_actions",
      });
      f.store.recordIteration({
        runId: RUN_ID,
        number: 2,
        sessionId: null,
        promptDigest: "digest-2",
        summary: second,
        verdict: "continue",
      });
      const seen = events();
      const end = await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "stalled", reason: "No progress" },
        onEvent: seen.onEvent,
      });
      assert.deepEqual(end.ran, [...FINISH_STEPS]);
      assert.deepEqual(seen.list.find(([kind]) => kind === "finish_redo")?.[1], {
        steps: ["summary", "learnings", "skills", "next_actions"],
        was: { outcome: "completed", iterations: 1 },
        now: { outcome: "stalled", iterations: 2 },
      });
      const record = f.store.getFinish(RUN_ID);
      assert.equal(record.summary?.outcome, "stalled");
      assert.equal(record.summary?.iterations, 2);
      assert.deepEqual(record.steps, [...FINISH_STEPS]);
    },
  );

  await t.step(
    "a step that fails stops the workflow, records its error, and a later call resumes there",
    async () => {
      await using f = await fixture();
      const seen = events();
      let cleanups = 0;
      const cleanup = () => {
        cleanups++;
        return Promise.resolve();
      };
      const first = await runFinish({
        store: failingOnce(f.store, "setSkills", "disk I/O error"),
        runId: RUN_ID,
        outcome: { status: "completed", reason: "All checks passed" },
        onEvent: seen.onEvent,
        cleanup,
      });
      assert.deepEqual(first, {
        steps: ["summary", "learnings"],
        ran: ["summary", "learnings"],
        failed: { step: "skills", error: "disk I/O error" },
      });
      const record = f.store.getFinish(RUN_ID);
      assert.deepEqual(record.steps, ["summary", "learnings"]);
      assert.equal(record.error, "skills: disk I/O error");
      assert.deepEqual(seen.list.at(-1), ["finish_failed", {
        step: "skills",
        error: "disk I/O error",
      }]);
      // Persist and cleanup did not run.
      assert.equal(cleanups, 0);
      assert.equal(f.store.getRun(RUN_ID)?.status, "running");
      assert.equal(f.store.getRun(RUN_ID)?.endedAt, null);
      assert.deepEqual(f.store.skills(RUN_ID), []);

      // `history finish RUN_ID` resumes with the real store and no outcome.
      const second = await runFinish({ store: f.store, runId: RUN_ID, cleanup });
      assert.deepEqual(second, {
        steps: [...FINISH_STEPS],
        ran: ["skills", "next_actions", "persist", "cleanup"],
      });
      assert.equal(cleanups, 1);
      assert.equal(f.store.getFinish(RUN_ID).error, null);
      assert.equal(f.store.skills(RUN_ID).length, 4);
      // Without an outcome, the one the summary step recorded is persisted.
      const run = f.store.getRun(RUN_ID);
      assert.equal(run?.status, "completed");
      assert.equal(run?.reason, "All checks passed");
      assert.ok(run?.endedAt);
    },
  );

  await t.step("a failing cleanup leaves the outcome persisted and can be retried", async () => {
    await using f = await fixture();
    let calls = 0;
    const cleanup = () => {
      calls++;
      return calls === 1 ? Promise.reject(new Error("gh: HTTP 502")) : Promise.resolve();
    };
    const first = await runFinish({
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "failed", reason: "Reached the iteration cap" },
      cleanup,
    });
    assert.deepEqual(first.failed, { step: "cleanup", error: "gh: HTTP 502" });
    assert.equal(f.store.getRun(RUN_ID)?.status, "failed");
    const second = await runFinish({ store: f.store, runId: RUN_ID, cleanup });
    assert.deepEqual(second.ran, ["cleanup"]);
    assert.equal(calls, 2);
    assert.equal(f.store.getRun(RUN_ID)?.status, "failed");
  });

  await t.step("without an outcome, a run still marked running ends as interrupted", async () => {
    await using f = await fixture();
    const result = await runFinish({ store: f.store, runId: RUN_ID });
    assert.equal(result.failed, undefined);
    const run = f.store.getRun(RUN_ID);
    assert.equal(run?.status, "interrupted");
    assert.equal(run?.reason, "The run stopped before it could record its outcome");
    assert.ok(run?.endedAt);
    assert.equal(f.store.getFinish(RUN_ID).summary?.outcome, "interrupted");
  });

  await t.step("without an outcome, a run's recorded final status is kept", async () => {
    await using f = await fixture();
    f.store.setRunStatus(RUN_ID, "failed", "Reached the iteration cap");
    await runFinish({ store: f.store, runId: RUN_ID });
    const run = f.store.getRun(RUN_ID);
    assert.equal(run?.status, "failed");
    assert.equal(run?.reason, "Reached the iteration cap");
    const summary = f.store.getFinish(RUN_ID).summary;
    assert.equal(summary?.outcome, "failed");
    assert.equal(summary?.reason, "Reached the iteration cap");
  });

  await t.step("a run is found by its id prefix, and an unknown run is an error", async () => {
    await using f = await fixture();
    const result = await runFinish({
      store: f.store,
      runId: RUN_ID.slice(0, 8),
      outcome: { status: "completed", reason: "done" },
    });
    assert.deepEqual(result.ran, [...FINISH_STEPS]);
    assert.deepEqual(f.store.getFinish(RUN_ID).steps, [...FINISH_STEPS]);
    await assert.rejects(
      () => runFinish({ store: f.store, runId: "no-such-run" }),
      /No run "no-such-run" in the history/,
    );
  });

  await t.step(
    "learnings from complete_task are stored with source agent and are searchable",
    async () => {
      await using f = await fixture();
      await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "done" },
      });
      const found = f.store.searchLearnings("login tests default");
      assert.deepEqual(found.map((learning) => learning.text).sort(), [
        "CI sets no TZ by default",
        "Login tests depend on TZ",
      ]);
      for (const learning of found) {
        assert.equal(learning.source, "agent");
        assert.equal(learning.runId, RUN_ID);
        assert.equal(learning.agent, "fixer");
        assert.deepEqual(learning.tags, ["fixer"]);
      }
      // The agent's name is a tag, so its learnings are found by it.
      assert.equal(f.store.searchLearnings("fixer").length, 2);
      // Finishing again after a resume replaces them rather than adding copies.
      f.store.clearFinish(RUN_ID);
      await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "done" },
      });
      assert.equal(f.store.searchLearnings("login default").length, 2);
    },
  );
});

Deno.test("runSummary", async (t) => {
  const run: StoredRun = {
    id: RUN_ID,
    agent: "fixer",
    handler: "iterate",
    argv: [],
    cwd: "/repo",
    status: "running",
    reason: null,
    startedAt: "2025-01-01T10:00:00.000Z",
    endedAt: null,
    baseline: null,
    branch: null,
    maxIterations: 5,
    costUsd: 0,
    tokensInput: 0,
    tokensOutput: 0,
    turns: 0,
    iterations: 0,
    cleanup: {},
  };

  await t.step(
    "uses the complete_task reports for task, files and next steps, and sums cost and commits",
    () => {
      const summary = runSummary(run, twoIterations(), {
        status: "completed",
        reason: "All checks passed",
      });
      assert.deepEqual(summary, {
        runId: RUN_ID,
        agent: "fixer",
        handler: "iterate",
        task: "Fix the flaky login test",
        outcome: "completed",
        reason: "All checks passed",
        iterations: 2,
        costUsd: 0.75,
        commits: 3,
        keySteps: [
          "1: Found the cause: the timezone is not pinned",
          "2: Pinned TZ=UTC in the CI workflow",
        ],
        filesChanged: ["tests/login_test.ts", ".github/workflows/ci.yml"],
        // The last report is a success: nothing remains, whatever it says.
        remainingWork: null,
        // Every report's next steps, in order, not only the last one's.
        nextSteps: ["Pin it in CI", "Watch the next CI runs"],
      });
    },
  );

  await t.step("a partial last report gives its remaining work", () => {
    const summaries = twoIterations().slice(0, 1);
    const summary = runSummary(run, summaries, { status: "failed", reason: "cap" });
    assert.equal(summary.remainingWork, "Pin the timezone in CI");
    assert.deepEqual(summary.nextSteps, ["Pin it in CI"]);
    assert.equal(summary.task, "Fix the flaky login test");
  });

  await t.step(
    "without reports, key steps come from the last response, truncated to 300 characters",
    () => {
      const long = "x".repeat(400);
      const summary = runSummary(run, [
        iterationSummary(1, { assistantResponses: ["first", "last words"] }),
        iterationSummary(2, { assistantResponses: [long] }),
        iterationSummary(3),
      ], { status: "interrupted", reason: "SIGINT" });
      assert.deepEqual(summary.keySteps, [
        "1: last words",
        `2: ${"x".repeat(300)}`,
        "3: (nothing reported)",
      ]);
      assert.equal(summary.task, null);
      assert.equal(summary.remainingWork, null);
      assert.deepEqual(summary.nextSteps, []);
      assert.deepEqual(summary.filesChanged, []);
      assert.equal(summary.commits, 0);
    },
  );

  await t.step("a run without iterations still gets a summary", () => {
    const summary = runSummary(run, [], { status: "failed", reason: "bad flags" });
    assert.equal(summary.iterations, 0);
    assert.equal(summary.costUsd, 0);
    assert.deepEqual(summary.keySteps, []);
  });
});

Deno.test("assessSkills", async (t) => {
  await t.step("lists used skills as implemented, then missing ones as proposed, each once", () => {
    assert.deepEqual(assessSkills(twoIterations()), REPORTED_SKILLS);
  });

  await t.step("drops blank names and iterations without a report", () => {
    assert.deepEqual(
      assessSkills([
        iterationSummary(1),
        iterationSummary(2, {
          completeTask: report({ skills_used: ["", "  "], new_skills_needed: [" "] }),
        }),
      ]),
      [],
    );
  });
});

Deno.test("finish model steps", async (t) => {
  const finish = (f: Fixture, backend: AgentBackend | undefined, extra = {}) => {
    const seen = events();
    const result = runFinish({
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "completed", reason: "done" },
      backend,
      onEvent: seen.onEvent,
      ...extra,
    });
    return { seen, result };
  };

  await t.step(
    "one question asks the finish model for all four parts, tool-less, with its own system prompt; each part is stored",
    async () => {
      await using f = await fixture();
      const backend = new ReplyingBackend(good);
      const { seen, result } = finish(f, backend, { cwd: "/worktree" });
      assert.deepEqual((await result).ran, [...FINISH_STEPS]);
      // One request, asking for the four parts.
      assert.deepEqual(backend.steps, [["summary", "learnings", "skills", "next_actions"]]);
      assert.ok(backend.requests[0].prompt.includes(FINISH_MARKER));
      for (const request of backend.requests) {
        assert.deepEqual(request.tools, []);
        assert.deepEqual(request.allowedTools, []);
        assert.equal(request.maxTurns, 1);
        assert.equal(request.model, "claude-haiku-4-5");
        assert.equal(request.systemPrompt, FINISH_SYSTEM_PROMPT);
        assert.equal(request.cwd, "/worktree");
        // Without conversations, each question carries the run's record.
        assert.ok(request.prompt.includes("Iteration 2: Pinned TZ=UTC in the CI workflow"));
      }
      assert.ok(!backend.requests[0].prompt.includes("Summary so far"));
      assert.deepEqual(
        seen.list.filter(([kind]) => kind === "finish_model").map(([, data]) => data.steps),
        [["summary", "learnings", "skills", "next_actions"]],
      );
      assert.ok(!seen.list.some(([kind]) => kind === "finish_fallback"), "no step fell back");

      const record = f.store.getFinish(RUN_ID);
      assert.equal(record.summary?.summarySource, "model");
      assert.deepEqual(record.summary?.structured, {
        task: "Fix the flaky login test",
        done: ["Pinned TZ"],
        files: [".github/workflows/ci.yml"],
        remaining: [],
        approachesTried: ["bisecting: too slow", "pinning TZ: worked"],
        lessons: ["CI has no TZ"],
        challenges: ["only failed at night"],
      });
      // The recorded facts stay beside the structured summary.
      assert.equal(record.summary?.iterations, 2);
      const [found] = f.store.searchLearnings("workflows");
      assert.equal(found.text, "Pin TZ in CI workflows");
      assert.equal(found.source, "extracted");
      assert.equal(found.technique, "env pinning");
      assert.deepEqual(found.tags, ["ci", "timezone"]);
      assert.deepEqual(f.store.skills(RUN_ID), [
        {
          name: "deno-testing",
          kind: "used",
          description: "ran the login test",
          lifecycle: "implemented",
        },
        { name: "git-bisect", kind: "used", description: "", lifecycle: "implemented" },
        {
          name: "ci-config",
          kind: "missing",
          description: "edit CI workflows",
          lifecycle: "proposed",
        },
        { name: "timezone-audit", kind: "missing", description: "", lifecycle: "proposed" },
        {
          name: "git-bisect",
          kind: "update",
          description: "skip merge commits",
          lifecycle: "proposed",
        },
      ]);
      // The model's actions, then the seed's always-present ones.
      assert.deepEqual(record.nextActions, [
        "Watch two nightly CI runs",
        "Resume this session later",
        "Start new session in /repo",
      ]);
      // One request's usage (each reply of the fake backend costs $0.001).
      assert.deepEqual(record.usage, {
        model: "claude-haiku-4-5",
        requests: 1,
        costUsd: 0.001,
        tokens: { input: 1000, output: 50, cacheRead: 0, cacheCreation: 0 },
      });
    },
  );

  await t.step("the run record carries each iteration's report fields and errors", async () => {
    await using f = await fixture([
      iterationSummary(1, {
        assistantResponses: ["Tried the build"],
        toolsUsed: ["Bash", "Bash", "Read"],
        errors: ["Bash: exit 1", "Bash: exit 2", "Bash: cannot find module", "Bash: exit 3"],
      }),
      ...twoIterations().slice(1).map((summary) => ({ ...summary, iteration: 2 })),
    ]);
    const backend = new ReplyingBackend("[]");
    await finish(f, backend).result;
    const prompt = backend.requests[0].prompt;
    assert.ok(prompt.includes("Iteration 1: Tried the build\n  tools: Bash, Read\n"), prompt);
    assert.ok(
      prompt.includes("  errors: Bash: exit 2; Bash: cannot find module; Bash: exit 3"),
      prompt,
    );
    assert.ok(prompt.includes("  skills wished for: ci-config; timezone-audit"), prompt);
    assert.ok(prompt.includes("  next steps: Watch the next CI runs"), prompt);
  });

  await t.step("a reply that is not the JSON asked for falls back, step by step", async () => {
    await using f = await fixture();
    const backend = new ReplyingBackend("I found nothing noteworthy, sorry.");
    const { seen, result } = finish(f, backend);
    assert.deepEqual((await result).ran, [...FINISH_STEPS]);
    assert.equal(backend.requests.length, 1);
    assert.deepEqual(
      seen.list.filter(([kind]) => kind === "finish_fallback").map(([, data]) => data),
      ["summary", "learnings", "skills", "next_actions"].map((step) => ({
        step,
        reason: "the reply was not the JSON asked for",
      })),
    );
    const record = f.store.getFinish(RUN_ID);
    assert.equal(record.summary?.summarySource, "aggregation");
    assert.deepEqual(record.summary?.structured, {
      task: "Fix the flaky login test",
      done: ["Found the cause: the timezone is not pinned", "Pinned TZ=UTC in the CI workflow"],
      files: ["tests/login_test.ts", ".github/workflows/ci.yml"],
      remaining: [],
      approachesTried: [],
      lessons: ["Login tests depend on TZ", "CI sets no TZ by default"],
      challenges: [],
    });
    assert.ok(f.store.searchLearnings("fixer").every((learning) => learning.source === "agent"));
    assert.deepEqual(f.store.skills(RUN_ID), REPORTED_SKILLS);
    assert.deepEqual(record.nextActions, [
      "Follow up: Pin it in CI",
      "Follow up: Watch the next CI runs",
      "Resume this session later",
      "Start new session in /repo",
    ]);
  });

  await t.step(
    "a part missing or invalid falls back on its own; the other parts are kept",
    async () => {
      await using f = await fixture();
      const backend = new ReplyingBackend(answer({
        summary: { done: ["no task field"] },
        learnings: GOOD_ANSWERS.learnings,
        // skills: missing
        next_actions: GOOD_ANSWERS.next_actions,
      }));
      const { seen, result } = finish(f, backend);
      assert.deepEqual((await result).ran, [...FINISH_STEPS]);
      assert.equal(backend.requests.length, 1);
      assert.deepEqual(
        seen.list.filter(([kind]) => kind === "finish_fallback").map(([, data]) => data),
        [
          { step: "summary", reason: 'the reply\'s "summary" part was not the JSON asked for' },
          { step: "skills", reason: 'the reply had no "skills" part' },
        ],
      );
      const record = f.store.getFinish(RUN_ID);
      assert.equal(record.summary?.summarySource, "aggregation");
      assert.equal(f.store.searchLearnings("workflows")[0].text, "Pin TZ in CI workflows");
      assert.deepEqual(f.store.skills(RUN_ID), REPORTED_SKILLS);
      assert.deepEqual(record.nextActions, [
        "Watch two nightly CI runs",
        "Resume this session later",
        "Start new session in /repo",
      ]);
    },
  );

  await t.step("the parts the model may write another way are read too", async () => {
    await using f = await fixture();
    // Learnings and next actions under their key (the shape each step once asked for),
    // the summary as a JSON string, and the whole answer in a fence after prose.
    const backend = new ReplyingBackend((steps) =>
      "Here you go:\n```json\n" + answer({
        summary: JSON.stringify(GOOD_ANSWERS.summary),
        learnings: { learnings: GOOD_ANSWERS.learnings },
        skills: GOOD_ANSWERS.skills,
        next_actions: { next_actions: GOOD_ANSWERS.next_actions },
      })(steps) + "\n```"
    );
    const { seen, result } = finish(f, backend);
    await result;
    assert.ok(!seen.list.some(([kind]) => kind === "finish_fallback"));
    const record = f.store.getFinish(RUN_ID);
    assert.equal(record.summary?.summarySource, "model");
    assert.equal(f.store.searchLearnings("workflows")[0].text, "Pin TZ in CI workflows");
    assert.equal(record.nextActions[0], "Watch two nightly CI runs");
  });

  await t.step(
    "a finish stopped after some steps is replayed with one question for the parts still missing",
    async () => {
      await using f = await fixture();
      const first = new ReplyingBackend(good);
      const stopped = await finish(f, undefined, {
        backend: first,
        store: failingOnce(f.store, "setSkills", "disk I/O error"),
      }).result;
      assert.deepEqual(stopped.steps, ["summary", "learnings"]);
      assert.deepEqual(first.steps, [["summary", "learnings", "skills", "next_actions"]]);
      const second = new ReplyingBackend(good);
      const { seen, result } = finish(f, second);
      assert.deepEqual((await result).ran, ["skills", "next_actions", "persist", "cleanup"]);
      // One request, for the missing parts only; the summary already made goes with it.
      assert.deepEqual(second.steps, [["skills", "next_actions"]]);
      assert.ok(second.requests[0].prompt.includes('Summary so far: {"task"'));
      assert.ok(!seen.list.some(([kind]) => kind === "finish_fallback"));
      assert.equal(
        f.store.skills(RUN_ID).find((skill) => skill.name === "ci-config")?.description,
        "edit CI workflows",
      );
      assert.equal(f.store.getFinish(RUN_ID).nextActions[0], "Watch two nightly CI runs");
      assert.equal(f.store.getFinish(RUN_ID).usage?.requests, 2);
    },
  );

  await t.step("an empty list of learnings is an answer, not a fallback", async () => {
    await using f = await fixture();
    for (const empty of [[], { learnings: [] }]) {
      f.store.clearFinish(RUN_ID);
      const { seen, result } = finish(
        f,
        new ReplyingBackend(answer({ ...GOOD_ANSWERS, learnings: empty })),
      );
      await result;
      assert.ok(!seen.list.some(([kind]) => kind === "finish_fallback"), JSON.stringify(empty));
    }
  });

  await t.step(
    "a failing session: the one question is not retried, and every step falls back",
    async () => {
      await using f = await fixture();
      const backend = new ReplyingBackend(new Error("API overloaded\nretry later"));
      const { seen, result } = finish(f, backend);
      assert.deepEqual((await result).ran, [...FINISH_STEPS]);
      assert.equal(backend.requests.length, 1, "asked once, not once per step");
      assert.deepEqual(seen.list.find(([kind]) => kind === "finish_model_failed"), [
        "finish_model_failed",
        { steps: ["summary", "learnings", "skills", "next_actions"], error: "API overloaded" },
      ]);
      // The one question failed: every step falls back with its error.
      assert.deepEqual(
        seen.list.filter(([kind]) => kind === "finish_fallback").map(([, data]) => data.reason),
        Array(4).fill("the finish model failed (API overloaded)"),
      );
      assert.equal(f.store.searchLearnings("fixer").length, 2, "the agent's learnings are kept");
    },
  );

  await t.step("extractLearnings false asks no learnings question", async () => {
    await using f = await fixture();
    const backend = new ReplyingBackend(good);
    await finish(f, backend, { extractLearnings: false, model: "claude-sonnet-4-5" }).result;
    assert.deepEqual(backend.steps, [["summary", "skills", "next_actions"]]);
    assert.ok(backend.requests.every((request) => request.model === "claude-sonnet-4-5"));
    assert.equal(f.store.searchLearnings("workflows").length, 0);
  });

  await t.step("a spent budget skips the extraction only", async () => {
    for (
      const extra of [{ budgetUsd: 0.75 }, { outcome: { status: "budget_exhausted", reason: "$" } }]
    ) {
      await using f = await fixture();
      const backend = new ReplyingBackend(good);
      const { seen, result } = finish(f, backend, extra);
      await result;
      assert.deepEqual(
        backend.steps,
        [["summary", "skills", "next_actions"]],
        JSON.stringify(extra),
      );
      assert.deepEqual(seen.list.find(([kind]) => kind === "learnings_extraction_skipped"), [
        "learnings_extraction_skipped",
        { reason: "the run's budget is spent" },
      ]);
    }
    // Under the budget, it runs.
    await using f = await fixture();
    const backend = new ReplyingBackend(good);
    await finish(f, backend, { budgetUsd: 0.76 }).result;
    assert.deepEqual(backend.steps, [["summary", "learnings", "skills", "next_actions"]]);
  });

  await t.step(
    "the cost cap, checked before the question, covers every attempt: a replay over it asks nothing",
    async () => {
      await using f = await fixture();
      // The first attempt's one answer ($0.001) lacks the skills and the next actions.
      const first = new ReplyingBackend(answer({
        summary: GOOD_ANSWERS.summary,
        learnings: GOOD_ANSWERS.learnings,
      }));
      await finish(f, first, { maxCostUsd: 0.0015, until: "next_actions" }).result;
      assert.equal(first.requests.length, 1);
      // Redo the steps that fell back: $0.001 spent is under $0.0015, so the replay asks (once).
      f.store.clearFinishSteps(RUN_ID, ["skills", "next_actions"]);
      const second = new ReplyingBackend(good);
      await finish(f, second, { maxCostUsd: 0.0015, until: "next_actions" }).result;
      assert.deepEqual(second.steps, [["skills", "next_actions"]]);
      // The replay's question carries the summary the first attempt made.
      assert.ok(second.requests[0].prompt.includes('Summary so far: {"task"'));
      // $0.002 spent: a third attempt starts over the cap and asks nothing.
      f.store.clearFinishSteps(RUN_ID, ["skills", "next_actions"]);
      const third = new ReplyingBackend(good);
      const { seen, result } = finish(f, third, { maxCostUsd: 0.0015 });
      await result;
      assert.equal(third.requests.length, 0);
      assert.deepEqual(
        seen.list.filter(([kind]) => kind === "finish_fallback").map(([, data]) => data),
        ["skills", "next_actions"].map((step) => ({
          step,
          reason: "the finish cost cap of $0.0015 is reached ($0.0020 spent)",
        })),
      );
    },
  );

  await t.step(
    "no model step runs without a backend, with a cap of 0, or when told to skip it",
    async () => {
      for (
        const [extra, reason] of [
          [{ backend: undefined }, "no model backend"],
          [{ maxCostUsd: 0 }, "finish.maxCostUsd is 0"],
          [{ skipModel: "the run was interrupted" }, "the run was interrupted"],
        ] as const
      ) {
        await using f = await fixture();
        const backend = new ReplyingBackend(good);
        const { seen, result } = finish(f, backend, extra);
        assert.deepEqual((await result).ran, [...FINISH_STEPS]);
        assert.equal(backend.requests.length, 0, reason);
        const reasons = seen.list.filter(([kind]) => kind === "finish_fallback")
          .map(([, data]) => data.reason);
        assert.deepEqual(reasons, Array(4).fill(reason));
      }
    },
  );
});
