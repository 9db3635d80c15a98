// tests/completion/iterate_test.ts

import { assertEquals } from "../_std_assert.ts";
import { IterateCompletionHandler } from "../../agents/completion/iterate.ts";
import { mockPromptResolver, mockSummary } from "../../agents/testing/mod.ts";

Deno.test("IterateCompletionHandler - completes after max iterations", async () => {
  const handler = new IterateCompletionHandler({
    maxIterations: 3,
    promptResolver: mockPromptResolver,
  });

  // Simulate iterations
  await handler.buildContinuationPrompt(1, []);
  assertEquals(await handler.isComplete(mockSummary), false);

  await handler.buildContinuationPrompt(2, []);
  assertEquals(await handler.isComplete(mockSummary), false);

  await handler.buildContinuationPrompt(3, []);
  assertEquals(await handler.isComplete(mockSummary), true);
});
