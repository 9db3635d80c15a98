/**
 * The completion handlers design's "Factory" and "Custom Handler Example",
 * run as written (tests/fixtures/seed_handlers/): the factory builds
 * finishline's handlers in the design's constructor shapes, and loads the
 * design's facilitator handler from the agent folder. The design's factory
 * resolves paths against the working directory, so each step runs in a temp
 * repository folder.
 */

import assert from "node:assert/strict";
import type { AgentDefinition } from "../../agents/definition/definition_types.ts";
import { emptySummary } from "../../agents/record/iteration.ts";
import { UsageError } from "../../agents/support/errors.ts";
import { projectItemsReply, sampleProjectItems, standInGh } from "../../agents/testing/mod.ts";
import { createCompletionHandler } from "../fixtures/seed_handlers/factory.ts";
import { definitionOf, withTempDir, write } from "./_helpers.ts";

/** Runs `fn` in a temp folder as the working directory, with `gh` (when given) first on PATH. */
async function inTempCwd(fn: (dir: string) => Promise<void>, ghDir?: string): Promise<void> {
  await withTempDir(async (dir) => {
    const cwd = Deno.cwd();
    const path = Deno.env.get("PATH") ?? "";
    Deno.chdir(dir);
    if (ghDir) Deno.env.set("PATH", `${ghDir}:${path}`);
    try {
      await fn(dir);
    } finally {
      Deno.chdir(cwd);
      Deno.env.set("PATH", path);
    }
  });
}

Deno.test("the design's factory builds the handler its completionType names", async (t) => {
  await t.step("iterate, with the agent's own template", async () => {
    await inTempCwd(async (dir) => {
      await write(dir, ".agent/polish/prompts/continuation_iterate.md", "Round {uv-iteration}");
      const definition = definitionOf({
        name: "polish",
        behavior: { completionConfig: { maxIterations: 2 } },
      });
      const handler = await createCompletionHandler(definition, {});
      assert.equal(handler.type, "iterate");
      assert.equal(await handler.buildContinuationPrompt(2, [emptySummary(1)]), "Round 2");
      assert.equal(await handler.isComplete(emptySummary(1)), true);
    });
  });

  await t.step("manual", async () => {
    await inTempCwd(async () => {
      const definition = definitionOf({
        name: "docs",
        behavior: {
          completionType: "manual",
          completionConfig: { completionKeyword: "DOCS_DONE" },
        },
      });
      const handler = await createCompletionHandler(definition, {});
      assert.equal(handler.type, "manual");
      const said = { ...emptySummary(1), assistantResponses: ["Written. DOCS_DONE"] };
      assert.equal(await handler.isComplete(said), true);
    });
  });

  await t.step("issue, asking gh whether the issue is closed", async () => {
    await using gh = await standInGh('{"state": "CLOSED"}');
    await inTempCwd(async () => {
      const definition = definitionOf({ name: "fixer", behavior: { completionType: "issue" } });
      const handler = await createCompletionHandler(definition, { issue: 7 });
      assert.equal(handler.type, "issue");
      assert.equal(await handler.isComplete(emptySummary(1)), true);
    }, gh.dir);
    assert.deepEqual(await gh.calls(), ["issue view 7 --json state"]);
  });

  await t.step("issue without --issue", async () => {
    await inTempCwd(async () => {
      const definition = definitionOf({ name: "fixer", behavior: { completionType: "issue" } });
      await assert.rejects(
        createCompletionHandler(definition, {}),
        (error: unknown) =>
          error instanceof UsageError &&
          error.message === "--issue <number> is required for issue completion type",
      );
    });
  });

  await t.step("project, with the definition's labels", async () => {
    await using gh = await standInGh([
      { stdout: '{"nameWithOwner": "octo/demo", "owner": {"login": "octo"}}' },
      { stdout: '{"number": 2, "title": "Launch", "url": "", "id": "PVT_2"}' },
      { stdout: projectItemsReply(sampleProjectItems("Todo")) },
    ]);
    await inTempCwd(async () => {
      const definition = definitionOf({
        name: "board",
        behavior: { completionType: "project" },
        github: { labels: { inProgress: "in-progress" } },
      });
      const handler = await createCompletionHandler(definition, { project: 2 });
      assert.equal(handler.type, "project");
      assert.match(await handler.buildInitialPrompt({}), /# GitHub project #2: Launch/);
      assert.equal(await handler.isComplete(emptySummary(1)), false);
    }, gh.dir);
  });

  await t.step("an unknown type", async () => {
    await inTempCwd(async () => {
      const base = definitionOf({
        name: "x",
        behavior: { completionConfig: { maxIterations: 1 } },
      });
      const definition: AgentDefinition = {
        ...base,
        behavior: { ...base.behavior, completionType: "later" },
      };
      await assert.rejects(createCompletionHandler(definition, {}), {
        message: "Unknown completion type: later",
      });
    });
  });
});

Deno.test("the design's factory loads the design's custom handler from the agent folder", async () => {
  await inTempCwd(async (dir) => {
    await Deno.mkdir(`${dir}/.agent/facilitator/completion`, { recursive: true });
    await Deno.copyFile(
      new URL("../fixtures/seed_handlers/custom_handler.ts", import.meta.url),
      `${dir}/.agent/facilitator/completion/custom-handler.ts`,
    );
    // The design's "agent.json Configuration", as written there, plus the name.
    const definition = definitionOf({
      name: "facilitator",
      "behavior": {
        "completionType": "custom",
        "completionConfig": {
          "handlerPath": "completion/custom-handler.ts",
        },
      },
    });
    const handler = await createCompletionHandler(definition, {
      topic: "Release planning",
      targetDecisions: 2,
    });
    assert.equal(handler.type, "custom");
    assert.match(await handler.buildInitialPrompt({}), /## Topic\nRelease planning/);
    const decided = { ...emptySummary(1), detectedActions: [{ type: "decision" }] };
    assert.equal(await handler.isComplete(decided), false);
    assert.equal(await handler.isComplete({ ...decided, iteration: 2 }), true);
    assert.equal(await handler.getCompletionDescription(decided), "Achieved 2 decisions");
  });
});
