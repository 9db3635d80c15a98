/**
 * The finish tool's route for one iteration (the user's finish tool design):
 * a `finish` call is recorded as a complete_task claim (`success: true` is a
 * `success`, verified at once the same way; `success: false` is `blocked`,
 * and the run ends), then the finish workflow runs through the caller's
 * `finishTool` and the agent reads the design's response. A failed check
 * answers `status: "failed"` with what to fix, and the iteration goes on.
 *
 * A verified `success` does not end the run by itself: as for a
 * complete_task `success`, the completion handler decides at the
 * iteration's end. The answer says what the run will do: `completed` only
 * when the handler will be satisfied as far as the runner can tell
 * ({@linkcode handlerOutlook}); otherwise `continuing`, with "The run
 * continues: <criteria>" first in `next_actions` (or, in the last
 * iteration, `failed`: the run ends at its cap, not completed, unless the
 * criteria are met in this session), and no workflow step runs: the run's
 * end runs them for its real outcome.
 *
 * @module
 */

import type { CompleteTaskCall } from "../record/complete_task_call.ts";
import {
  alwaysActions,
  type FinishToolAnswer,
  type FinishToolCall,
  withAlwaysActions,
} from "../record/finish_call.ts";
import { firstLine } from "../support/errors.ts";
import type { CompletionGuard } from "./complete_task_guard.ts";
import { handlerOutlook } from "./run_outlook.ts";
import type { RunState } from "./state.ts";
import type { SummaryBuilder } from "./summary_builder.ts";

/**
 * The finish tool's callback for one session, or undefined when `finish.tool` is off.
 *
 * @param state The run.
 * @param builder The iteration's summary builder.
 * @param guard The iteration's complete_task enforcement, which records the claim.
 * @returns The callback; its answer is the response as JSON.
 */
export function finishToolRoute(
  state: RunState,
  builder: SummaryBuilder,
  guard: CompletionGuard,
): ((call: FinishToolCall) => Promise<string>) | undefined {
  if (!state.definition.finish.tool) return undefined;
  return async (call) => JSON.stringify(await answerFinish(state, builder, guard, call));
}

async function answerFinish(
  state: RunState,
  builder: SummaryBuilder,
  guard: CompletionGuard,
  call: FinishToolCall,
): Promise<FinishToolAnswer> {
  const iteration = builder.current.iteration;
  const emit = (kind: string, data: Record<string, unknown>) =>
    state.emit({ type: "guard", iteration, kind, data });
  emit("finish_tool", { call });
  const claim = claimOf(call);
  await guard.onCompleteTask(claim, "finish");
  const sessionId = builder.current.sessionId ?? call.session_id ?? state.runId;
  const always = alwaysActions({ sessionId, cwd: state.options.cwd });
  const verification = guard.verification;
  if (call.success && verification && !verification.passed) {
    const fixes = verification.feedback.split("\n").map((line) => line.trim()).filter(Boolean)
      .slice(0, 5).map((line) => `Fix: ${line}`);
    const answer: FinishToolAnswer = {
      session_id: sessionId,
      status: "failed",
      summary_updated: false,
      skills_updated: false,
      history_saved: false,
      next_actions: withAlwaysActions(
        [...(fixes.length ? fixes : [`Fix: ${verification.checker}`]), CALL_AGAIN],
        always,
      ),
    };
    emit("finish_answer", { answer });
    return answer;
  }
  if (call.success) {
    const pending = { ...builder.current, completeTask: claim, verification };
    const agrees = await handlerOutlook(state.handler, state.definition, pending);
    if (agrees !== true) {
      const answer = goesOn(state, call, { sessionId, always, iteration, agrees });
      emit("finish_answer", { answer, handlerOutlook: agrees ?? "unknown" });
      return answer;
    }
  }
  const outcome = call.success
    ? { status: "completed", reason: `The agent called finish: ${call.summary}` }
    : {
      status: "blocked",
      reason: `The agent reported the task blocked in iteration ${iteration}: ${
        claim.remaining_work || "(no reason given)"
      }`,
    };
  let answer: FinishToolAnswer;
  try {
    answer = state.options.finishTool
      ? await state.options.finishTool(call, {
        sessionId,
        pending: { ...builder.current, completeTask: claim, verification },
        outcome,
        signal: state.signal,
      })
      : unsaved(call, sessionId, always);
  } catch (error) {
    emit("finish_tool_failed", { error: firstLine(error) });
    answer = unsaved(call, sessionId, always);
  }
  if (state.signal.aborted) answer = { ...answer, status: "cancelled" };
  emit("finish_answer", { answer });
  return answer;
}

/** What the agent reads after a failed check, before the resume actions. */
const CALL_AGAIN = "Call finish again once the checks pass";

/** The claim a finish call makes: the design's request as a complete_task call. */
function claimOf(call: FinishToolCall): CompleteTaskCall {
  return {
    status: call.success ? "success" : "blocked",
    // The design's request restates nothing; the summary stands for the request.
    original_request_summary: call.summary,
    summary: call.summary,
    ...(call.success ? {} : { remaining_work: call.summary }),
    ...(call.learned ? { learned: call.learned } : {}),
    ...(call.skills_used ? { skills_used: call.skills_used } : {}),
    ...(call.new_skills_needed ? { new_skills_needed: call.new_skills_needed } : {}),
    ...(call.files_modified ? { files_modified: call.files_modified } : {}),
    ...(call.next_steps ? { next_steps: call.next_steps } : {}),
  };
}

/**
 * The answer to a `success` the handler will not (or may not) accept with
 * this iteration: the run goes on, or ends at its cap, and says what it
 * waits for. No workflow step runs; the run's end runs them.
 */
function goesOn(
  state: RunState,
  call: FinishToolCall,
  facts: { sessionId: string; always: string[]; iteration: number; agrees: false | undefined },
): FinishToolAnswer {
  const criteria = state.criteria();
  const cap = state.options.maxIterations;
  const last = facts.iteration >= cap;
  const first = last
    ? `This is the last iteration (${facts.iteration} of ${cap}): the run ends after this session, not completed, unless: ${criteria}`
    : facts.agrees === false
    ? `The run continues: ${criteria}`
    : `The run continues unless the completion handler is satisfied when this session ends: ${criteria}`;
  const followUp = call.next_steps?.trim() ? [`Follow up: ${call.next_steps.trim()}`] : [];
  return {
    session_id: facts.sessionId,
    status: state.signal.aborted ? "cancelled" : last ? "failed" : "continuing",
    summary_updated: false,
    skills_updated: false,
    history_saved: false,
    next_actions: withAlwaysActions([first, ...followUp], facts.always),
  };
}

/** The answer without a history: from the call alone. */
function unsaved(call: FinishToolCall, sessionId: string, always: string[]): FinishToolAnswer {
  return {
    session_id: sessionId,
    status: call.success ? "completed" : "failed",
    summary_updated: false,
    skills_updated: false,
    history_saved: false,
    next_actions: withAlwaysActions(
      call.next_steps?.trim() ? [`Follow up: ${call.next_steps.trim()}`] : [],
      always,
    ),
  };
}
