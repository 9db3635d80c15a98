/**
 * The JSONL log as a reader of the run's event stream: each event becomes
 * the record it has always been. Progress-only events (tools, texts,
 * the runner's own retries) are in the log as the agent's messages already;
 * a check's start and end are in its verification.
 *
 * @module
 */

import type { RunLog } from "../support/log.ts";
import type { RunEvent } from "./run_types.ts";

/**
 * Write one run event to the log.
 *
 * @param log The run log.
 * @param event The event.
 */
export function logRunEvent(log: RunLog, event: RunEvent): void {
  switch (event.type) {
    case "run_started":
      return log.event("run_started", event.facts);
    case "iteration_started":
      return log.event("iteration_started", { iteration: event.iteration, prompt: event.prompt });
    case "message":
      return log.message(event.iteration, event.message);
    case "guard":
      return log.event(event.kind, { iteration: event.iteration, ...event.data });
    case "session_fault":
      return log.event("session_fault", {
        iteration: event.iteration,
        attempt: event.attempt,
        ...event.fault,
      });
    case "probe":
      return log.event("probe", {
        iteration: event.iteration,
        attempt: event.attempt,
        status: event.status,
      });
    case "probe_skipped":
      return log.event("probe_skipped", {
        iteration: event.iteration,
        reason: event.reason,
        newCommits: event.newCommits,
      });
    case "rescue":
      return log.event("rescue", {
        iteration: event.iteration,
        by: event.by,
        commit: event.commit ?? null,
        left: event.left,
      });
    case "verification":
      return log.event("verification", {
        iteration: event.iteration,
        trigger: event.trigger,
        verification: event.verification,
        ...(event.reused ? { reused: true } : {}),
      });
    case "baseline":
      return log.event("baseline", { ...event.baseline });
    case "reproduction": {
      // The held-out test's code stays out of the log: the worker could read it there.
      const { reproduction } = event;
      return log.event("reproduction", {
        kept: reproduction.kept,
        ...(reproduction.kept
          ? {
            tests: reproduction.test.tests,
            checks: reproduction.test.checks,
            files: reproduction.test.files.map((file) => file.path),
          }
          : { why: reproduction.why }),
        notes: reproduction.notes,
        cost: reproduction.cost,
      });
    }
    case "iteration_finished":
      return log.event("iteration_finished", {
        iteration: event.iteration,
        verdict: event.verdict,
        summary: event.summary,
      });
    case "run_finished": {
      const { result } = event;
      return log.event("run_finished", {
        runId: result.runId,
        status: result.status,
        completionReason: result.completionReason,
        iterations: result.iterations,
        costUsd: result.costUsd,
        durationMs: result.durationMs,
        ...(result.review ? { reviewCost: result.review } : {}),
      });
    }
    case "prompt_failed":
    case "session_error_after_result":
    case "follow_up_failed":
    case "handler_failed":
    case "store_failed": {
      const { type, iteration, error } = event;
      return log.event(type, { iteration, error });
    }
    case "api_retry": {
      const { type: _type, ...facts } = event;
      return log.event("api_retry", facts);
    }
    case "handler_hook_failed":
      return log.event("handler_hook_failed", { hook: event.hook, error: event.error });
    case "final_rescue":
      return log.event("final_rescue", {
        status: event.status,
        by: event.by,
        files: event.files,
        left: event.left,
        commit: event.commit,
      });
    case "backend_release_failed":
      return log.event("backend_release_failed", { error: event.error });
    case "tool":
    case "text":
    case "retry":
    case "check":
      return;
  }
}
