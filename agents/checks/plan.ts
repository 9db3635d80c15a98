/**
 * The `plan` checker: the agent's own todo list, from its TodoWrite calls.
 *
 * @module
 */

import type { IterationSummary } from "../record/iteration.ts";
import {
  incomplete,
  ok,
  type TaskCompletionChecker,
  type TaskCompletionContext,
  type TaskCompletionResult,
} from "./checker_contract.ts";

/** One todo of the agent's plan. */
export interface PlanItem {
  /** What the todo says. */
  content: string;
  /** pending, in_progress or completed. */
  status: string;
}

/**
 * The latest todo list the agent wrote with TodoWrite, in this iteration or
 * an earlier one.
 *
 * @param summaries Summaries, oldest first.
 * @returns The todos, or undefined when the agent never wrote a plan.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, latestPlan } from "@finishline/agents";
 *
 * const summary = {
 *   ...emptySummary(1),
 *   toolCalls: [{
 *     name: "TodoWrite",
 *     input: {
 *       todos: [
 *         { content: "Write tests", status: "completed", activeForm: "Writing tests" },
 *       ],
 *     },
 *   }],
 * };
 * assert.deepEqual(latestPlan([summary]), [{ content: "Write tests", status: "completed" }]);
 * assert.equal(latestPlan([emptySummary(2)]), undefined);
 * ```
 */
export function latestPlan(summaries: IterationSummary[]): PlanItem[] | undefined {
  for (const summary of [...summaries].reverse()) {
    for (const call of [...summary.toolCalls].reverse()) {
      if (call.name !== "TodoWrite") continue;
      const todos = (call.input as { todos?: unknown } | null)?.todos;
      if (!Array.isArray(todos)) continue;
      return todos
        .filter((todo): todo is Record<string, unknown> =>
          typeof todo === "object" && todo !== null
        )
        .map((todo) => ({
          content: String(todo.content ?? todo.activeForm ?? "(untitled)"),
          status: String(todo.status ?? "pending"),
        }));
    }
  }
  return undefined;
}

/**
 * Passes when the agent has no plan, or every todo in its latest plan is
 * completed. The feedback names how many are not, and up to three of them.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary } from "@finishline/agents";
 * import { PlanChecker } from "./plan.ts";
 *
 * const checker = new PlanChecker();
 * assert.equal(checker.name, "plan");
 * // No TodoWrite call in the run: there is no plan to hold the agent to.
 * const result = checker.check({ summary: emptySummary(1), previous: [] } as never);
 * assert.deepEqual(result, { complete: true, feedback: "No plan to check" });
 * ```
 */
export class PlanChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;

  /**
   * Create the checker.
   *
   * @param name Name in feedback.
   */
  constructor(name = "plan") {
    this.name = name;
  }

  /**
   * Read the latest plan.
   *
   * @param context Summaries of the run.
   * @returns Incomplete while todos are open.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary } from "@finishline/agents";
   * import { PlanChecker } from "./plan.ts";
   *
   * const summary = {
   *   ...emptySummary(1),
   *   toolCalls: [{
   *     name: "TodoWrite",
   *     input: {
   *       todos: [
   *         { content: "Write tests", status: "pending" },
   *         { content: "Ship", status: "completed" },
   *       ],
   *     },
   *   }],
   * };
   * // The plan checker only reads the summaries from the context.
   * const result = new PlanChecker().check({ summary, previous: [] } as never);
   * assert.equal(result.complete, false);
   * assert.match(result.feedback ?? "", /1 incomplete task\(s\) out of 2/);
   * ```
   */
  check(context: TaskCompletionContext): TaskCompletionResult {
    const plan = latestPlan([...context.previous, context.summary]);
    if (!plan || plan.length === 0) return ok("No plan to check");
    const open = plan.filter((item) => item.status !== "completed");
    if (open.length === 0) return ok(`All ${plan.length} planned tasks are completed`);
    const titles = open.slice(0, 3).map((item) => item.content).join(", ") +
      (open.length > 3 ? "..." : "");
    return incomplete(
      `You have ${open.length} incomplete task(s) out of ${plan.length}. Please either complete all remaining tasks or update the plan to remove tasks that are no longer needed: ${titles}`,
    );
  }
}
