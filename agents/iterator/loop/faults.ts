/**
 * Faults of an agent session: which ones re-running the iteration may fix
 * (rate limits, overload, server errors, a dead process, a hang), which ones
 * end the run with what to do, and the backoff between attempts.
 *
 * @module
 */

import { firstLine } from "../../common/errors.ts";
import type { SummaryBuilder } from "../../common/summary.ts";

/** A fault of one session attempt. */
export interface SessionFault {
  /** Whether re-running the iteration may help. */
  retryable: boolean;
  /** What happened and, for fatal faults, what to do. */
  message: string;
  /** For a rejected rate limit: when it resets (epoch milliseconds). */
  resetsAt?: number;
}

const FATAL_API_ERRORS: Record<string, string> = {
  authentication_failed:
    "Authentication failed: check ANTHROPIC_API_KEY (or log in with `claude login`)",
  oauth_org_not_allowed: "This organisation may not use Claude Code: log in with another account",
  account_on_hold: "The account is on hold: see the Anthropic console",
  verification_required: "The account needs verification: log in with `claude login`",
  billing_error:
    "Billing: the credit balance is too low or billing is not set up; add credits in the Anthropic console",
  model_not_found: "The model was not found: check --model or behavior.model",
  cloud_credential_error: "The cloud credentials (Bedrock/Vertex) were rejected: check them",
  invalid_request: "The API rejected the request as invalid",
};

const RETRYABLE_API_ERRORS = new Set(["rate_limit", "overloaded", "server_error", "unknown"]);

/**
 * Classify what went wrong in a session: rate limits, overload and server
 * errors, a dead agent process and a hang are retryable; authentication,
 * billing, a missing model or binary are fatal. A session that ended
 * normally has no fault.
 *
 * @param builder The session's summary builder.
 * @param session Its error and whether the watchdog fired.
 * @param timeoutSeconds The watchdog's timeout, for the message.
 * @returns The fault, or undefined.
 */
export function classifyFault(
  builder: SummaryBuilder,
  session: { error: unknown; hung: boolean },
  timeoutSeconds: number,
): SessionFault | undefined {
  if (session.hung) {
    return {
      retryable: true,
      message:
        `No message from the agent for ${timeoutSeconds} s: the session hung and was aborted`,
    };
  }
  const limit = builder.rateLimit;
  if (limit?.status === "rejected") {
    return {
      retryable: true,
      message: "Rate limited (the usage limit was reached)",
      resetsAt: limit.resetsAt !== undefined ? limit.resetsAt * 1000 : undefined,
    };
  }
  const apiError = builder.apiError;
  const detail = builder.current.errors.findLast((error) => error.startsWith("api ")) ?? "";
  if (apiError && FATAL_API_ERRORS[apiError]) {
    return { retryable: false, message: `${FATAL_API_ERRORS[apiError]} (${detail || apiError})` };
  }
  if (apiError && RETRYABLE_API_ERRORS.has(apiError)) {
    return { retryable: true, message: `API error: ${detail || apiError}` };
  }
  if (session.error !== undefined && !builder.sawResult) {
    const message = firstLine(session.error);
    if (/ENOENT|no such file|not found|EACCES|spawn/i.test(message)) {
      return {
        retryable: false,
        message:
          `The Claude Code binary could not be started: ${message}; reinstall the dependencies (deno install) or check the executable path`,
      };
    }
    return { retryable: true, message: `The agent process ended without a result: ${message}` };
  }
  return undefined;
}

/**
 * Exponential backoff with jitter: base * 2^(attempt-1), at most max, then
 * a random 50-100% of it.
 *
 * @param attempt The attempt that failed (1-based).
 * @param baseSeconds First delay.
 * @param maxSeconds Cap.
 * @returns Milliseconds to wait.
 */
export function backoffMs(attempt: number, baseSeconds: number, maxSeconds: number): number {
  const capped = Math.min(maxSeconds, baseSeconds * 2 ** (attempt - 1)) * 1000;
  return Math.round(capped * (0.5 + Math.random() / 2));
}

/**
 * Wait `ms` milliseconds, or less when the signal aborts.
 *
 * @param ms How long.
 * @param signal Ends the wait early.
 * @returns Resolves when the time is up or the signal aborted.
 */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}
