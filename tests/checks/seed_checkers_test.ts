/**
 * The task completion checkers design's own checkers, translated to
 * TypeScript (`tests/fixtures/seed_checkers/`), against contexts built the
 * way the runner builds them; the design's own test comes first.
 */

import assert from "node:assert/strict";
import {
  CompositeChecker,
  incomplete,
  type ModelAdapter,
  ok,
  PlanChecker,
  TaskCompletionResult,
} from "@finishline/agents";
import type { AgentMessage } from "../../agents/record/iteration.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { checkerTestContext, InMemoryFilesystem } from "../../agents/testing/mod.ts";
import FileExistsChecker from "../fixtures/seed_checkers/file_exists.ts";
import TestPassingChecker from "../fixtures/seed_checkers/test_passing.ts";
import combined from "../fixtures/seed_checkers/combined.ts";
import LLMJudgeChecker from "../fixtures/seed_checkers/llm_judge.ts";

const DENO_FAILED = await Deno.readTextFile(
  new URL("../fixtures/test_output/deno.txt", import.meta.url),
);
const DENO_PASSED = "running 3 tests from ./math_test.ts\nok | 3 passed | 0 failed (12ms)\n";

/** The messages of a Bash call and its output, as the Agent SDK reports them. */
function bash(id: string, command: string, output: string): AgentMessage[] {
  return [
    {
      type: "assistant",
      message: { content: [{ type: "tool_use", id, name: "Bash", input: { command } }] },
    },
    {
      type: "user",
      message: { content: [{ type: "tool_result", tool_use_id: id, content: output }] },
    },
  ];
}

/** A context whose session holds these messages now, and these in earlier iterations. */
function withMessages(messages: AgentMessage[], earlier: AgentMessage[][] = []) {
  const context = checkerTestContext({ summary: emptySummary(earlier.length + 1) });
  return {
    ...context,
    session: {
      ...context.session,
      messages,
      previous: earlier.map((old, index) => ({ summary: emptySummary(index + 1), messages: old })),
    },
  };
}

/** A summary whose agent wrote this TodoWrite plan. */
function planned(iteration: number, todos: Array<[string, string]>) {
  return {
    ...emptySummary(iteration),
    toolCalls: [{
      name: "TodoWrite",
      input: {
        todos: todos.map(([content, status]) => ({ content, status, activeForm: content })),
      },
    }],
  };
}

Deno.test("test_checker_returns_incomplete_when_files_missing (the design's own test)", () => {
  const fs = new InMemoryFilesystem();

  const context = checkerTestContext({ filesystem: fs });

  const checker = new FileExistsChecker({ requiredFiles: ["output.txt"] });
  const result = checker.check(context);

  assert.equal(result.complete, false);
  assert.ok(result.feedback?.includes("output.txt"));
});

Deno.test("FileExistsChecker looks at the filesystem port", async (t) => {
  const checker = new FileExistsChecker({ requiredFiles: ["output.txt", "docs/report.md"] });

  await t.step("every file present", () => {
    const fs = new InMemoryFilesystem({ "output.txt": "42", "docs/report.md": "# Report" });
    assert.deepEqual(
      checker.check(checkerTestContext({ filesystem: fs })),
      TaskCompletionResult.ok("All required files exist."),
    );
  });

  await t.step("the missing ones are named", () => {
    const fs = new InMemoryFilesystem({ "output.txt": "42" });
    assert.deepEqual(
      checker.check(checkerTestContext({ filesystem: fs })),
      TaskCompletionResult.incomplete("Missing required files: docs/report.md"),
    );
  });

  await t.step("no filesystem, nothing to check", () => {
    assert.deepEqual(
      checker.check(checkerTestContext({ filesystem: undefined })),
      TaskCompletionResult.ok("No filesystem to check."),
    );
  });
});

Deno.test("TestPassingChecker reads the latest test run from the session", async (t) => {
  const checker = new TestPassingChecker();

  await t.step("no test run at all", () => {
    assert.deepEqual(
      checker.check(withMessages(bash("t1", "ls", "README.md"))),
      TaskCompletionResult.incomplete("No test results found. Please run the test suite."),
    );
  });

  await t.step("the latest run failed", () => {
    const messages = [
      ...bash("t1", "deno test", DENO_PASSED),
      ...bash("t2", "deno test -A", DENO_FAILED),
    ];
    assert.deepEqual(
      checker.check(withMessages(messages)),
      TaskCompletionResult.incomplete("2 tests failing. Fix before completing."),
    );
  });

  await t.step("the latest run passed", () => {
    const messages = [
      ...bash("t1", "deno test", DENO_FAILED),
      ...bash("t2", "deno test", DENO_PASSED),
    ];
    assert.deepEqual(
      checker.check(withMessages(messages)),
      TaskCompletionResult.ok("All 3 tests passing."),
    );
  });

  await t.step("an earlier iteration's run counts when this one ran none", () => {
    const context = withMessages(bash("t3", "git status", "clean"), [
      bash("t1", "deno test", DENO_FAILED),
      bash("t2", "deno test", DENO_PASSED),
    ]);
    assert.deepEqual(checker.check(context), TaskCompletionResult.ok("All 3 tests passing."));
  });
});

Deno.test("the design's results are immutable: ok() and incomplete() are frozen", () => {
  for (
    const result of [
      TaskCompletionResult.ok(),
      TaskCompletionResult.ok("All 3 tests passing."),
      TaskCompletionResult.incomplete("Missing required files: output.txt"),
    ]
  ) {
    assert.equal(Object.isFrozen(result), true);
    assert.throws(() => {
      (result as { feedback?: string }).feedback = "changed";
    }, TypeError);
  }
});

Deno.test("PlanBasedChecker(plan_type=Plan) is the package's PlanChecker, on the agent's TodoWrite plan", async (t) => {
  const checker = new PlanChecker({ plan_type: "TodoWrite" });

  await t.step("without a plan type it is a no-op", () => {
    const context = checkerTestContext({ summary: planned(1, [["Write tests", "pending"]]) });
    assert.deepEqual(new PlanChecker().check(context), TaskCompletionResult.ok());
    assert.equal(new PlanChecker().planType, undefined);
  });

  await t.step("no plan created, nothing to enforce", () => {
    assert.equal(checker.check(checkerTestContext()).complete, true);
  });

  await t.step("every step done passes", () => {
    const summary = planned(1, [["Write tests", "completed"]]);
    assert.equal(checker.check(checkerTestContext({ summary })).complete, true);
  });

  await t.step("open steps: how many, up to three titles, in the design's words", () => {
    const summary = planned(1, [
      ["Design the API", "completed"],
      ["Implement feature", "in_progress"],
      ["Write tests", "pending"],
      ["Update docs", "pending"],
      ["Release", "pending"],
    ]);
    const result = checker.check(checkerTestContext({ summary }));
    assert.deepEqual(
      result,
      TaskCompletionResult.incomplete(
        "You have 4 incomplete task(s) out of 5. Please either complete all remaining tasks or " +
          "update the plan to remove tasks that are no longer needed before producing output: " +
          "Implement feature, Write tests, Update docs...",
      ),
    );
    assert.equal(Object.isFrozen(result), true);
  });

  await t.step("the latest plan counts, from an earlier iteration too", () => {
    const previous = [
      planned(1, [["Write tests", "pending"]]),
      planned(2, [["Write tests", "completed"]]),
    ];
    const context = checkerTestContext({ summary: emptySummary(3), previous });
    assert.equal(checker.check(context).complete, true);
  });

  await t.step("a custom plan type: a plan of your own, whose steps are done", () => {
    // The design's PlanBasedChecker(plan_type=MyCustomPlan), steps with status "done".
    const steps = [
      { content: "Migrate users", status: "done" },
      { content: "Migrate orders", status: "todo" },
    ];
    const custom = new PlanChecker({ plan_type: () => steps });
    assert.deepEqual(
      custom.check(checkerTestContext()),
      TaskCompletionResult.incomplete(
        "You have 1 incomplete task(s) out of 2. Please either complete all remaining tasks or " +
          "update the plan to remove tasks that are no longer needed before producing output: " +
          "Migrate orders",
      ),
    );
    // `planType` is the same option in finishline's own spelling.
    assert.equal(new PlanChecker({ planType: () => undefined }).check({} as never).complete, true);
  });
});

Deno.test("CompositeChecker: all_must_pass returns the first failing checker's own result, its name in decidedBy", async (t) => {
  const failing = TaskCompletionResult.incomplete("2 tests failing. Fix before completing.");
  const composite = new CompositeChecker([
    { name: "plan", check: () => ok() },
    { name: "tests", check: () => failing },
    { name: "never", check: () => incomplete("not asked") },
  ]);

  await t.step("the failure as the checker returned it, not relabelled", async () => {
    const result = await composite.check(checkerTestContext());
    assert.deepEqual(result, { ...failing, decidedBy: "tests" });
    assert.equal(Object.isFrozen(result), true);
  });

  await t.step("any: short-circuits on the first success, returning it", async () => {
    const any = new CompositeChecker([
      { name: "plan", check: () => incomplete("2 open steps") },
      { name: "files", check: () => ok("All required files exist.") },
    ], { allMustPass: false });
    assert.deepEqual(await any.check(checkerTestContext()), {
      complete: true,
      feedback: "All required files exist.",
      decidedBy: "files",
    });
  });
});

Deno.test("the combined checker (Story 3) needs the plan and the tests", async () => {
  const open = checkerTestContext({ summary: planned(1, [["Write tests", "pending"]]) });
  const planFirst = await combined.check(open);
  assert.equal(planFirst.complete, false);
  assert.equal(planFirst.decidedBy, "plan");
  assert.match(planFirst.feedback ?? "", /^You have 1 incomplete task/);

  const done = withMessages(bash("t1", "deno test", DENO_FAILED));
  const plannedDone = {
    ...done,
    session: { ...done.session, summary: planned(1, [["Write tests", "completed"]]) },
  };
  const testsNext = await combined.check(plannedDone);
  assert.deepEqual(testsNext, {
    ...TaskCompletionResult.incomplete("2 tests failing. Fix before completing."),
    decidedBy: "TestPassingChecker",
  });

  const passing = withMessages(bash("t1", "deno test", DENO_PASSED));
  assert.equal((await combined.check(passing)).complete, true);
});

Deno.test("LLMJudgeChecker asks the adapter with the criteria and the tentative output", async (t) => {
  const criteria = "Verify the implementation is complete:\n1. The README documents --verbose";
  const checker = new LLMJudgeChecker({ criteria });
  const asking = (reply: string) => {
    const prompts: string[] = [];
    const adapter: ModelAdapter = {
      ask: (prompt) => {
        prompts.push(prompt);
        return Promise.resolve(reply);
      },
    };
    return { adapter, prompts };
  };
  const report = {
    status: "success" as const,
    original_request_summary: "Add --verbose",
    summary: "Added --verbose and its README section",
  };

  await t.step(
    "COMPLETE passes; the question holds the criteria, the report and the stop reason",
    async () => {
      const { adapter, prompts } = asking("COMPLETE");
      const context = checkerTestContext({
        adapter,
        completeTask: report,
        stopReason: "complete_task",
      });
      assert.deepEqual(
        await checker.check(context),
        TaskCompletionResult.ok("The judge found the criteria met."),
      );
      assert.match(prompts[0], /The README documents --verbose/);
      assert.match(prompts[0], /Added --verbose and its README section/);
      assert.match(prompts[0], /stopping because: complete_task/);
    },
  );

  await t.step("INCOMPLETE gives the judge's reason as feedback", async () => {
    const { adapter } = asking("INCOMPLETE: the README says nothing about --verbose");
    assert.deepEqual(
      await checker.check(checkerTestContext({ adapter })),
      TaskCompletionResult.incomplete("the README says nothing about --verbose"),
    );
  });

  await t.step("no adapter, nothing to ask", async () => {
    assert.deepEqual(
      await checker.check(checkerTestContext()),
      TaskCompletionResult.ok("No adapter to ask."),
    );
  });
});
