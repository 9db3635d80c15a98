/**
 * What the finish tool's answer reads about the run's end: the built-in
 * handlers whose answer follows from the iteration so far are read, every
 * other handler is left to decide once, at the iteration's end, and is never
 * asked during it.
 */

import assert from "node:assert/strict";
import {
  type CompletionHandler,
  emptySummary,
  IterateCompletionHandler,
  ManualCompletionHandler,
} from "../../agents/mod.ts";
import { TaskCompletionHandler } from "../../agents/completion/task.ts";
import { parseDefinition } from "../../agents/definition/parse.ts";
import { handlerOutlook } from "../../agents/loop/run_outlook.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { mockPromptResolver } from "../../agents/testing/mod.ts";

const definition = parseDefinition(
  '{ "name": "fix", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
  { displayPath: "agent.json" },
);
const success = {
  status: "success" as const,
  original_request_summary: "Fix it",
  summary: "Fixed it",
};
const claimed = (iteration: number): IterationSummary => ({
  ...emptySummary(iteration),
  completeTask: success,
});

Deno.test("the built-in handlers that read the summary alone are read", async (t) => {
  await t.step("task: a success claim completes", async () => {
    const handler = new TaskCompletionHandler({
      definition,
      args: { task: "Fix it" },
      resolver: mockPromptResolver,
      maxIterations: 3,
    });
    assert.equal(await handlerOutlook(handler, definition, claimed(1)), true);
  });

  await t.step("manual: the keyword said so far, or not yet", async () => {
    const handler = new ManualCompletionHandler({
      completionKeyword: "SHIPPED",
      promptResolver: mockPromptResolver,
    });
    assert.equal(await handlerOutlook(handler, definition, claimed(1)), false);
    const said = { ...claimed(1), assistantResponses: ["Done. SHIPPED"] };
    assert.equal(await handlerOutlook(handler, definition, said), true);
  });

  await t.step("iterate: its count, whatever the claim", async () => {
    const handler = new IterateCompletionHandler({
      maxIterations: 3,
      promptResolver: mockPromptResolver,
    });
    assert.equal(await handlerOutlook(handler, definition, claimed(1)), false);
    assert.equal(await handlerOutlook(handler, definition, claimed(3)), true);
  });
});

Deno.test("the issue handler is read only when the runner closes the issue", async () => {
  const issue = { type: "issue", isComplete: () => Promise.reject(new Error("not asked")) };
  const runner = { github: { ...definition.github, closeIssue: "runner" as const } };
  const agent = { github: { ...definition.github, closeIssue: "agent" as const } };
  const handler = issue as unknown as CompletionHandler;
  assert.equal(await handlerOutlook(handler, runner, claimed(1)), true);
  assert.equal(await handlerOutlook(handler, agent, claimed(1)), undefined);
});

Deno.test("any other handler is not asked: it decides once, at the iteration's end", async () => {
  let asked = 0;
  // The handlers design's facilitator counts with += in isComplete.
  const counting = {
    type: "custom",
    isComplete: () => Promise.resolve(++asked > 0),
  } as unknown as CompletionHandler;
  assert.equal(await handlerOutlook(counting, definition, claimed(1)), undefined);
  class KeepsState extends ManualCompletionHandler {
    override isComplete(): Promise<boolean> {
      asked++;
      return Promise.resolve(true);
    }
  }
  const subclass = new KeepsState({ completionKeyword: "X", promptResolver: mockPromptResolver });
  assert.equal(await handlerOutlook(subclass, definition, claimed(1)), undefined);
  assert.equal(asked, 0);
});
