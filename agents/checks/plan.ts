/**
 * The `plan` checker (the task completion checking design's
 * `PlanBasedChecker`): the agent's own todo list, from its TodoWrite calls,
 * or a plan of your own.
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
 * Which plan a {@linkcode PlanChecker} holds the agent to (the design's
 * `plan_type`): `"TodoWrite"`, the agent's latest TodoWrite list, or a
 * function that reads a plan of your own from the evidence (undefined when
 * there is none). A step is done when its status is `completed` (TodoWrite's
 * word) or `done` (the design's).
 */
export type PlanType =
  | "TodoWrite"
  | ((context: TaskCompletionContext) => readonly PlanItem[] | undefined);

/**
 * The task completion checking design's `PlanBasedChecker`: passes when
 * there is no plan, or every step of the latest plan is done; otherwise the
 * feedback names how many steps are open, and up to three of them. Without
 * a plan type (`planType`, or the design's spelling `plan_type`) it is a
 * no-op that always passes, as in the design; `{ "type": "plan" }` in
 * agent.json checks the TodoWrite plan.
 *
 * @example The design's `PlanBasedChecker(plan_type=Plan)`
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, PlanChecker } from "@finishline/agents";
 *
 * const checker = new PlanChecker({ plan_type: "TodoWrite" });
 * assert.equal(checker.name, "plan");
 * // No TodoWrite call in the run: there is no plan to hold the agent to.
 * const result = checker.check({ summary: emptySummary(1), previous: [] } as never);
 * assert.deepEqual(result, { complete: true, feedback: "No plan to check" });
 * // Without a plan type it checks nothing.
 * assert.deepEqual(new PlanChecker().check({} as never), { complete: true });
 * ```
 */
export class PlanChecker implements TaskCompletionChecker {
  /** The checker's name. */
  readonly name: string;
  /** The plan it reads; undefined makes it a no-op. */
  readonly planType: PlanType | undefined;

  /**
   * Create the checker.
   *
   * @param options The plan type (`planType`, or `plan_type` as the design
   *   spells it; none: a no-op) and the name in feedback (default `plan`).
   */
  constructor(
    options: {
      /** The plan to check; without one the checker always passes. */
      planType?: PlanType;
      /** The design's spelling of `planType`. */
      plan_type?: PlanType;
      /** Name in logs and feedback. @default "plan" */
      name?: string;
    } = {},
  ) {
    this.planType = options.planType ?? options.plan_type;
    this.name = options.name ?? "plan";
  }

  /**
   * Read the latest plan.
   *
   * @param context The evidence: the run's summaries for a TodoWrite plan.
   * @returns Incomplete while steps are open.
   * @example
   * ```ts
   * import assert from "node:assert/strict";
   * import { emptySummary, PlanChecker } from "@finishline/agents";
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
   * // The TodoWrite plan is read from the context's summaries only.
   * const result = new PlanChecker({ planType: "TodoWrite" }).check(
   *   { summary, previous: [] } as never,
   * );
   * assert.equal(result.complete, false);
   * assert.match(result.feedback ?? "", /1 incomplete task\(s\) out of 2/);
   * ```
   */
  check(context: TaskCompletionContext): TaskCompletionResult {
    const planType = this.planType;
    if (planType === undefined) return ok();
    const plan = planType === "TodoWrite"
      ? latestPlan([...context.previous, context.summary])
      : planType(context);
    if (!plan || plan.length === 0) return ok("No plan to check");
    const open = plan.filter((item) => item.status !== "completed" && item.status !== "done");
    if (open.length === 0) return ok(`All ${plan.length} planned tasks are completed`);
    const titles = open.slice(0, 3).map((item) => item.content).join(", ") +
      (open.length > 3 ? "..." : "");
    return incomplete(
      `You have ${open.length} incomplete task(s) out of ${plan.length}. Please either complete all remaining tasks or update the plan to remove tasks that are no longer needed before producing output: ${titles}`,
    );
  }
}
