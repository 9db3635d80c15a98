/**
 * The checks phase: a claim of done meets the evidence. The configured and
 * detected checkers run on the final state, then, with `--create-pr`, the
 * pull request's own checks.
 *
 * @module
 */

import type { VerificationRecord } from "../checks/checker_contract.ts";
import { verify } from "../checks/verifier.ts";
import type { IterationSummary } from "../record/iteration.ts";
import type { RunState } from "./state.ts";

/**
 * Verify a complete claim: the checkers, then the pull request's checks.
 *
 * @param state The run.
 * @param summary The iteration that claims done.
 * @returns The verification, or undefined when nothing gates completion.
 */
export async function verifyClaim(
  state: RunState,
  summary: IterationSummary,
): Promise<VerificationRecord | undefined> {
  const iteration = summary.iteration;
  let verification: VerificationRecord | undefined;
  if (state.hasChecks) {
    verification = await verify(
      state.options.verifier!,
      state.checkContext(summary, {
        completeTask: summary.completeTask,
        stopReason: summary.stopReason ?? undefined,
      }),
      "handler",
    );
    summary.verification = verification;
    state.recordChecks(summary);
    state.emit({ type: "verification", iteration, trigger: "handler", verification });
  }
  if ((!verification || verification.passed) && state.options.pullRequest) {
    const published = await state.options.pullRequest.check(summary, state.signal);
    state.pullRequest = published.url ?? state.pullRequest;
    verification = published.verification;
    summary.verification = verification;
    state.emit({ type: "verification", iteration, trigger: "pull_request", verification });
  }
  return verification;
}
