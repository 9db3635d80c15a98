/**
 * The verdict: what an iteration decides, as a value. Either the run goes on
 * (with the label recorded for the iteration) or it ends with a status and a
 * reason; the runner records and ends it in one place. Also the handler's
 * part of the decision: `isComplete`, whose errors are an incomplete verdict,
 * not a crash.
 *
 * @module
 */

import type { VerificationRecord } from "../checks/checker_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";
import { firstLine } from "../support/errors.ts";
import type { SessionOutcome } from "./session.ts";
import type { RunState } from "./state.ts";
import type { RunStatus } from "./run_types.ts";

/** Handler or checker failures in a row that end the run failed. */
export const MAX_VERDICT_FAULTS = 3;

/** What an iteration decided. */
export type Verdict =
  | { kind: "continue"; label: string }
  | { kind: "end"; status: RunStatus; reason: string; label: string };

/**
 * The run goes on; the iteration is recorded with `label`.
 *
 * @param label The recorded verdict (`continue`, `continue (...)`).
 * @returns The verdict.
 */
export function carryOn(label: string): Verdict {
  return { kind: "continue", label };
}

/**
 * The run ends with the iteration, recorded with `label`.
 *
 * @param status How the run ends.
 * @param reason Why, in one sentence.
 * @param label The recorded verdict. @default status
 * @returns The verdict.
 */
export function endRun(status: RunStatus, reason: string, label: string = status): Verdict {
  return { kind: "end", status, reason, label };
}

/**
 * The verdicts that the session alone decides: an interrupt, a spent time
 * budget, a fault retries could not fix, and a complete_task `blocked`.
 *
 * @param state The run.
 * @param outcome The session phase's outcome.
 * @returns The verdict, or undefined when the evidence must decide.
 */
export function sessionVerdict(state: RunState, outcome: SessionOutcome): Verdict | undefined {
  const summary = outcome.builder.current;
  const iteration = summary.iteration;
  const { fault, end } = outcome;
  const retry = state.definition.retry;
  if (state.signal.aborted) {
    summary.stopReason = "interrupted";
    return endRun("interrupted", `Interrupted during iteration ${iteration}`);
  }
  if (end.budget) {
    summary.stopReason = "budget_exhausted";
    return endRun("budget_exhausted", `Time budget spent during iteration ${iteration}`);
  }
  if (fault) {
    summary.errors.push(`session: ${fault.message}`);
    if (!fault.retryable) return endRun("failed", fault.message);
    if (fault.resetsAt !== undefined && fault.resetsAt - Date.now() > retry.maxWaitSeconds * 1000) {
      return endRun(
        "failed",
        `${fault.message}; the limit resets at ${
          new Date(fault.resetsAt).toISOString()
        }, beyond --max-wait (${retry.maxWaitSeconds} s): resume later with --resume`,
      );
    }
    return endRun(
      "failed",
      `Gave up on iteration ${iteration} after ${outcome.retries.length} attempts: ${fault.message}`,
    );
  }
  if (end.error !== undefined) {
    // The SDK throws after an error result (max turns, budget); the result is already recorded.
    state.emit({ type: "session_error_after_result", iteration, error: firstLine(end.error) });
  }
  if (summary.completeTask?.status === "blocked") {
    const remaining = summary.completeTask.remaining_work?.trim() || summary.completeTask.summary;
    return endRun(
      "blocked",
      `The agent reported the task blocked in iteration ${iteration}: ${remaining}`,
    );
  }
  return undefined;
}

/**
 * Ask the handler whether the work is complete; an error is an incomplete
 * verdict, recorded in the summary with the error as feedback.
 *
 * @param state The run.
 * @param summary The iteration.
 * @returns Whether it is complete, and the handler's error if it threw.
 */
export async function askHandler(
  state: RunState,
  summary: IterationSummary,
): Promise<{ complete: boolean; fault?: string }> {
  try {
    return { complete: await state.handler.isComplete(summary) };
  } catch (error) {
    const fault = firstLine(error);
    state.emit({ type: "handler_failed", iteration: summary.iteration, error: fault });
    summary.errors.push(`handler: ${fault}`);
    summary.verification = {
      passed: false,
      checker: "handler",
      feedback: `The completion handler failed: ${fault}`,
      trigger: "handler",
    };
    return { complete: false, fault };
  }
}

/**
 * Move the handler's gh faults since the last call into the summary.
 *
 * @param state The run.
 * @param summary The iteration.
 */
export function collectHandlerFaults(state: RunState, summary: IterationSummary): void {
  let faults: string[] = [];
  try {
    faults = state.handler.drainFaults?.() ?? [];
  } catch (error) {
    faults = [`drainFaults failed: ${firstLine(error)}`];
  }
  if (faults.length > 0) summary.faults = [...(summary.faults ?? []), ...faults];
}

/**
 * The verification a complete claim gets when the rescue left files
 * uncommitted.
 *
 * @param uncommitted The files still uncommitted.
 * @returns The failed verification.
 */
export function uncommittedWork(uncommitted: string[]): VerificationRecord {
  return {
    passed: false,
    checker: "git",
    feedback: `The work is not committed: ${listPaths(uncommitted)} ${
      uncommitted.length === 1 ? "is" : "are"
    } still uncommitted after the commit rescue. Commit the changes that belong to the task.`,
    trigger: "handler",
  };
}

function listPaths(paths: string[]): string {
  const shown = paths.slice(0, 5).map((path) => `"${path}"`).join(", ");
  return paths.length > 5 ? `${shown} and ${paths.length - 5} more` : shown;
}
