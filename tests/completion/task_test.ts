import assert from "node:assert/strict";
import { createCompletionHandler } from "../../agents/completion/factory.ts";
import { TaskCompletionHandler, taskKind } from "../../agents/completion/task.ts";
import type { CompletionType } from "../../agents/definition/definition_types.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { definitionOf } from "./_helpers.ts";

const NOWHERE = new URL("file:///nonexistent/finishline-agent/");

async function taskHandler(task: string): Promise<TaskCompletionHandler> {
  const base = definitionOf({ name: "demo", behavior: { completionConfig: { maxIterations: 4 } } });
  const definition = {
    ...base,
    behavior: { ...base.behavior, completionType: "task" as CompletionType },
  };
  const handler = await createCompletionHandler(definition, { task }, { agentDir: NOWHERE });
  assert.ok(handler instanceof TaskCompletionHandler);
  return handler;
}

Deno.test("task handler completes only in the iteration whose complete_task says success", async (t) => {
  const handler = await taskHandler("Fix the failing add test");
  await t.step("no call", async () => {
    assert.equal(await handler.isComplete(emptySummary(1)), false);
  });
  for (const status of ["partial", "blocked"] as const) {
    await t.step(`a ${status} call`, async () => {
      const summary = { ...emptySummary(2), completeTask: { status, summary: "x" } } as never;
      assert.equal(await handler.isComplete(summary), false);
    });
  }
  await t.step("a success call, whatever the iteration", async () => {
    const summary = { ...emptySummary(1), completeTask: { status: "success", summary: "Fixed" } };
    assert.equal(await handler.isComplete(summary as never), true);
    assert.equal(
      await handler.getCompletionDescription(summary as never),
      "Task done and verified in iteration 1: Fixed",
    );
  });
});

Deno.test("task handler's prompts carry the task and the cap, and ask for complete_task", async () => {
  const handler = await taskHandler("Fix the failing add test");
  const first = await handler.buildInitialPrompt({ task: "Fix the failing add test" });
  assert.match(first, /Fix the failing add test/);
  assert.match(first, /at most 4/);
  assert.match(first, /complete_task tool with\s+status success/);
  assert.doesNotMatch(first, /This run has 4 iterations/);
  const next = await handler.buildContinuationPrompt(2, [emptySummary(1)]);
  assert.match(next, /iteration 2 of at most 4/);
  assert.match(next, /### Iteration 1/);
  assert.match(handler.buildCompletionCriteria().detailed, /checks/);
});

Deno.test("a task's kind decides whether a held-out test is written", async (t) => {
  const cases: [string, string][] = [
    ["Fix the failing add test", "bug"],
    ["parse() crashes on empty input", "bug"],
    ["Add a greet() module with a test", "feature"],
    ["Support --verbose in the CLI", "feature"],
    ["Tidy the README", "other"],
    ["Fix typos in the docs", "other"],
    ["Refactor the parser into two files", "other"],
    ["Look around", "other"],
  ];
  for (const [task, kind] of cases) {
    await t.step(task, () => assert.equal(taskKind(task), kind));
  }
  assert.equal((await taskHandler("Tidy the README")).kind, "other");
});
