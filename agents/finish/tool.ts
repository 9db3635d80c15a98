/**
 * The finish workflow behind the agent's `finish` tool: the same steps and
 * checkpoints as at the run's end, up to the next actions (persisting the
 * outcome and the cleanup wait for the run's end), answered in the design's
 * response shape.
 *
 * @module
 */

import {
  alwaysActions,
  type FinishToolAnswer,
  type FinishToolCall,
} from "../record/finish_call.ts";
import type { IterationSummary } from "../record/iteration.ts";
import { type FinishOptions, runFinish } from "./workflow.ts";

/** What the loop knows when the agent calls finish. */
export interface FinishToolContext {
  /** The agent's session. */
  sessionId?: string;
  /** The iteration under way. */
  pending: IterationSummary;
  /** The outcome the call claims. */
  outcome: { status: string; reason: string };
  /** Aborts the model steps (an interrupt). */
  signal: AbortSignal;
}

/**
 * Run the finish workflow for a finish call and answer it.
 *
 * @param options The workflow's store, run, model settings and events (no cleanup: that is the run end's).
 * @param call The agent's request.
 * @param context The session, the iteration under way and the claimed outcome.
 * @returns The design's response: `completed`, or `failed` for `success: false`.
 */
export async function finishToolAnswer(
  options: Omit<FinishOptions, "outcome" | "until" | "pending" | "signal" | "cleanup">,
  call: FinishToolCall,
  context: FinishToolContext,
): Promise<FinishToolAnswer> {
  const report = await runFinish({
    ...options,
    outcome: context.outcome,
    pending: context.pending,
    signal: context.signal,
    until: "next_actions",
  });
  const finish = options.store.getFinish(options.runId);
  const run = options.store.getRun(options.runId);
  const sessionId = context.sessionId ?? options.runId;
  const skillsStored = report.steps.includes("skills") &&
    options.store.skills(options.runId).length > 0;
  return {
    session_id: sessionId,
    status: context.signal.aborted ? "cancelled" : call.success ? "completed" : "failed",
    summary_updated: report.steps.includes("summary") && finish.summary !== null,
    skills_updated: skillsStored,
    history_saved: report.failed === undefined,
    next_actions: finish.nextActions.length > 0
      ? finish.nextActions
      : alwaysActions({ sessionId, cwd: run?.cwd ?? options.cwd ?? "." }),
  };
}
