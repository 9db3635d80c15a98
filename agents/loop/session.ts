/**
 * The session phase: the iteration's prompt, then its agent session, re-run
 * with backoff while the fault is one that retrying may fix.
 *
 * @module
 */

import { unpricedCost } from "../record/token_pricing.ts";
import { firstLine, sha256Hex } from "../support/errors.ts";
import { verifyTree } from "./claim_verification.ts";
import { SummaryBuilder } from "./summary_builder.ts";
import { CompletionGuard } from "./complete_task_guard.ts";
import { finishToolRoute } from "./finish_tool_guard.ts";
import type { AgentSessions, SessionEnd } from "./agent_sessions.ts";
import { abortableSleep, backoffMs, classifyFault, type SessionFault } from "./faults.ts";
import type { RunState } from "./state.ts";
import { withVerificationFeedback } from "./feedback.ts";
import { evidenceSources, missingEvidence } from "./unverified.ts";

/** The iteration's session, after its last attempt. */
export interface SessionOutcome {
  /** The summary builder of the last attempt. */
  builder: SummaryBuilder;
  /** Its complete_task enforcement. */
  guard: CompletionGuard;
  /** How the last attempt ended. */
  end: SessionEnd;
  /** The last attempt's fault, if any. */
  fault?: SessionFault;
  /** Every failed attempt, as `retryable: ...` or `fatal: ...`. */
  retries: string[];
}

/**
 * The iteration's prompt: the handler's initial or continuation prompt, with
 * the last failed verification's feedback.
 *
 * @param state The run.
 * @param iteration The iteration.
 * @returns The prompt, or the error that keeps it from being built.
 */
export async function buildPrompt(
  state: RunState,
  iteration: number,
): Promise<{ prompt: string } | { error: string }> {
  let prompt: string;
  try {
    prompt = iteration === 1
      ? state.options.initialPrompt ?? await state.handler.buildInitialPrompt(state.options.args)
      : await state.handler.buildContinuationPrompt(iteration, state.summaries);
  } catch (error) {
    state.emit({ type: "prompt_failed", iteration, error: firstLine(error) });
    return { error: `Cannot build the prompt for iteration ${iteration}: ${firstLine(error)}` };
  }
  prompt = withVerificationFeedback(prompt, state.summaries.at(-1));
  state.promptDigest = await sha256Hex(prompt);
  return { prompt };
}

/**
 * Run the iteration's session; a retryable fault re-runs it after a backoff
 * (or until a rate limit resets), at most `retry.maxAttempts` times.
 *
 * @param state The run.
 * @param sessions The run's agent sessions.
 * @param iteration The iteration.
 * @param prompt Its prompt.
 * @returns The last attempt.
 */
export async function runSession(
  state: RunState,
  sessions: AgentSessions,
  iteration: number,
  prompt: string,
): Promise<SessionOutcome> {
  const retry = state.definition.retry;
  const retries: string[] = [];
  let resume = state.behavior.session === "continue"
    ? state.summaries.at(-1)?.sessionId
    : undefined;
  for (let attempt = 1;; attempt++) {
    const builder = new SummaryBuilder(iteration, state.definition.actions);
    const guard = completionGuard(state, builder);
    const end = await sessions.run(builder, {
      prompt,
      resume,
      main: true,
      onCompleteTask: guard.onCompleteTask,
      onFinish: finishToolRoute(state, builder, guard),
      onStop: guard.onStop,
    });
    state.pricing.learnFrom(builder.messages);
    const done = (fault?: SessionFault) => ({ builder, guard, end, fault, retries });
    if (state.signal.aborted || end.budget) return done();
    const fault = classifyFault(builder, end, retry);
    if (!fault) return done();
    retries.push(`${fault.retryable ? "retryable" : "fatal"}: ${fault.message}`);
    state.emit({ type: "session_fault", iteration, attempt, fault });
    if (!fault.retryable || attempt >= retry.maxAttempts) return done(fault);
    let waitMs = backoffMs(attempt, retry.baseDelaySeconds, retry.maxDelaySeconds);
    if (fault.fresh) {
      // The prompt carries what happened so far; a new session goes on from it.
      resume = undefined;
      await sessions.close();
      waitMs = 0;
    }
    if (fault.resetsAt !== undefined) {
      waitMs = Math.max(0, fault.resetsAt - Date.now());
      if (waitMs > retry.maxWaitSeconds * 1000) return done(fault);
    }
    state.costUsd += builder.current.costUsd;
    state.emit({ type: "retry", iteration, attempt, reason: fault.message, waitMs });
    await (state.options.sleep ?? abortableSleep)(waitMs, state.signal);
    if (state.signal.aborted) return done(fault);
  }
}

/**
 * The complete_task enforcement of one attempt: a success call is verified at
 * once, the Stop hook checks the tree, and both skip the checks once the
 * budget or deadline is spent.
 */
function completionGuard(state: RunState, builder: SummaryBuilder): CompletionGuard {
  const iteration = builder.current.iteration;
  return new CompletionGuard({
    require: state.behavior.requireCompleteTask,
    maxAttempts: state.behavior.maxContinuationAttempts,
    verify: async (call) => {
      if (!state.hasChecks) return undefined;
      const verified = await verifyTree(state, builder.current, {
        completeTask: call,
        stopReason: "complete_task",
        messages: builder.messages,
      }, "complete_task");
      return verified?.record;
    },
    checkOnStop: async (call, afterPass) => {
      if (!state.hasChecks) return undefined;
      return await verifyTree(state, builder.current, {
        completeTask: call,
        stopReason: "end_turn",
        messages: builder.messages,
        onlyIfChanged: afterPass,
      }, "stop_hook");
    },
    spent: () => spentAtStop(state, builder),
    unverified: () => missingEvidence(evidenceSources(state), builder.current),
    onEvent: (kind, data) => state.emit({ type: "guard", iteration, kind, data }),
  });
}

/**
 * Whether the run's deadline or cost budget is spent while a session runs.
 * Claude Code prices a session only in its result, after the Stop hook: the
 * session's tokens are priced with the prices earlier results gave. Without
 * such a price (the first session, or a model not seen yet) the cost is
 * unknown and counts as not spent: the checks run, and the verdict looks
 * again once the result gave the cost.
 */
function spentAtStop(
  state: RunState,
  builder: SummaryBuilder,
): { kind: "budget" | "deadline"; reason: string } | undefined {
  const { maxDurationSeconds, maxBudgetUsd } = state.behavior;
  if (
    maxDurationSeconds !== undefined && state.now() - state.started >= maxDurationSeconds * 1000
  ) {
    return { kind: "deadline", reason: `The time budget of ${maxDurationSeconds} s is spent` };
  }
  if (maxBudgetUsd === undefined) return undefined;
  const running = unpricedCost(builder.messages, state.pricing);
  if (running === undefined) return undefined;
  const cost = state.costUsd + builder.current.costUsd + running;
  if (cost < maxBudgetUsd) return undefined;
  return {
    kind: "budget",
    reason: `The cost budget of $${maxBudgetUsd} is spent (about $${cost.toFixed(4)})`,
  };
}
