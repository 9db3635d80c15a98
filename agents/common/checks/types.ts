/**
 * The task completion checker protocol (the user's task completion checking
 * design): a checker looks at the evidence and says whether the task is
 * complete, with natural-language feedback when it is not.
 *
 * @module
 */

import type { AgentDefinition } from "../definition/types.ts";
import type { AgentBackend } from "../backends/types.ts";
import type { CompleteTaskCall, IterationSummary } from "../completion/types.ts";
import type { GitRepo } from "../git.ts";

/** The result of a check. */
export interface TaskCompletionResult {
  /** Whether the task is complete as far as this checker can tell. */
  readonly complete: boolean;
  /** Why not (or a note when complete). */
  readonly feedback?: string;
}

/**
 * A complete result.
 *
 * @param feedback Optional note.
 * @returns The result.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { ok } from "@finishline/agents";
 *
 * assert.deepEqual(ok(), { complete: true });
 * assert.deepEqual(ok("3 tests pass"), { complete: true, feedback: "3 tests pass" });
 * ```
 */
export function ok(feedback?: string): TaskCompletionResult {
  return feedback === undefined ? { complete: true } : { complete: true, feedback };
}

/**
 * An incomplete result.
 *
 * @param feedback What is missing, for the agent.
 * @returns The result.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { incomplete } from "@finishline/agents";
 *
 * assert.deepEqual(incomplete("tests fail"), { complete: false, feedback: "tests fail" });
 * ```
 */
export function incomplete(feedback: string): TaskCompletionResult {
  return { complete: false, feedback };
}

/** Git evidence for the whole run, for checkers. */
export interface RunGitEvidence {
  /** The repository. */
  repo: GitRepo;
  /** HEAD when the run started (null in an empty repository). */
  baseline: string | null;
}

/** Everything a checker may look at. */
export interface TaskCompletionContext {
  /** The current iteration's summary (so far, when checked from complete_task). */
  summary: IterationSummary;
  /** Every earlier iteration's summary. */
  previous: IterationSummary[];
  /** The agent definition. */
  definition: AgentDefinition;
  /** Working directory. */
  cwd: string;
  /** The agent folder. */
  agentDir: URL;
  /** Git evidence; absent outside a repository. */
  git?: RunGitEvidence;
  /** The backend, for checkers that ask a model (the judge). */
  backend?: AgentBackend;
  /** Why the agent is stopping (`complete_task`, `end_turn`, ...). */
  stopReason?: string;
  /** The complete_task payload, when the agent called it. */
  completeTask?: CompleteTaskCall;
  /** Aborts long checks. */
  signal?: AbortSignal;
}

/** Verifies that a task is complete. */
export interface TaskCompletionChecker {
  /** Name for logs and feedback (`command`, `git`, ...). */
  readonly name: string;
  /**
   * Check the evidence.
   *
   * @param context The evidence.
   * @returns Complete, or incomplete with feedback.
   */
  check(context: TaskCompletionContext): Promise<TaskCompletionResult> | TaskCompletionResult;
}

/** The outcome of a verification, as recorded in the summary and the log. */
export type VerificationRecord = NonNullable<IterationSummary["verification"]>;
