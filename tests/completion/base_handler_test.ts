import assert from "node:assert/strict";
import { type HandlerContext, verificationFeedback } from "../../agents/completion/base_handler.ts";
import { IterateCompletionHandler } from "../../agents/completion/iterate.ts";
import { ManualCompletionHandler } from "../../agents/completion/manual.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { PromptResolver } from "../../agents/prompts/resolver.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { assertSays, definitionOf, dirUrl, withTempDir, write } from "./_helpers.ts";

type Verification = NonNullable<IterationSummary["verification"]>;

/** A finished iteration whose latest verification is `verification`. */
function verified(
  iteration: number,
  verification: Partial<Verification> = {},
): IterationSummary {
  return {
    ...emptySummary(iteration),
    assistantResponses: ["Fixed the date parsing."],
    verification: {
      passed: false,
      checker: "tests",
      feedback: "deno task test exited with code 1: 2 failed",
      trigger: "complete_task",
      ...verification,
    },
  };
}

/** A context over the templates of `agentDir` (the built-in ones when it does not exist). */
async function contextOf(
  agentDir = new URL("file:///nonexistent/finishline-agent/"),
): Promise<HandlerContext> {
  const resolver = await PromptResolver.create({ agentDir });
  const definition = definitionOf({
    name: "demo",
    behavior: { completionConfig: { maxIterations: 5 } },
  });
  return { definition, args: { task: "Fix the date test" }, resolver, maxIterations: 5 };
}

Deno.test("verificationFeedback names the checker and its feedback only after a failed check", async (t) => {
  await t.step("a failed verification gives `checker: feedback`", () => {
    assert.equal(
      verificationFeedback(verified(1)),
      "tests: deno task test exited with code 1: 2 failed",
    );
  });

  await t.step("the trigger does not matter", () => {
    assert.equal(
      verificationFeedback(verified(1, { trigger: "handler", checker: "judge", feedback: "x" })),
      "judge: x",
    );
  });

  const none: Array<[string, IterationSummary | undefined]> = [
    ["no previous iteration", undefined],
    ["an iteration without verification", emptySummary(1)],
    ["a passed verification", verified(1, { passed: true, feedback: "all 3 checks passed" })],
    ["a failed verification without feedback", verified(1, { feedback: "" })],
  ];
  for (const [name, previous] of none) {
    await t.step(`${name} gives "(none)"`, () => {
      assert.equal(verificationFeedback(previous), "(none)");
    });
  }
});

Deno.test("a continuation prompt carries the previous iteration's failed verification", async (t) => {
  await t.step(
    "uv-verification_feedback is the last summary's feedback, not an older one",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "prompts/continuation_iterate.md",
          "Feedback: {uv-verification_feedback}",
        );
        const handler = new IterateCompletionHandler(await contextOf(dirUrl(dir)), 5);
        assert.equal(
          await handler.buildContinuationPrompt(2, [verified(1)]),
          "Feedback: tests: deno task test exited with code 1: 2 failed",
        );
        assert.equal(
          await handler.buildContinuationPrompt(3, [
            verified(1, { feedback: "old failure" }),
            verified(2, { checker: "git", feedback: "no new commits" }),
          ]),
          "Feedback: git: no new commits",
        );
        assert.equal(
          await handler.buildContinuationPrompt(3, [
            verified(1),
            verified(2, { passed: true, feedback: "all checks passed" }),
          ]),
          "Feedback: (none)",
        );
        assert.equal(await handler.buildContinuationPrompt(2, []), "Feedback: (none)");
      });
    },
  );

  await t.step("the built-in iterate continuation shows it under its heading", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 5);
    const text = await handler.buildContinuationPrompt(2, [verified(1)]);
    assert.match(
      text,
      /## Verification feedback from the last iteration\n\ntests: deno task test exited with code 1: 2 failed$/,
    );
  });

  await t.step("the built-in manual continuation shows it too", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), "ALL DONE");
    const text = await handler.buildContinuationPrompt(2, [
      verified(1, { checker: "files", feedback: 'missing "docs/index.md"' }),
    ]);
    assertSays(text, 'files: missing "docs/index.md"');
  });

  await t.step("after a passing iteration the built-in prompt says (none)", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 5);
    const text = await handler.buildContinuationPrompt(2, [
      verified(1, { passed: true, feedback: "all checks passed" }),
    ]);
    assert.match(text, /## Verification feedback from the last iteration\n\n\(none\)$/);
    assert.ok(!text.includes("all checks passed"), text);
  });
});
