/**
 * Whether the run ends with the iteration under way, as the runner can tell
 * during it: what the `finish` tool's answer says. The completion handler
 * decides at the iteration's end, asked once (a handler may keep state and
 * count with `+=`), so it is never asked here. The built-in handlers whose
 * answer follows from the iteration so far are read instead: the task
 * handler and the issue handler that leaves closing to the runner complete
 * on a `success` claim, the manual handler on its keyword in a response so
 * far, the iterate handler on its count. The others (project, custom,
 * registered) decide from what only they see.
 *
 * @module
 */

import type { CompletionHandler } from "../completion/handler_contract.ts";
import { IterateCompletionHandler } from "../completion/iterate.ts";
import { ManualCompletionHandler } from "../completion/manual.ts";
import { TaskCompletionHandler } from "../completion/task.ts";
import type { AgentDefinition } from "../definition/definition_types.ts";
import type { IterationSummary } from "../record/iteration.ts";

/** The built-in handlers whose `isComplete` reads the summary alone, with no state of its own. */
const READ_FROM_SUMMARY: ReadonlyArray<abstract new (...args: never[]) => CompletionHandler> = [
  TaskCompletionHandler,
  ManualCompletionHandler,
  IterateCompletionHandler,
];

/**
 * Whether the handler will be satisfied by the iteration as it stands.
 *
 * @param handler The run's handler.
 * @param definition The agent definition (who closes an issue).
 * @param pending The iteration so far, with the agent's claim.
 * @returns True or false when the runner can tell; undefined when only the
 *   handler can, at the iteration's end.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, ManualCompletionHandler } from "@finishline/agents";
 * import { mockPromptResolver } from "@finishline/agents/testing";
 * import { handlerOutlook } from "./run_outlook.ts";
 *
 * const handler = new ManualCompletionHandler({
 *   completionKeyword: "SHIPPED",
 *   promptResolver: mockPromptResolver,
 * });
 * const definition = {} as never;
 * assert.equal(await handlerOutlook(handler, definition, emptySummary(1)), false);
 * const said = { ...emptySummary(1), assistantResponses: ["Done. SHIPPED"] };
 * assert.equal(await handlerOutlook(handler, definition, said), true);
 * ```
 */
export async function handlerOutlook(
  handler: CompletionHandler,
  definition: Pick<AgentDefinition, "github">,
  pending: IterationSummary,
): Promise<boolean | undefined> {
  // Exactly the built-in classes: a subclass may decide otherwise, and keep state.
  if (READ_FROM_SUMMARY.some((type) => handler.constructor === type)) {
    try {
      return await handler.isComplete(structuredClone(pending));
    } catch {
      return undefined;
    }
  }
  if (handler.type === "issue" && definition.github?.closeIssue === "runner") {
    // The issue handler, when the runner closes the issue, completes on the agent's success claim.
    return pending.completeTask?.status === "success" ? true : undefined;
  }
  return undefined;
}
