/**
 * The `task` handler, the default of `--task`: complete when the agent
 * reports success with `complete_task` and the evidence passes, within the
 * iteration cap.
 *
 * @module
 */

import { BaseHandler, type HandlerContext } from "./base_handler.ts";
import type { CompletionCriteria, CompletionHandler } from "./handler_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";

/** What a task asks for, as far as its words tell: a change of behaviour, or not. */
export type TaskKind = "bug" | "feature" | "other";

// Words of a task that changes nothing a test can observe win over the others:
// "Add a section to the README" is documentation, not a feature.
const OTHER =
  /\b(readme|docs?|documentation|comments?|typos?|spelling|format(?:ting)?|lint|rename|refactor|tidy|clean ?up|changelog)\b/i;
const BUG =
  /\b(fix(?:es|ed)?|bugs?|broken|breaks?|fail(?:s|ing|ure)?|crash(?:es|ing)?|errors?|wrong|regression|incorrect)\b/i;
const FEATURE = /\b(add|implement|support|create|introduce|allow|enable|new)\b/i;

/**
 * Whether a task asks for a change of behaviour (a bug fix or a feature),
 * which a held-out test can reproduce, or something else (documentation,
 * refactoring) that no test observes.
 *
 * @param task The task text.
 * @returns The kind.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { taskKind } from "./task.ts";
 *
 * assert.equal(taskKind("Fix the failing add test"), "bug");
 * assert.equal(taskKind("Add a greet() module with a test"), "feature");
 * assert.equal(taskKind("Tidy the README"), "other");
 * ```
 */
export function taskKind(task: string): TaskKind {
  if (OTHER.test(task)) return "other";
  if (BUG.test(task)) return "bug";
  if (FEATURE.test(task)) return "feature";
  return "other";
}

/**
 * Completes in the iteration in which the agent called `complete_task` with
 * status success; the runner completes the run only when the evidence
 * passes too (the repository's checks at both ends, the held-out test where
 * the task is a bug or a feature), so a claim with a red check goes on. The
 * cap bounds it: at the cap the run ends `max_iterations`.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { emptySummary, parseDefinition, PromptResolver } from "@finishline/agents";
 * import { TaskCompletionHandler } from "./task.ts";
 *
 * const definition = parseDefinition(
 *   '{ "name": "fix", "behavior": { "completionConfig": { "maxIterations": 5 } } }',
 *   { displayPath: "agent.json" },
 * );
 * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
 * const handler = new TaskCompletionHandler({
 *   definition,
 *   args: { task: "Fix the failing add test" },
 *   resolver,
 *   maxIterations: 5,
 * });
 * assert.equal(handler.type, "task");
 * assert.equal(handler.kind, "bug");
 * assert.equal(await handler.isComplete(emptySummary(1)), false);
 * const claim = {
 *   ...emptySummary(2),
 *   completeTask: { status: "success", summary: "Fixed add()" },
 * } as never;
 * assert.equal(await handler.isComplete(claim), true);
 * ```
 */
export class TaskCompletionHandler extends BaseHandler implements CompletionHandler {
  /** Always "task". */
  readonly type = "task" as const;

  /**
   * Create the handler.
   *
   * @param context Definition, arguments (the task is `args.task`), resolver and cap.
   */
  constructor(context: HandlerContext) {
    super(context);
  }

  /**
   * What the task asks for, from its words: a bug fix or a feature (the
   * runner then has a held-out test written), or something else.
   *
   * @returns The kind.
   */
  get kind(): TaskKind {
    const task = this.context.args.task;
    return typeof task === "string" ? taskKind(task) : "other";
  }

  /**
   * Build the first prompt from the `initial_task` template.
   *
   * @param args The run's arguments; `task` becomes `uv-task`.
   * @returns The prompt.
   */
  async buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
    return await this.context.resolver.resolve("initial_task", this.variables(1, [], args));
  }

  /**
   * Build the prompt of a later iteration from the `continuation_task`
   * template: the latest iterations and why the last claim was not accepted.
   *
   * @param iteration The iteration the prompt is for (2 and later).
   * @param summaries Every earlier iteration, oldest first.
   * @returns The prompt.
   */
  async buildContinuationPrompt(
    iteration: number,
    summaries: IterationSummary[],
  ): Promise<string> {
    return await this.context.resolver.resolve(
      "continuation_task",
      this.variables(iteration, summaries),
    );
  }

  /**
   * Say that the run ends at a verified success.
   *
   * @returns The short and detailed criteria.
   */
  buildCompletionCriteria(): CompletionCriteria {
    return {
      short: "complete_task success with passing checks",
      detailed: [
        "Do the task completely and commit the work with clear commit messages, then call complete_task with status success.",
        "finishline then checks the evidence (the repository's own checks on a clean copy of your last commit, at the start and now) and ends the run only when it passes; otherwise you get the failing checks and go on.",
      ].join(" "),
    };
  }

  /**
   * Whether the agent reported success in this iteration (the runner's
   * evidence decides after it).
   *
   * @param summary The iteration's summary.
   * @returns True when its `complete_task` call said success.
   */
  isComplete(summary: IterationSummary): Promise<boolean> {
    return Promise.resolve(summary.completeTask?.status === "success");
  }

  /**
   * Say in which iteration the task was done.
   *
   * @param summary The last iteration's summary.
   * @returns One line for the final report.
   */
  getCompletionDescription(summary: IterationSummary): Promise<string> {
    const what = summary.completeTask?.summary?.trim();
    return Promise.resolve(
      `Task done and verified in iteration ${summary.iteration}${what ? `: ${what}` : ""}`,
    );
  }
}
