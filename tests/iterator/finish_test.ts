import assert from "node:assert/strict";
import { join } from "node:path";
import type { AgentBackend, SessionRequest } from "../../agents/common/backends/types.ts";
import type { CompleteTaskCall, IterationSummary } from "../../agents/common/completion/types.ts";
import { Redactor } from "../../agents/common/redact.ts";
import { type RunStore, SqliteStore, type StoredRun } from "../../agents/common/store/mod.ts";
import { type AgentMessage, emptySummary } from "../../agents/common/summary.ts";
import { EXTRACT_MARKER } from "../../agents/common/learnings.ts";
import { assessSkills, FINISH_STEPS, runFinish, runSummary } from "../../agents/iterator/finish.ts";
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

/** A backend replying with one text, recording each request. */
class ReplyingBackend implements AgentBackend {
  readonly name = "fake";
  readonly requests: SessionRequest[] = [];
  #reply: string | Error;

  constructor(reply: string | Error) {
    this.#reply = reply;
  }

  async *session(request: SessionRequest): AsyncIterable<AgentMessage> {
    this.requests.push(request);
    yield { type: "system", subtype: "init", session_id: "extract-session" };
    if (this.#reply instanceof Error) throw this.#reply;
    yield {
      type: "assistant",
      session_id: "extract-session",
      parent_tool_use_id: null,
      message: { content: [{ type: "text", text: this.#reply }] },
    };
    yield {
      type: "result",
      subtype: "success",
      session_id: "extract-session",
      total_cost_usd: 0,
      num_turns: 1,
      usage: {},
    };
  }
}

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
      assert.deepEqual(FINISH_STEPS, ["summary", "learnings", "skills", "persist", "cleanup"]);
      assert.deepEqual(result, { steps: [...FINISH_STEPS], ran: [...FINISH_STEPS] });
      assert.deepEqual(seen.list, FINISH_STEPS.map((step) => ["finish_step", { step }]));
      // Cleanup runs last: the earlier steps are checkpointed and the outcome persisted.
      assert.deepEqual(stepsAtCleanup, [["summary", "learnings", "skills", "persist"]]);
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
      assert.deepEqual(f.store.skills(RUN_ID), [
        { name: "deno-testing", kind: "used", status: "used" },
        { name: "git-bisect", kind: "used", status: "used" },
        { name: "ci-config", kind: "needed", status: "placeholder" },
        { name: "timezone-audit", kind: "needed", status: "placeholder" },
      ]);
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
    assert.deepEqual(seen.list, []);
    assert.equal(f.store.getRun(RUN_ID)?.status, "completed");
    assert.equal(f.store.getRun(RUN_ID)?.endedAt, endedAt);
  });

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
      assert.deepEqual(second, { steps: [...FINISH_STEPS], ran: ["skills", "persist", "cleanup"] });
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
        nextSteps: "Watch the next CI runs",
      });
    },
  );

  await t.step("a partial last report gives its remaining work", () => {
    const summaries = twoIterations().slice(0, 1);
    const summary = runSummary(run, summaries, { status: "failed", reason: "cap" });
    assert.equal(summary.remainingWork, "Pin the timezone in CI");
    assert.equal(summary.nextSteps, "Pin it in CI");
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
      assert.equal(summary.nextSteps, null);
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
  await t.step("lists used skills, then needed ones as placeholders, each once", () => {
    assert.deepEqual(assessSkills(twoIterations()), [
      { name: "deno-testing", kind: "used", status: "used" },
      { name: "git-bisect", kind: "used", status: "used" },
      { name: "ci-config", kind: "needed", status: "placeholder" },
      { name: "timezone-audit", kind: "needed", status: "placeholder" },
    ]);
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

Deno.test("learning extraction", async (t) => {
  await t.step(
    "a JSON array reply is stored with source extracted, from a tool-less session",
    async () => {
      await using f = await fixture();
      const backend = new ReplyingBackend(
        'Here you go:\n[{"learning": "Pin TZ in CI workflows", "tool_or_technique": "env pinning", ' +
          '"applicability": "date-dependent tests", "tags": ["ci", "timezone"]}]',
      );
      const result = await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "completed", reason: "done" },
        extractLearnings: true,
        backend,
        model: "claude-haiku-4-5",
      });
      assert.equal(result.failed, undefined);
      assert.equal(backend.requests.length, 1);
      const request = backend.requests[0];
      assert.deepEqual(request.tools, []);
      assert.deepEqual(request.allowedTools, []);
      assert.equal(request.maxTurns, 1);
      assert.equal(request.model, "claude-haiku-4-5");
      assert.equal(request.cwd, "/repo");
      assert.ok(request.prompt.includes(EXTRACT_MARKER));
      assert.ok(
        request.prompt.includes("Iteration 1: Found the cause: the timezone is not pinned"),
      );
      assert.ok(request.prompt.includes("Iteration 2: Pinned TZ=UTC in the CI workflow"));

      const found = f.store.searchLearnings("workflows");
      assert.equal(found.length, 1);
      assert.equal(found[0].text, "Pin TZ in CI workflows");
      assert.equal(found[0].source, "extracted");
      assert.equal(found[0].technique, "env pinning");
      assert.equal(found[0].applicability, "date-dependent tests");
      assert.deepEqual(found[0].tags, ["ci", "timezone"]);
      // The agent's own learnings are kept beside the extracted ones.
      assert.deepEqual(
        f.store.searchLearnings("depend default workflows").map((learning) => learning.source)
          .sort(),
        ["agent", "agent", "extracted"],
      );
    },
  );

  await t.step(
    "the prompt carries each iteration's errors and the session's cwd option",
    async () => {
      await using f = await fixture([
        iterationSummary(1, {
          assistantResponses: ["Tried the build"],
          errors: ["Bash: exit 1", "Bash: exit 2", "Bash: cannot find module"],
        }),
      ]);
      const backend = new ReplyingBackend("[]");
      await runFinish({
        store: f.store,
        runId: RUN_ID,
        outcome: { status: "failed", reason: "cap" },
        extractLearnings: true,
        backend,
        cwd: "/worktree",
      });
      const request = backend.requests[0];
      assert.ok(
        request.prompt.includes(
          "Iteration 1: Tried the build (errors: Bash: exit 2; Bash: cannot find module)",
        ),
        request.prompt,
      );
      assert.equal(request.cwd, "/worktree");
    },
  );

  await t.step("a garbage reply stores nothing and the workflow still completes", async () => {
    await using f = await fixture();
    const seen = events();
    const result = await runFinish({
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "completed", reason: "done" },
      extractLearnings: true,
      backend: new ReplyingBackend("I could not find anything noteworthy, sorry."),
      onEvent: seen.onEvent,
    });
    assert.deepEqual(result, { steps: [...FINISH_STEPS], ran: [...FINISH_STEPS] });
    assert.ok(seen.list.some(([kind]) => kind === "learnings_extraction_skipped"));
    const learnings = f.store.searchLearnings("fixer");
    assert.ok(learnings.length > 0);
    assert.ok(learnings.every((learning) => learning.source === "agent"));
  });

  await t.step("an empty array reply is no warning", async () => {
    await using f = await fixture();
    const seen = events();
    await runFinish({
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "completed", reason: "done" },
      extractLearnings: true,
      backend: new ReplyingBackend(" [ ] "),
      onEvent: seen.onEvent,
    });
    assert.ok(!seen.list.some(([kind]) => kind.startsWith("learnings_extraction")));
  });

  await t.step("a backend that throws does not fail the workflow", async () => {
    await using f = await fixture();
    const seen = events();
    const backend = new ReplyingBackend(new Error("API overloaded\nretry later"));
    const result = await runFinish({
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "completed", reason: "done" },
      extractLearnings: true,
      backend,
      onEvent: seen.onEvent,
    });
    assert.deepEqual(result, { steps: [...FINISH_STEPS], ran: [...FINISH_STEPS] });
    assert.equal(backend.requests.length, 1);
    assert.deepEqual(seen.list.find(([kind]) => kind === "learnings_extraction_failed"), [
      "learnings_extraction_failed",
      { error: "API overloaded" },
    ]);
    assert.equal(f.store.searchLearnings("fixer").length, 2);
  });

  await t.step("no session is started unless extraction is asked for", async () => {
    await using f = await fixture();
    const backend = new ReplyingBackend("[]");
    await runFinish({
      store: f.store,
      runId: RUN_ID,
      outcome: { status: "completed", reason: "done" },
      backend,
    });
    assert.equal(backend.requests.length, 0);
  });
});
