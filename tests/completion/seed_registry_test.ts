/**
 * The completion handlers design's "Handler Registration": the registry it
 * shows (`registerCompletionHandler(type, factory)`, `getRegisteredHandler(type)`)
 * is the package's, from the main entry and from the kit, and a factory
 * registered there is the one handed back, that builds the design's own
 * facilitator handler.
 */

import assert from "node:assert/strict";
import * as main from "@finishline/agents";
import * as kit from "@finishline/agents/kit";
import { emptySummary } from "../../agents/record/iteration.ts";
import createHandler from "../fixtures/seed_handlers/custom_handler.ts";
import { definitionOf } from "./_helpers.ts";

Deno.test("the design's registry: a registered factory is handed back by getRegisteredHandler, from either entry", async (t) => {
  for (const [entry, registry] of [["@finishline/agents", main], ["/kit", kit]] as const) {
    await t.step(entry, async () => {
      assert.equal(registry.getRegisteredHandler("facilitator"), undefined);
      registry.registerCompletionHandler("facilitator", createHandler);
      try {
        // The registry's type under the design's name.
        const factory: main.HandlerFactory | undefined = registry.getRegisteredHandler(
          "facilitator",
        );
        assert.equal(factory, createHandler);
        // The entries share one registry: what one registered, the other hands back.
        assert.equal(
          main.getRegisteredHandler("facilitator"),
          kit.getRegisteredHandler("facilitator"),
        );
        // The design's factory takes the definition and the arguments.
        const definition = definitionOf({
          name: "facilitator",
          behavior: { completionType: "facilitator" },
        });
        const args = { topic: "Release plan", targetDecisions: 1 };
        const handler = await factory(definition, args);
        // The package's factory builds a registered type through the same registry.
        const built = await main.createCompletionHandler(definition, args, {
          agentDir: new URL("file:///nonexistent/"),
        });
        assert.equal(built.buildCompletionCriteria().short, "1 decisions");
        assert.equal(handler.buildCompletionCriteria().short, "1 decisions");
        const decided = {
          ...emptySummary(1),
          detectedActions: [{ type: "decision", title: "Ship Tuesday" }],
        };
        assert.equal(await handler.isComplete(decided as never), true);
      } finally {
        registry.unregisterCompletionHandler("facilitator");
      }
      assert.equal(registry.getRegisteredHandler("facilitator"), undefined);
    });
  }
});
