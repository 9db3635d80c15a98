import assert from "node:assert/strict";
import { type HandlerContext, NO_TASK_TEXT } from "../../agents/completion/base_handler.ts";
import { IterateCompletionHandler } from "../../agents/completion/iterate.ts";
import { ManualCompletionHandler } from "../../agents/completion/manual.ts";
import type { CompletionHandler } from "../../agents/completion/handler_contract.ts";
import type { IterationSummary } from "../../agents/record/iteration.ts";
import { PromptResolver } from "../../agents/prompts/resolver.ts";
import { SummaryBuilder } from "../../agents/loop/summary_builder.ts";
import { type AgentMessage, emptySummary } from "../../agents/record/iteration.ts";
import { assertSays, definitionOf } from "./_helpers.ts";
import { mockPromptResolver } from "../../agents/testing/mod.ts";

const KEYWORD = "ALL DONE";

/** A context over the built-in templates (the agent folder does not exist). */
async function contextOf(
  args: Record<string, unknown> = { task: "Fix the flaky date test" },
  maxIterations = 3,
): Promise<HandlerContext> {
  const resolver = await PromptResolver.create({
    agentDir: new URL("file:///nonexistent/finishline-agent/"),
  });
  const definition = definitionOf({
    name: "demo",
    behavior: { completionConfig: { maxIterations } },
  });
  return { definition, args, resolver, maxIterations };
}

/** A summary of a finished iteration whose last message is `text`. */
function finished(iteration: number, text: string): IterationSummary {
  return {
    ...emptySummary(iteration),
    assistantResponses: ["Looking at the failing test.", text],
    toolsUsed: ["Bash", "Edit", "Bash"],
    turns: 4,
    stopReason: "end_turn",
  };
}

// --- Claude Agent SDK shaped messages for one iteration --------------------

function init(session: string): AgentMessage {
  return {
    type: "system",
    subtype: "init",
    session_id: session,
    cwd: "/repo",
    model: "claude-sonnet-4-5",
    tools: ["Bash", "Read", "Edit"],
    permissionMode: "acceptEdits",
  };
}

function say(session: string, ...texts: string[]): AgentMessage {
  return {
    type: "assistant",
    session_id: session,
    parent_tool_use_id: null,
    message: {
      role: "assistant",
      content: texts.map((text) => ({ type: "text", text })),
    },
  };
}

function bash(session: string, id: string, command: string): AgentMessage {
  return {
    type: "assistant",
    session_id: session,
    parent_tool_use_id: null,
    message: {
      role: "assistant",
      content: [{ type: "tool_use", id, name: "Bash", input: { command } }],
    },
  };
}

function toolResult(session: string, id: string, output: string): AgentMessage {
  return {
    type: "user",
    session_id: session,
    parent_tool_use_id: null,
    message: {
      role: "user",
      content: [{ type: "tool_result", tool_use_id: id, content: output }],
    },
  };
}

function subagentSays(session: string, text: string): AgentMessage {
  return { ...say(session, text), parent_tool_use_id: "toolu_task_1" };
}

function result(session: string): AgentMessage {
  return {
    type: "result",
    subtype: "success",
    session_id: session,
    is_error: false,
    num_turns: 3,
    stop_reason: "end_turn",
    total_cost_usd: 0.02,
    usage: { input_tokens: 100, output_tokens: 40 },
  };
}

/** Runs a handler over scripted iterations the way the loop does. */
async function firstCompleteIteration(
  handler: CompletionHandler,
  iterations: AgentMessage[][],
): Promise<number | undefined> {
  for (const [index, messages] of iterations.entries()) {
    const builder = new SummaryBuilder(index + 1);
    for (const message of messages) builder.add(message);
    if (await handler.isComplete(builder.finish(1000))) return index + 1;
  }
  return undefined;
}

Deno.test("iterate handler completes exactly at its target iteration", async (t) => {
  for (const target of [1, 3, 10]) {
    await t.step(`target ${target}`, async () => {
      const handler = new IterateCompletionHandler(
        await contextOf({}, target),
        target,
      );
      for (let iteration = 1; iteration <= target + 1; iteration++) {
        assert.equal(
          await handler.isComplete(emptySummary(iteration)),
          iteration >= target,
          `iteration ${iteration} of target ${target}`,
        );
      }
    });
  }
});

Deno.test("iterate handler decides from the summary's iteration alone", async (t) => {
  await t.step(
    "building a later prompt does not complete an earlier summary",
    async () => {
      const handler = new IterateCompletionHandler(await contextOf(), 3);
      await handler.buildContinuationPrompt(5, [finished(4, "Done.")]);
      assert.equal(await handler.isComplete(emptySummary(2)), false);
    },
  );

  await t.step(
    "a handler that built no prompt completes at the target",
    async () => {
      const handler = new IterateCompletionHandler(await contextOf(), 3);
      assert.equal(await handler.isComplete(emptySummary(3)), true);
    },
  );

  await t.step("asking twice gives the same answer", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 3);
    assert.equal(await handler.isComplete(emptySummary(2)), false);
    assert.equal(await handler.isComplete(emptySummary(2)), false);
    assert.equal(await handler.isComplete(emptySummary(3)), true);
    assert.equal(await handler.isComplete(emptySummary(3)), true);
  });

  await t.step("what the agent said does not matter", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 3);
    assert.equal(
      await handler.isComplete(finished(1, "Everything is done. ALL DONE")),
      false,
    );
  });

  await t.step("the target, not the run's cap, decides", async () => {
    const handler = new IterateCompletionHandler(await contextOf({}, 10), 2);
    assert.equal(await handler.isComplete(emptySummary(2)), true);
  });
});

Deno.test("iterate handler's prompts carry the task, the count and the previous summary", async (t) => {
  await t.step("the initial prompt holds the task and the target", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 3);
    const prompt = await handler.buildInitialPrompt({
      task: "Fix the flaky date test",
    });
    assert.match(prompt, /^# Task\n\nFix the flaky date test\n/);
    assertSays(prompt, "This run has 3 iterations; this is iteration 1.");
  });

  await t.step(
    "the initial prompt uses the arguments it is given",
    async () => {
      const handler = new IterateCompletionHandler(
        await contextOf({ task: "old" }),
        3,
      );
      const prompt = await handler.buildInitialPrompt({ task: "new task" });
      assert.match(prompt, /new task/);
      assert.doesNotMatch(prompt, /old/);
    },
  );

  await t.step("without a task the prompt says so", async () => {
    for (const args of [{}, { task: "   " }]) {
      const handler = new IterateCompletionHandler(await contextOf(args), 3);
      assert.ok(
        (await handler.buildInitialPrompt(args)).includes(NO_TASK_TEXT),
      );
      assert.ok(
        (await handler.buildContinuationPrompt(2, [])).includes(NO_TASK_TEXT),
      );
    }
  });

  await t.step(
    "the continuation prompt holds the task, the count and the previous summary",
    async () => {
      const handler = new IterateCompletionHandler(await contextOf(), 3);
      const prompt = await handler.buildContinuationPrompt(2, [
        finished(1, "Fixed the parser; the date test still fails."),
      ]);
      assert.match(prompt, /Fix the flaky date test/);
      assertSays(prompt, "This is iteration 2 of 3 (1 left after this one)");
      assert.match(prompt, /### Iteration 1\n/);
      assert.match(prompt, /- Tools: Bash×2, Edit; turns: 4; stop: end_turn/);
      assert.match(
        prompt,
        /- Last message: Fixed the parser; the date test still fails\./,
      );
    },
  );

  await t.step("the last iteration has none left", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 3);
    assertSays(
      await handler.buildContinuationPrompt(3, [finished(2, "ok")]),
      "This is iteration 3 of 3 (0 left after this one)",
    );
  });

  await t.step("only the last three iterations are summarised", async () => {
    const handler = new IterateCompletionHandler(await contextOf({}, 9), 9);
    const summaries = [1, 2, 3, 4, 5].map((n) => finished(n, `step ${n}`));
    const prompt = await handler.buildContinuationPrompt(6, summaries);
    for (const n of [3, 4, 5]) assert.match(prompt, new RegExp(`step ${n}`));
    for (const n of [1, 2]) {
      assert.doesNotMatch(prompt, new RegExp(`### Iteration ${n}\\n`));
    }
  });

  await t.step("criteria and description name the target", async () => {
    const handler = new IterateCompletionHandler(await contextOf(), 3);
    assert.equal(handler.type, "iterate");
    const criteria = handler.buildCompletionCriteria();
    assert.equal(criteria.short, "3 iterations");
    assertSays(criteria.detailed, "runs for 3 iterations");
    assert.equal(
      await handler.getCompletionDescription(emptySummary(3)),
      "Completed 3/3 iterations",
    );
  });
});

Deno.test("manual handler completes in the iteration whose response holds the keyword", async (t) => {
  const quiet = [
    init("s1"),
    say("s1", "The date test fails on leap years."),
    bash("s1", "toolu_1", "deno test"),
    toolResult("s1", "toolu_1", "FAILED | 1 failed"),
    result("s1"),
  ];

  await t.step(
    "keyword in iteration 2: complete after 2, not after 1",
    async () => {
      const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
      const loud = [
        init("s2"),
        bash("s2", "toolu_2", "deno test"),
        toolResult("s2", "toolu_2", "ok | 12 passed"),
        say("s2", `Every test passes now. ${KEYWORD}`),
        result("s2"),
      ];
      assert.equal(await firstCompleteIteration(handler, [quiet, loud]), 2);
      assert.equal(await firstCompleteIteration(handler, [quiet]), undefined);
    },
  );

  await t.step("keyword in iteration 1: complete after 1", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
    assert.equal(
      await firstCompleteIteration(handler, [[say("s", KEYWORD)], quiet]),
      1,
    );
  });

  await t.step(
    "keyword in an earlier text block of the iteration",
    async () => {
      const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
      const messages = [
        say("s", `Done: ${KEYWORD}`, "Here is what changed."),
        result("s"),
      ];
      assert.equal(await firstCompleteIteration(handler, [messages]), 1);
    },
  );

  await t.step(
    "keyword only in a tool call, a tool result or a subagent does not complete",
    async () => {
      const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
      const messages = [
        bash("s", "toolu_3", `echo "${KEYWORD}"`),
        toolResult("s", "toolu_3", KEYWORD),
        subagentSays("s", `Subtask finished. ${KEYWORD}`),
        say("s", "Still working on the leap year case."),
        result("s"),
      ];
      assert.equal(
        await firstCompleteIteration(handler, [messages]),
        undefined,
      );
    },
  );

  await t.step("the keyword is matched case-sensitively", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
    assert.equal(
      await handler.isComplete({
        ...emptySummary(1),
        assistantResponses: ["We are all done here"],
      }),
      false,
    );
  });

  await t.step(
    "a keyword split across text blocks does not count",
    async () => {
      const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
      assert.equal(
        await handler.isComplete({
          ...emptySummary(1),
          assistantResponses: ["ALL", "DONE"],
        }),
        false,
      );
    },
  );
});

Deno.test("manual handler's prompts carry the task, the keyword and the previous summary", async (t) => {
  await t.step("the initial prompt", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
    const prompt = await handler.buildInitialPrompt({
      task: "Fix the flaky date test",
    });
    assert.match(prompt, /^# Task\n\nFix the flaky date test\n/);
    assertSays(prompt, "say the completion keyword `ALL DONE`");
    assertSays(prompt, "up to 3 iterations");
  });

  await t.step("the continuation prompt", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
    const prompt = await handler.buildContinuationPrompt(2, [
      {
        ...finished(1, "Leap years handled; one test left."),
        errors: ["Bash: exit code 1"],
        completeTask: {
          status: "partial",
          original_request_summary: "Fix the flaky date test",
          summary: "Leap years handled",
        },
      },
    ]);
    assertSays(prompt, "iteration 2 of at most 3");
    assert.match(prompt, /Fix the flaky date test/);
    assertSays(
      prompt,
      "You have not said the completion keyword `ALL DONE` yet",
    );
    assertSays(prompt, "Say `ALL DONE` only when the task is completely done");
    assert.match(prompt, /- Last message: Leap years handled; one test left\./);
    assert.match(prompt, /- complete_task: partial: Leap years handled/);
    assert.match(prompt, /- Errors: Bash: exit code 1/);
  });

  await t.step("the first continuation says there is no history", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
    assert.match(
      await handler.buildContinuationPrompt(2, []),
      /\(no earlier iterations\)/,
    );
  });

  await t.step("a keyword with template syntax is inserted as is", async () => {
    const handler = new ManualCompletionHandler(
      await contextOf(),
      "{uv-task} $& DONE",
    );
    const prompt = await handler.buildInitialPrompt({ task: "t" });
    assert.ok(prompt.includes("`{uv-task} $& DONE`"), prompt);
  });

  await t.step("criteria and description name the keyword", async () => {
    const handler = new ManualCompletionHandler(await contextOf(), KEYWORD);
    assert.equal(handler.type, "manual");
    const criteria = handler.buildCompletionCriteria();
    assert.equal(criteria.short, 'say "ALL DONE" when done');
    assertSays(criteria.detailed, 'say "ALL DONE" in your final message');
    assert.equal(
      await handler.getCompletionDescription(emptySummary(2)),
      'Completion keyword "ALL DONE" said in iteration 2',
    );
  });
});

Deno.test("manual handler refuses a blank keyword", async (t) => {
  for (const keyword of ["", "   ", "\n"]) {
    await t.step(JSON.stringify(keyword), async () => {
      const context = await contextOf();
      assert.throws(
        () => new ManualCompletionHandler(context, keyword),
        RangeError,
      );
    });
  }
});

// --- the design's constructor shapes -----------------------------------------

Deno.test("iterate handler in the design's shape counts the continuation prompts", async (t) => {
  const handler = () =>
    new IterateCompletionHandler({ maxIterations: 3, promptResolver: mockPromptResolver });

  await t.step("the prompts ask for the design's keys with its variables", async () => {
    const first = await handler().buildInitialPrompt({ task: "Tidy the README" });
    assert.equal(first.split("\n")[0], "initial_iterate");
    const variables = JSON.parse(first.split("\n")[1]);
    assert.equal(variables["uv-max_iterations"], 3);
    assert.equal(variables["uv-task"], "Tidy the README");
    const next = JSON.parse((await handler().buildContinuationPrompt(2, [])).split("\n")[1]);
    assert.deepEqual(
      [next["uv-iteration"], next["uv-max_iterations"], next["uv-remaining"]],
      [2, 3, 1],
    );
  });

  await t.step("a summary of a later iteration counts too", async () => {
    assert.equal(await handler().isComplete(emptySummary(3)), true);
    assert.equal(await handler().isComplete(emptySummary(2)), false);
  });

  await t.step("the description says how many ran", async () => {
    const counted = handler();
    await counted.buildContinuationPrompt(3, []);
    assert.equal(
      await counted.getCompletionDescription(emptySummary(1)),
      "Completed 3/3 iterations",
    );
    assert.equal(counted.buildCompletionCriteria().short, "3 iterations");
  });

  await t.step("a PromptResolver on the built-in templates works as the design's", async () => {
    const promptResolver = await PromptResolver.create({
      agentDir: new URL("file:///nonexistent/finishline-agent/"),
    });
    const real = new IterateCompletionHandler({ maxIterations: 3, promptResolver });
    assertSays(
      await real.buildContinuationPrompt(2, [finished(1, "Split the module.")]),
      "This is iteration 2 of 3 (1 left after this one)",
    );
  });
});

Deno.test("manual handler in the design's shape completes on its keyword", async (t) => {
  const handler = new ManualCompletionHandler({
    completionKeyword: KEYWORD,
    promptResolver: mockPromptResolver,
  });

  await t.step("not before the keyword is said", async () => {
    assert.equal(await handler.isComplete(finished(1, "Still writing.")), false);
  });

  await t.step("in the iteration that says it", async () => {
    assert.equal(await handler.isComplete(finished(2, `Written. ${KEYWORD}`)), true);
    assert.equal(
      await handler.getCompletionDescription(finished(2, KEYWORD)),
      `Completion keyword "${KEYWORD}" said in iteration 2`,
    );
  });

  await t.step("its prompts carry the keyword", async () => {
    const prompt = await handler.buildContinuationPrompt(2, []);
    assert.equal(prompt.split("\n")[0], "continuation_manual");
    assert.equal(JSON.parse(prompt.split("\n")[1])["uv-completion_keyword"], KEYWORD);
  });

  await t.step("a blank keyword is refused", () => {
    assert.throws(
      () =>
        new ManualCompletionHandler({ completionKeyword: " ", promptResolver: mockPromptResolver }),
      RangeError,
    );
  });
});
