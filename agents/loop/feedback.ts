/**
 * The verification feedback carried into the next prompt: what failed, so
 * that the agent's next session starts from it.
 *
 * @module
 */

import type { IterationSummary } from "../record/iteration.ts";

/**
 * Append the last failed verification's feedback to a prompt that does not
 * carry it yet (handlers on the built-in templates put it in
 * `{uv-verification_feedback}` themselves).
 *
 * @param prompt The handler's prompt.
 * @param previous The previous iteration's summary.
 * @returns The prompt with the feedback.
 */
export function withVerificationFeedback(
  prompt: string,
  previous: IterationSummary | undefined,
): string {
  const verification = previous?.verification;
  if (!verification || verification.passed || !verification.feedback) return prompt;
  if (prompt.includes(verification.feedback)) return prompt;
  return `${prompt}\n\n## Verification feedback\n\nThe work is not accepted yet. ${verification.checker}: ${verification.feedback}`;
}
