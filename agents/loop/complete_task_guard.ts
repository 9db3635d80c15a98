/**
 * complete_task enforcement for one iteration (the user's complete_task
 * enforcement design): records the agent's complete_task calls, verifies a
 * `success` at once and answers with the checks' verdict, and answers the
 * Stop hook: an agent that stops without calling complete_task (or after a
 * failed verification) is sent back, at most `maxAttempts` times. At a stop
 * the configured checkers run too when there is something to check (the
 * completion checkers' Stop hook): their feedback sends the agent back. When
 * the run's budget or deadline is spent, nothing is checked and the agent may
 * stop: it cannot do more work anyway.
 *
 * @module
 */

import type { StopDecision, StopEvent } from "../backends/port.ts";
import type { VerificationRecord } from "../checks/checker_contract.ts";
import type { CompleteTaskCall } from "../record/complete_task_tool.ts";

/** The message that sends an agent back when it stops without complete_task. */
export const CONTINUATION_MESSAGE =
  "You stopped without calling complete_task. Review the original request. Did you complete ALL parts? " +
  "If yes, call complete_task with status success. If you are blocked, call it with status blocked and say why in remaining_work. " +
  "If you completed only some parts, call it with status partial. Do not stop again without calling it.";

/** Options of {@linkcode CompletionGuard}. */
export interface CompletionGuardOptions {
  /** Whether stopping without complete_task is blocked. */
  require: boolean;
  /** How often per iteration the agent is sent back. */
  maxAttempts: number;
  /** Runs the checkers for a success call; undefined when none are configured. */
  verify: (call: CompleteTaskCall) => Promise<VerificationRecord | undefined>;
  /**
   * Runs the checkers at a stop, or reuses the verification of the same tree;
   * undefined when none are configured. `afterPass`: the latest success call
   * passed, so the checks need to run only if the tree changed since (when the
   * tree cannot be told apart, the pass stands and this answers undefined).
   */
  checkOnStop?: (
    call: CompleteTaskCall | undefined,
    afterPass: boolean,
  ) => Promise<{ record: VerificationRecord; reused: boolean } | undefined>;
  /** Why the run's cost budget or deadline is spent, if it is: then nothing is checked. */
  spent?: () => { kind: "budget" | "deadline"; reason: string } | undefined;
  /** Why nothing can verify a success call when no checker runs (`no checks found`), if so. */
  unverified?: () => string | undefined;
  /** Records guard events in the run log. */
  onEvent?: (kind: string, data: Record<string, unknown>) => void;
}

/**
 * Per-iteration complete_task state and the callbacks the backend calls.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CompletionGuard } from "./complete_task_guard.ts";
 *
 * const guard = new CompletionGuard({
 *   require: true,
 *   maxAttempts: 2,
 *   verify: () => Promise.resolve(undefined),
 * });
 * const first = await guard.onStop({ stopHookActive: false, backgroundTasks: [] });
 * assert.equal(first.block, true);
 * await guard.onCompleteTask({
 *   status: "success",
 *   original_request_summary: "x",
 *   summary: "done",
 * });
 * const second = await guard.onStop({ stopHookActive: true, backgroundTasks: [] });
 * assert.equal(second.block, false);
 * ```
 */
export class CompletionGuard {
  /** Every complete_task call of the iteration, in order. */
  readonly calls: CompleteTaskCall[] = [];
  /** The verification of the latest success call. */
  verification: VerificationRecord | undefined;
  /** Failed verifications of earlier success calls that a later success call passed. */
  readonly fixed: VerificationRecord[] = [];
  /** How often the agent was sent back. */
  attempts = 0;
  /** Whether the guard let the agent stop without a call after its attempts ran out. */
  gaveUp = false;
  /** Background tasks the agent had running when it last tried to stop. */
  backgroundTasks = 0;
  #options: CompletionGuardOptions;
  #failed: VerificationRecord[] = [];
  /** The tool that made the latest call: its name is what the agent is told to call again. */
  #tool: "complete_task" | "finish" = "complete_task";

  /** @param options Enforcement settings and the verifier. */
  constructor(options: CompletionGuardOptions) {
    this.#options = options;
  }

  /** The latest call, if any. */
  get lastCall(): CompleteTaskCall | undefined {
    return this.calls.at(-1);
  }

  /**
   * Record a complete_task call and answer it.
   *
   * @param call The tool input.
   * @param tool The tool the agent called: a `finish` call is recorded as its claim.
   * @returns The tool result text the agent reads.
   */
  onCompleteTask = async (
    call: CompleteTaskCall,
    tool: "complete_task" | "finish" = "complete_task",
  ): Promise<string> => {
    this.calls.push(call);
    this.#tool = tool;
    this.#options.onEvent?.("complete_task", { call });
    if (call.status === "blocked") {
      return "Recorded: blocked. The run ends here and reports what you wrote in remaining_work. Stop now.";
    }
    if (call.status === "partial") {
      return "Recorded: partial. The next iteration continues from what you left in remaining_work. Stop now.";
    }
    const spent = this.#options.spent?.();
    if (spent) {
      this.#options.onEvent?.("checks_skipped", { trigger: "complete_task", ...spent });
      return `Recorded: success. ${spent.reason}, so the checks were skipped. Stop now.`;
    }
    const verification = await this.#options.verify(call);
    this.#track(verification);
    this.#options.onEvent?.("verification", { trigger: "complete_task", verification });
    const unverified = verification ? verification.unverified : this.#options.unverified?.();
    if (unverified) {
      // No evidence is not success: never "the checks passed" when nothing checked the work.
      return `Recorded: success, but nothing could check it (unverified: ${unverified}). finishline does not call the work verified, and closes nothing on this claim. You may stop now.`;
    }
    if (!verification) return "Recorded: success. No checks are configured. You may stop now.";
    if (verification.passed) {
      return `Recorded: success, and the checks passed${
        verification.feedback ? ` (${verification.feedback})` : ""
      }. You may stop now.`;
    }
    return [
      `Recorded, but the checks did NOT pass (${verification.checker}):`,
      verification.feedback,
      "Fix these problems, then call complete_task again.",
    ].join("\n");
  };

  /**
   * Decide whether the agent may stop.
   *
   * @param event The Stop hook's input.
   * @returns Stop, or block with the reason the agent reads.
   */
  onStop = async (event: StopEvent): Promise<StopDecision> => {
    this.backgroundTasks = event.backgroundTasks.length;
    // The budget/deadline bypass: no checks, no continuation.
    const spent = this.#options.spent?.();
    if (spent) {
      this.#options.onEvent?.("stop_allowed", {
        attempts: this.attempts,
        stopHookActive: event.stopHookActive,
        reason: spent.kind,
        detail: spent.reason,
      });
      return { block: false };
    }
    const reason = this.#reasonToBlock() ?? await this.#checkAtStop();
    if (reason === undefined) return { block: false };
    if (this.attempts >= this.#options.maxAttempts) {
      this.gaveUp = true;
      this.#options.onEvent?.("stop_allowed", {
        attempts: this.attempts,
        stopHookActive: event.stopHookActive,
        reason,
      });
      return { block: false };
    }
    this.attempts++;
    this.#options.onEvent?.("stop_blocked", {
      attempt: this.attempts,
      stopHookActive: event.stopHookActive,
      reason,
    });
    return { block: true, reason };
  };

  /**
   * The checkers at a stop, when there is something to check: with
   * complete_task not required, at every stop; with it required, after a
   * success call whose tree changed since it passed (a stop without a call
   * gets the continuation message instead, and the call's own verification
   * runs then). Not after blocked or partial: the agent said it is not done.
   */
  async #checkAtStop(): Promise<string | undefined> {
    const check = this.#options.checkOnStop;
    const last = this.lastCall;
    if (!check || (last && last.status !== "success")) return undefined;
    if (this.#options.require && !last) return undefined;
    const afterPass = this.verification?.passed === true;
    const checked = await check(last, afterPass);
    if (!checked) return undefined;
    const verification = checked.record;
    // The tree the success call passed: nothing new to record.
    if (afterPass && checked.reused && verification.passed) return undefined;
    this.#track(verification);
    this.#options.onEvent?.("verification", {
      trigger: "stop_hook",
      verification,
      ...(checked.reused ? { reused: true } : {}),
    });
    if (verification.passed) return undefined;
    return `The checks did not pass (${verification.checker}):\n${verification.feedback}\nFix these problems before you stop.`;
  }

  /** Keep the failures until a passing call shows they were fixed. */
  #track(verification: VerificationRecord | undefined): void {
    if (this.verification && !this.verification.passed) this.#failed.push(this.verification);
    if (verification?.passed) this.fixed.push(...this.#failed.splice(0));
    this.verification = verification;
  }

  #reasonToBlock(): string | undefined {
    if (!this.#options.require) return undefined;
    const last = this.lastCall;
    if (!last) return CONTINUATION_MESSAGE;
    if (last.status !== "success") return undefined;
    if (this.verification?.trigger === "complete_task" && !this.verification.passed) {
      const tool = this.#tool;
      const giveUp = tool === "finish"
        ? "or call it with success false if you are blocked"
        : "or call it with status partial or blocked";
      return `Your ${tool} call did not pass the checks (${this.verification.checker}): ${this.verification.feedback}\nFix the problems and call ${tool} again, ${giveUp}.`;
    }
    return undefined;
  }
}
