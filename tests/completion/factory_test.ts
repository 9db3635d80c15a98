import assert from "node:assert/strict";
import path from "node:path";
import type { AgentDefinition, CompletionType } from "../../agents/definition/definition_types.ts";
import {
  createCompletionHandler,
  DEFAULT_MAX_ITERATIONS,
  iterationCap,
} from "../../agents/completion/factory.ts";
import {
  getRegisteredHandler,
  registerCompletionHandler,
  registeredTypes,
  unregisterCompletionHandler,
} from "../../agents/completion/registry.ts";
import type { CompletionHandler } from "../../agents/completion/handler_contract.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { UsageError } from "../../agents/support/errors.ts";
import { definitionOf, dirUrl, usageErrorOf, withTempDir, write } from "./_helpers.ts";

const NOWHERE = new URL("file:///nonexistent/finishline-agent/");

function iterateDefinition(maxIterations = 4): AgentDefinition {
  return definitionOf({
    name: "demo",
    behavior: { completionConfig: { maxIterations } },
  });
}

/** A definition with another completion type and config, as after CLI overrides. */
function withType(
  type: string,
  completionConfig: Record<string, unknown> = {},
): AgentDefinition {
  const base = iterateDefinition();
  return {
    ...base,
    behavior: {
      ...base.behavior,
      completionType: type as CompletionType,
      completionConfig,
    },
  };
}

/** A handler a registered factory builds: completes once `goal` actions were seen. */
function countingHandler(goal: number): CompletionHandler {
  let seen = 0;
  return {
    type: "custom",
    buildInitialPrompt: () => Promise.resolve("Review the open pull requests."),
    buildContinuationPrompt: (iteration) =>
      Promise.resolve(`Continue reviewing (iteration ${iteration}).`),
    buildCompletionCriteria: () => ({
      short: `${goal} reviews`,
      detailed: `Post ${goal} reviews.`,
    }),
    isComplete: (summary) => {
      seen += summary.detectedActions.filter((a) => a.type === "review").length;
      return Promise.resolve(seen >= goal);
    },
    getCompletionDescription: () => Promise.resolve(`${seen} reviews posted`),
  };
}

Deno.test("factory builds the built-in handler the definition names", async (t) => {
  await t.step(
    "iterate, targeting completionConfig.maxIterations",
    async () => {
      const handler = await createCompletionHandler(iterateDefinition(4), {}, {
        agentDir: NOWHERE,
      });
      assert.equal(handler.type, "iterate");
      assert.equal(handler.buildCompletionCriteria().short, "4 iterations");
      assert.equal(await handler.isComplete(emptySummary(3)), false);
      assert.equal(await handler.isComplete(emptySummary(4)), true);
    },
  );

  await t.step(
    "iterate without maxIterations targets the run's cap",
    async () => {
      const handler = await createCompletionHandler(withType("iterate"), {}, {
        agentDir: NOWHERE,
        maxIterations: 2,
      });
      assert.equal(handler.buildCompletionCriteria().short, "2 iterations");
      assert.equal(await handler.isComplete(emptySummary(2)), true);
    },
  );

  await t.step("manual, with the configured keyword", async () => {
    const definition = definitionOf({
      name: "docs",
      behavior: {
        completionType: "manual",
        completionConfig: { completionKeyword: "DOCS_DONE" },
      },
    });
    const handler = await createCompletionHandler(definition, {}, {
      agentDir: NOWHERE,
    });
    assert.equal(handler.type, "manual");
    assert.equal(
      await handler.isComplete({
        ...emptySummary(1),
        assistantResponses: ["Docs rewritten. DOCS_DONE"],
      }),
      true,
    );
    assert.match(
      await handler.buildInitialPrompt({ task: "Rewrite the docs" }),
      /`DOCS_DONE`/,
    );
  });

  await t.step("the run's arguments reach the prompts", async () => {
    const handler = await createCompletionHandler(
      iterateDefinition(),
      { task: "Split the parser module" },
      { agentDir: NOWHERE },
    );
    assert.match(
      await handler.buildContinuationPrompt(2, []),
      /Split the parser module/,
    );
  });
});

Deno.test("factory refuses handlers it cannot build", async (t) => {
  await t.step("manual without a keyword", async () => {
    assert.equal(
      await usageErrorOf(() =>
        createCompletionHandler(withType("manual"), {}, { agentDir: NOWHERE })
      ),
      'Agent "demo": completionType "manual" needs "behavior.completionConfig.completionKeyword" or --keyword',
    );
  });

  await t.step("manual with a blank keyword", async () => {
    const message = await usageErrorOf(() =>
      createCompletionHandler(
        withType("manual", { completionKeyword: "   " }),
        {},
        { agentDir: NOWHERE },
      )
    );
    assert.match(message, /^Agent "demo": completionType "manual" needs/);
  });

  // A gh that cannot exist: a step that reaches gh fails with the missing-gh
  // error, so the number checks below prove they come before any gh call.
  const noGh = { agentDir: NOWHERE, github: { gh: "/nonexistent/gh" } };
  const numberCases: Array<[string, Record<string, unknown>]> = [
    ["no number", {}],
    ["number 0", { issue: 0, project: 0 }],
    ["number 1.5", { issue: 1.5, project: 1.5 }],
    ["a number as a string", { issue: "12", project: "3" }],
  ];
  for (const type of ["issue", "project"]) {
    for (const [label, args] of numberCases) {
      await t.step(`${type} with ${label} names --${type} N`, async () => {
        const message = await usageErrorOf(() =>
          createCompletionHandler(withType(type), args, noGh)
        );
        assert.match(
          message,
          new RegExp(`^Agent "demo" uses the "${type}" completion handler: pass --${type} N \\(`),
        );
      });
    }

    await t.step(`${type} without gh says how to install it`, async () => {
      const message = await usageErrorOf(() =>
        createCompletionHandler(withType(type), { issue: 12, project: 3 }, noGh)
      );
      assert.match(message, /^Cannot find the GitHub CLI "gh": install it /);
      assert.match(message, /"gh auth login"/);
    });
  }

  await t.step("an unknown type, listing the known ones", async () => {
    assert.equal(
      await usageErrorOf(() =>
        createCompletionHandler(withType("iterat"), {}, { agentDir: NOWHERE })
      ),
      'Unknown completion type "iterat" in "behavior.completionType": expected one of "issue", "project", "iterate", "manual", "custom", "task"',
    );
  });

  await t.step("an unknown type also lists registered types", async () => {
    registerCompletionHandler("review-bot", () => countingHandler(1));
    try {
      const message = await usageErrorOf(() =>
        createCompletionHandler(withType("review"), {}, { agentDir: NOWHERE })
      );
      assert.match(message, /"manual", "custom", "task", "review-bot"$/);
    } finally {
      unregisterCompletionHandler("review-bot");
    }
  });
});

Deno.test("factory uses a registered completion type", async () => {
  const calls: Array<[AgentDefinition, Record<string, unknown>]> = [];
  registerCompletionHandler("review-bot", (definition, args) => {
    calls.push([definition, args]);
    return countingHandler(Number(args.reviews));
  });
  try {
    const definition = withType("review-bot");
    const handler = await createCompletionHandler(definition, { reviews: 2 }, {
      agentDir: NOWHERE,
    });
    assert.equal(calls.length, 1);
    assert.equal(calls[0][0], definition);
    assert.deepEqual(calls[0][1], { reviews: 2 });
    const review = { type: "review", pr: 7 };
    assert.equal(
      await handler.isComplete({
        ...emptySummary(1),
        detectedActions: [review],
      }),
      false,
    );
    assert.equal(
      await handler.isComplete({
        ...emptySummary(2),
        detectedActions: [review],
      }),
      true,
    );
    assert.equal(
      await handler.getCompletionDescription(emptySummary(2)),
      "2 reviews posted",
    );
  } finally {
    unregisterCompletionHandler("review-bot");
  }
});

Deno.test("a registered factory gets the context and its handler is checked", async (t) => {
  await t.step("the third argument holds resolver, cap and folders", async () => {
    let seen: { maxIterations: number; cwd: string; resolve: unknown } | undefined;
    registerCompletionHandler("ctx-bot", (_definition, _args, context) => {
      seen = {
        maxIterations: context.maxIterations,
        cwd: context.cwd,
        resolve: context.resolver.resolve,
      };
      return countingHandler(1);
    });
    try {
      await createCompletionHandler(withType("ctx-bot"), {}, {
        agentDir: NOWHERE,
        cwd: "/tmp",
        maxIterations: 7,
      });
      assert.equal(seen?.maxIterations, 7);
      assert.equal(seen?.cwd, "/tmp");
      assert.equal(typeof seen?.resolve, "function");
    } finally {
      unregisterCompletionHandler("ctx-bot");
    }
  });
  await t.step("an object missing methods is a UsageError naming them", async () => {
    registerCompletionHandler("broken-bot", () => ({ type: "custom" }) as never);
    try {
      await assert.rejects(
        createCompletionHandler(withType("broken-bot"), {}, { agentDir: NOWHERE }),
        (error: Error) =>
          error instanceof UsageError &&
          /registered completion type "broken-bot"/.test(error.message) &&
          /isComplete\(\)/.test(error.message),
      );
    } finally {
      unregisterCompletionHandler("broken-bot");
    }
  });
});

Deno.test("factory builds its resolver from the definition when given none", async (t) => {
  await t.step(
    "templates come from the agent's registry under the given agent folder",
    async () => {
      await withTempDir(async (dir) => {
        await write(
          dir,
          "templates/registry.json",
          JSON.stringify({ prompts: { initial_iterate: "start.md" } }),
        );
        await write(dir, "templates/start.md", "Custom start: {uv-task}");
        const base = iterateDefinition();
        const definition = {
          ...base,
          prompts: { ...base.prompts, registry: "templates/registry.json" },
        };
        const handler = await createCompletionHandler(definition, {}, {
          agentDir: dirUrl(dir),
          cwd: dir,
        });
        assert.equal(
          await handler.buildInitialPrompt({ task: "lint" }),
          "Custom start: lint",
        );
      });
    },
  );

  await t.step(
    "the agent folder defaults to <cwd>/.agent/<name>/, whatever the cwd's characters",
    async () => {
      await withTempDir(async (dir) => {
        const cwd = path.join(dir, "repo #1 100%");
        await write(
          cwd,
          ".agent/demo/prompts/initial_iterate.md",
          "Agent folder template: {uv-task}",
        );
        const handler = await createCompletionHandler(iterateDefinition(), {}, {
          cwd,
        });
        assert.equal(
          await handler.buildInitialPrompt({ task: "lint" }),
          "Agent folder template: lint",
        );
      });
    },
  );
});

Deno.test("iterationCap is the definition's maxIterations, else the default", () => {
  assert.equal(iterationCap(iterateDefinition(7)), 7);
  assert.equal(
    iterationCap(withType("manual", { completionKeyword: "X" })),
    10,
  );
  assert.equal(DEFAULT_MAX_ITERATIONS, 10);
});

Deno.test("completion handler registry", async (t) => {
  for (const type of ["issue", "project", "iterate", "manual", "custom", "task"]) {
    await t.step(`refuses the built-in name "${type}"`, () => {
      assert.throws(
        () => registerCompletionHandler(type, () => countingHandler(1)),
        {
          name: "RangeError",
          message: `Cannot register completion type "${type}": it is built in`,
        },
      );
      assert.equal(getRegisteredHandler(type), undefined);
    });
  }

  for (const type of ["", "Review", "1st", "review_bot", "review bot", "-x"]) {
    await t.step(`refuses the bad name ${JSON.stringify(type)}`, () => {
      assert.throws(
        () => registerCompletionHandler(type, () => countingHandler(1)),
        {
          name: "RangeError",
          message: `Invalid completion type "${type}": expected ^[a-z][a-z0-9-]*$`,
        },
      );
      assert.equal(getRegisteredHandler(type), undefined);
    });
  }

  await t.step("registers, lists sorted and unregisters", () => {
    const factory = () => countingHandler(1);
    registerCompletionHandler("zeta-2", factory);
    registerCompletionHandler("alpha", factory);
    try {
      assert.equal(getRegisteredHandler("alpha"), factory);
      const listed = registeredTypes();
      assert.ok(listed.indexOf("alpha") < listed.indexOf("zeta-2"));
    } finally {
      assert.equal(unregisterCompletionHandler("alpha"), true);
      assert.equal(unregisterCompletionHandler("zeta-2"), true);
    }
    assert.equal(unregisterCompletionHandler("alpha"), false);
    assert.equal(getRegisteredHandler("alpha"), undefined);
    assert.ok(!registeredTypes().includes("alpha"));
  });

  await t.step("registering a type again replaces its factory", () => {
    const first = () => countingHandler(1);
    const second = () => countingHandler(2);
    registerCompletionHandler("again", first);
    try {
      registerCompletionHandler("again", second);
      assert.equal(getRegisteredHandler("again"), second);
    } finally {
      unregisterCompletionHandler("again");
    }
  });
});

Deno.test("the package's createCompletionHandler takes the handlers seed's two arguments: the agent folder is .agent/<name>/ of the working directory", async () => {
  await withTempDir(async (dir) => {
    await write(dir, ".agent/docs/prompts/initial_manual.md", "Say {uv-completion_keyword}.");
    const definition = definitionOf({
      name: "docs",
      behavior: { completionType: "manual", completionConfig: { completionKeyword: "DONE" } },
    });
    const cwd = Deno.cwd();
    Deno.chdir(dir);
    try {
      const handler = await createCompletionHandler(definition, {});
      assert.equal(handler.type, "manual");
      assert.equal(await handler.buildInitialPrompt({}), "Say DONE.");
    } finally {
      Deno.chdir(cwd);
    }
  });
});
