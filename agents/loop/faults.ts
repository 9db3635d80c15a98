/**
 * Faults of an agent session: which ones re-running the iteration may fix
 * (rate limits, overload, server errors, a dead process, a hang), which ones
 * end the run with what to do (also while Claude Code is still retrying
 * them), and the backoff between attempts.
 *
 * @module
 */

import { firstLine } from "../support/errors.ts";
import type { RetryConfig } from "../definition/definition_types.ts";
import type { SummaryBuilder } from "./summary_builder.ts";
import type { ApiRetry } from "../record/iteration.ts";
import { AgentSetupError, SessionGoneError } from "../backends/port.ts";

/** A fault of one session attempt. */
export interface SessionFault {
  /** Whether re-running the iteration may help. */
  retryable: boolean;
  /** What happened and, for fatal faults, what to do. */
  message: string;
  /** For a rejected rate limit: when it resets (epoch milliseconds). */
  resetsAt?: number;
  /** The session to resume is gone: the retry starts a new one, at once. */
  fresh?: boolean;
  /**
   * The model's API could not be used (unreachable, the credentials refused,
   * failing beyond the wait budget): nothing more is asked of it in this run.
   */
  modelDown?: boolean;
}

/** Claude Code's result error for a `resume` of a session it does not have. */
const NO_CONVERSATION = /No conversation found with session ID/;

const FATAL_API_ERRORS: Record<string, string> = {
  authentication_failed:
    "Authentication failed: check ANTHROPIC_API_KEY (or the Claude Code login it uses)",
  oauth_org_not_allowed: "This organisation may not use Claude Code: log in with another account",
  account_on_hold: "The account is on hold: see the Anthropic console",
  verification_required: "The account needs verification: see the Anthropic console",
  billing_error:
    "Billing: the credit balance is too low or billing is not set up; add credits in the Anthropic console",
  model_not_found: "The model was not found: check --model or behavior.model",
  cloud_credential_error: "The cloud credentials (Bedrock/Vertex) were rejected: check them",
  invalid_request: "The API rejected the request as invalid",
  permission_error:
    "The API refused access (403): check that the key's workspace may use this model, or use another key",
};

/** Error types of the API's error bodies that name one of the codes above. */
const API_ERROR_ALIASES: Record<string, string> = {
  not_found_error: "model_not_found",
};

/** Statuses that no retry fixes, for retries whose error code says less. */
const FATAL_STATUSES: Record<number, string> = {
  401: "authentication_failed",
  402: "billing_error",
  403: "permission_error",
  404: "model_not_found",
};

const RETRYABLE_API_ERRORS = new Set(["rate_limit", "overloaded", "server_error", "unknown"]);

/**
 * Whether a retry that Claude Code announced cannot help: a rejected key
 * (401), a refused permission (403), billing, a missing model (404). Such a
 * session is ended at once rather than after Claude Code's ten retries.
 *
 * @param retry The retry, from the session's `api_retry` message.
 * @param apiKeySource Where the session's credentials come from: after a
 *   first 401 Claude Code refreshes a login token (`oauth`), so that retry may help.
 * @returns The code of {@linkcode FATAL_API_ERRORS} that explains it, or
 *   undefined when retrying may help (429, 500, 529, a connection error).
 */
export function fatalApiRetry(retry: ApiRetry, apiKeySource?: string): string | undefined {
  const code = API_ERROR_ALIASES[retry.error] ?? retry.error;
  const fatal = code in FATAL_API_ERRORS ? code : FATAL_STATUSES[retry.status ?? 0];
  if (!fatal) return undefined;
  const unauthorised = retry.status === 401 || code === "authentication_failed";
  if (unauthorised && retry.attempt <= 1 && apiKeySource === "oauth") return undefined;
  return fatal;
}

/** The fatal codes that say the API cannot be used at all, whatever the model (not a missing model). */
const MODEL_DOWN_ERRORS = new Set([
  "authentication_failed",
  "oauth_org_not_allowed",
  "account_on_hold",
  "verification_required",
  "billing_error",
  "cloud_credential_error",
  "permission_error",
]);

/**
 * A retry's status and error as people read them: `529 overloaded`; a
 * connection error (no status) with its cause when a probe of the host named
 * one: `connection error: cannot reach 127.0.0.1:9: connection refused (ECONNREFUSED)`.
 *
 * @param retry The retry.
 * @param cause Why the host cannot be reached, as a probe found it.
 * @returns The words.
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { apiRetryCause } from "./faults.ts";
 *
 * const retry = { attempt: 1, maxRetries: 10, waitMs: 500 };
 * assert.equal(apiRetryCause({ ...retry, status: 529, error: "overloaded" }), "529 overloaded");
 * assert.equal(
 *   apiRetryCause({ ...retry, status: null, error: "unknown" }, "cannot reach h:443: DNS lookup failed (ENOTFOUND)"),
 *   "connection error: cannot reach h:443: DNS lookup failed (ENOTFOUND)",
 * );
 * ```
 */
export function apiRetryCause(retry: ApiRetry, cause?: string): string {
  if (retry.status !== null) return `${retry.status} ${retry.error}`;
  const what = retry.noResponseMs !== undefined
    ? `no response within ${Math.round(retry.noResponseMs / 1000)} s`
    : "connection error";
  // Claude Code's code for a connection error says no more than "connection error" does.
  const code = /^(unknown|connection_error)?$/.test(retry.error) ? "" : ` ${retry.error}`;
  return `${what}${code}${cause ? `: ${cause}` : ""}`;
}

/**
 * Classify what went wrong in a session: rate limits, overload and server
 * errors, a dead agent process and a hang are retryable; authentication,
 * billing, a missing model or binary are fatal, and so are API retries beyond
 * the run's wait budget. A session that ended normally has no fault.
 *
 * @param builder The session's summary builder.
 * @param session Its error, whether the watchdog fired, and how long the
 *   run's API retries waited when that went beyond the wait budget.
 * @param retry The watchdog's timeout and the wait budget, for the messages.
 * @returns The fault, or undefined.
 */
export function classifyFault(
  builder: SummaryBuilder,
  session: { error: unknown; hung: boolean; waitedMs?: number; connectionCause?: string },
  retry: Pick<RetryConfig, "iterationTimeoutSeconds" | "maxWaitSeconds">,
): SessionFault | undefined {
  if (session.hung) {
    return {
      retryable: true,
      message: `No message from the agent for ${retry.iterationTimeoutSeconds} s: ` +
        "the session hung and was aborted",
    };
  }
  const retried = builder.lastApiRetry;
  if (session.waitedMs !== undefined) {
    return {
      retryable: false,
      modelDown: true,
      message:
        `Claude's API kept failing (${
          retried ? apiRetryCause(retried, session.connectionCause) : "retries"
        }) for ${
          Math.round(session.waitedMs / 1000)
        } s, beyond the wait budget of ${retry.maxWaitSeconds} s (retry.maxWaitSeconds, --max-wait): ` +
        "try again later, or resume with --resume",
    };
  }
  const fatal = retried && fatalApiRetry(retried, builder.apiKeySource);
  if (retried && fatal) {
    return {
      retryable: false,
      modelDown: MODEL_DOWN_ERRORS.has(fatal),
      message: `${FATAL_API_ERRORS[fatal]} (API error ${
        apiRetryCause(retried)
      }; Claude Code's retries were stopped)`,
    };
  }
  const limit = builder.rateLimit;
  if (limit?.status === "rejected") {
    return {
      retryable: true,
      modelDown: true,
      message: "Rate limited (the usage limit was reached)",
      resetsAt: limit.resetsAt !== undefined ? limit.resetsAt * 1000 : undefined,
    };
  }
  const apiError = builder.apiError;
  const detail = builder.current.errors.findLast((error) => error.startsWith("api ")) ?? "";
  if (apiError && FATAL_API_ERRORS[apiError]) {
    return {
      retryable: false,
      modelDown: MODEL_DOWN_ERRORS.has(apiError),
      message: `${FATAL_API_ERRORS[apiError]} (${detail || apiError})`,
    };
  }
  if (apiError && RETRYABLE_API_ERRORS.has(apiError)) {
    return { retryable: true, modelDown: true, message: `API error: ${detail || apiError}` };
  }
  const current = builder.current;
  const noTurn = builder.sawResult && current.turns === 0 &&
    current.stopReason === "error_during_execution";
  if (
    session.error instanceof SessionGoneError ||
    noTurn && current.errors.some((error) => NO_CONVERSATION.test(error))
  ) {
    const why = session.error instanceof SessionGoneError ? ` (${firstLine(session.error)})` : "";
    return {
      retryable: true,
      fresh: true,
      message: `The agent no longer has the session to continue${why}: starting a new one`,
    };
  }
  if (session.error instanceof AgentSetupError) {
    return { retryable: false, message: firstLine(session.error) };
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
  if (noTurn) {
    // An error before the first turn: nothing was done, so the iteration must not count.
    const error = current.errors.at(-1) ?? "error_during_execution";
    return {
      retryable: true,
      message: `The agent ended before its first turn: ${firstLine(error)}`,
    };
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
