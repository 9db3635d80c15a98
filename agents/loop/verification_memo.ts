/**
 * One verification per tree: the run's latest verification, kept under the
 * key of what its checkers read (`verifyTree` in claim_verification.ts makes
 * the key and decides what is kept).
 *
 * @module
 */

import type { VerificationRecord } from "../checks/checker_contract.ts";
import type { IterationSummary } from "../record/iteration.ts";

/** The run's latest verification, under the keys of the tree it saw. */
export class VerificationMemo {
  #last:
    | { keys: string[]; record: VerificationRecord; checks: IterationSummary["checks"] }
    | undefined;

  /**
   * The verification of a tree, if it is the latest one.
   *
   * @param key The tree's key.
   * @returns The record and the repository checks' evidence, or undefined.
   */
  get(
    key: string,
  ): { record: VerificationRecord; checks: IterationSummary["checks"] } | undefined {
    return this.#last?.keys.includes(key) ? this.#last : undefined;
  }

  /**
   * Keep a verification (replacing the one before).
   *
   * @param keys The tree before the checks ran and after (a check may write files).
   * @param record The verification.
   * @param checks The repository checks' evidence it produced.
   */
  set(keys: string[], record: VerificationRecord, checks: IterationSummary["checks"]): void {
    this.#last = { keys, record: structuredClone(record), checks: structuredClone(checks) };
  }

  /** Forget the latest verification. */
  clear(): void {
    this.#last = undefined;
  }
}
