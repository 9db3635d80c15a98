/**
 * The base of the built-in handlers, public for handlers of your own: the
 * prompt resolver, the run's cap, and the variables every template can use.
 *
 * @module
 */

import type { AgentDefinition } from "../definition/definition_types.ts";
import { argsToVariables, type PromptResolver, type PromptVariables } from "../prompts/resolver.ts";
import { countTools } from "../support/format.ts";
import { NO_LEARNINGS_TEXT } from "../store/learnings_text.ts";
import type { CompletionCriteria } from "./handler_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";

/** What a built-in handler is built from. */
export interface HandlerContext {
  /** The agent definition. */
  definition: AgentDefinition;
  /** The run's arguments (flags and parameters). */
  args: Record<string, unknown>;
  /** Resolves prompt keys to filled templates (a {@linkcode PromptResolver}, or anything with its `resolve`). */
  resolver: Pick<PromptResolver, "resolve">;
  /** The run's iteration cap. */
  maxIterations: number;
  /** Finds learnings of earlier runs relevant to a text, formatted for `{uv-learnings}`. */
  learnings?: (query: string) => string;
}

/**
 * The default iteration cap when neither the flag nor the definition sets one.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { parseDefinition } from "@finishline/agents";
 * import { DEFAULT_MAX_ITERATIONS } from "./base_handler.ts";
 * import { iterationCap } from "./factory.ts";
 *
 * const definition = parseDefinition(
 *   `{ "name": "docs", "behavior": { "completionType": "manual",
 *      "completionConfig": { "completionKeyword": "OK" } } }`,
 *   { displayPath: ".agent/docs/agent.json" },
 * );
 * assert.equal(iterationCap(definition), DEFAULT_MAX_ITERATIONS);
 * ```
 */
export const DEFAULT_MAX_ITERATIONS = 10;

/** Text used for `uv-task` when the run was given no task. */
export const NO_TASK_TEXT =
  "No task text was given. Work from the repository itself: its README, TODO notes and failing checks.";

/** How many earlier iterations a continuation prompt summarises. */
export const SUMMARY_WINDOW = 3;

const RESPONSE_LIMIT = 600;

/**
 * Summarise the last iterations for a continuation prompt.
 *
 * @param summaries Every earlier iteration, oldest first.
 * @param window How many of the latest to include.
 * @returns Markdown, one bullet block per iteration.
 */
export function formatSummaries(
  summaries: IterationSummary[],
  window = SUMMARY_WINDOW,
): string {
  const recent = summaries.slice(-window);
  if (recent.length === 0) return "(no earlier iterations)";
  return recent.map((summary) => {
    const tools = countTools(summary.toolsUsed);
    const last = summary.assistantResponses.at(-1)?.trim() ?? "";
    const text = last.length > RESPONSE_LIMIT ? `${last.slice(0, RESPONSE_LIMIT)}...` : last;
    const lines = [
      `### Iteration ${summary.iteration}`,
      `- Tools: ${tools || "none"}; turns: ${summary.turns}; stop: ${
        summary.stopReason ?? "unknown"
      }`,
    ];
    if (summary.git && summary.git.newCommits !== null) {
      const dirty = summary.git.staged.length + summary.git.unstaged.length;
      lines.push(
        `- Commits: ${summary.git.newCommits}; uncommitted files: ${dirty}`,
      );
    }
    if (summary.completeTask) {
      lines.push(
        `- complete_task: ${summary.completeTask.status}: ${summary.completeTask.summary}`,
      );
      // "Recorded: partial" tells the agent the next iteration goes on from here.
      const remaining = summary.completeTask.remaining_work?.trim();
      if (remaining) lines.push(`- Remaining work: ${remaining}`);
    }
    if (summary.errors.length > 0) {
      lines.push(`- Errors: ${summary.errors.slice(-3).join("; ")}`);
    }
    lines.push(`- Last message: ${text || "(none)"}`);
    return lines.join("\n");
  }).join("\n\n");
}

/**
 * The last iteration's failed verification, for `uv-verification_feedback`.
 *
 * @param previous The previous iteration's summary.
 * @returns The feedback, or "(none)".
 */
export function verificationFeedback(previous: IterationSummary | undefined): string {
  const verification = previous?.verification;
  if (!verification || verification.passed || !verification.feedback) return "(none)";
  return `${verification.checker}: ${verification.feedback}`;
}

/**
 * Shared plumbing of the built-in handlers, for handlers of your own: it
 * keeps the {@linkcode HandlerContext} and fills the variables every
 * template can use (`uv-task`, `uv-iteration`, `uv-previous_summary`,
 * `uv-learnings`, ...).
 *
 * @example A handler that completes once an iteration ends without errors
 * ```ts
 * import assert from "node:assert/strict";
 * import {
 *   BaseHandler,
 *   type CompletionCriteria,
 *   type CompletionHandler,
 *   emptySummary,
 *   type IterationSummary,
 *   parseDefinition,
 *   PromptResolver,
 * } from "@finishline/agents";
 *
 * class CleanRunHandler extends BaseHandler implements CompletionHandler {
 *   readonly type = "custom" as const;
 *   buildCompletionCriteria(): CompletionCriteria {
 *     return { short: "no errors", detailed: "Finish an iteration without tool errors." };
 *   }
 *   buildInitialPrompt(args: Record<string, unknown>): Promise<string> {
 *     return this.context.resolver.resolve("initial_iterate", this.variables(1, [], args));
 *   }
 *   buildContinuationPrompt(iteration: number, summaries: IterationSummary[]): Promise<string> {
 *     return this.context.resolver.resolve(
 *       "continuation_iterate",
 *       this.variables(iteration, summaries),
 *     );
 *   }
 *   isComplete(summary: IterationSummary): Promise<boolean> {
 *     return Promise.resolve(summary.errors.length === 0);
 *   }
 *   getCompletionDescription(summary: IterationSummary): Promise<string> {
 *     return Promise.resolve(`Iteration ${summary.iteration} ran without errors`);
 *   }
 * }
 *
 * const definition = parseDefinition(
 *   '{ "name": "clean", "behavior": { "completionConfig": { "maxIterations": 3 } } }',
 *   { displayPath: ".agent/clean/agent.json" },
 * );
 * const resolver = await PromptResolver.create({ agentDir: new URL("file:///nonexistent/") });
 * const handler = new CleanRunHandler({ definition, args: {}, resolver, maxIterations: 3 });
 * const prompt = await handler.buildInitialPrompt({ task: "Fix the lint errors" });
 * assert.match(prompt, /Fix the lint errors/);
 * assert.match(prompt, /This run has 3 iterations/);
 * assert.equal(await handler.isComplete(emptySummary(1)), true);
 * ```
 */
export abstract class BaseHandler {
  /** The handler's context. */
  protected readonly context: HandlerContext;

  /**
   * Keep the context for the template variables and the subclass.
   *
   * @param context What the handler is built from.
   */
  constructor(context: HandlerContext) {
    this.context = context;
  }

  #learnings: string | undefined;

  /**
   * Completion criteria; each handler defines its own, and
   * `uv-completion_criteria` is their detailed text.
   *
   * @returns The short and detailed criteria.
   */
  abstract buildCompletionCriteria(): CompletionCriteria;

  /**
   * The text that learnings of earlier runs are matched against: the task;
   * the GitHub handlers use the issue or project.
   *
   * @returns Search text.
   */
  protected learningsQuery(): string {
    const task = this.context.args.task;
    return typeof task === "string" ? task : "";
  }

  /**
   * Variables every template can use, plus the run's arguments.
   *
   * @param iteration The iteration the prompt is for.
   * @param summaries Earlier iterations.
   * @param args The run's arguments; the context's when absent.
   * @returns Template variables.
   */
  protected variables(
    iteration: number,
    summaries: IterationSummary[],
    args: Record<string, unknown> = this.context.args,
  ): PromptVariables {
    const { definition, maxIterations } = this.context;
    const task = typeof args.task === "string" && args.task.trim() !== ""
      ? args.task
      : NO_TASK_TEXT;
    return {
      ...argsToVariables(args),
      "uv-agent_name": definition.name,
      "uv-iteration": iteration,
      "uv-max_iterations": maxIterations,
      "uv-remaining": Math.max(0, maxIterations - iteration),
      "uv-previous_summary": formatSummaries(summaries),
      "uv-completion_criteria": this.buildCompletionCriteria().detailed,
      "uv-task": task,
      "uv-verification_feedback": verificationFeedback(summaries.at(-1)),
      "uv-learnings": this.#learningsText(),
    };
  }

  #learningsText(): string {
    if (this.#learnings === undefined) {
      const query = this.learningsQuery().trim();
      this.#learnings = query && this.context.learnings
        ? this.context.learnings(query)
        : NO_LEARNINGS_TEXT;
    }
    return this.#learnings;
  }
}
