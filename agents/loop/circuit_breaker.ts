/**
 * The circuit breaker: stops a loop that makes no progress, or that keeps
 * ending with the same error.
 *
 * @module
 */

/** What one iteration showed. */
export interface IterationProgress {
  /** New commits, or null when unknown. */
  newCommits: number | null;
  /** Whether files changed during the iteration (null when unknown). */
  filesChanged: boolean | null;
  /** The agent said it is waiting and its probes did not run out. */
  waiting: boolean;
  /** The error the iteration ended with, if any. */
  error?: string;
}

/**
 * Counts iterations without progress and repeated errors.
 *
 * An iteration without progress has no new commits, no file changes and a
 * status that is not waiting; a complete_task call or a confident message
 * without commits or changes is still no progress. Unknown evidence (outside
 * git, or git failing) is not counted either way.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CircuitBreaker } from "./circuit_breaker.ts";
 *
 * const breaker = new CircuitBreaker({ noProgressThreshold: 2, sameErrorThreshold: 5 });
 * const idle = { newCommits: 0, filesChanged: false, waiting: false };
 * assert.equal(breaker.record(idle), undefined);
 * assert.match(breaker.record(idle) ?? "", /2 iterations in a row/);
 * ```
 */
export class CircuitBreaker {
  #noProgress = 0;
  #sameError = 0;
  #lastError: string | undefined;
  #options: { noProgressThreshold: number; sameErrorThreshold: number };

  /** @param options The thresholds. */
  constructor(options: { noProgressThreshold: number; sameErrorThreshold: number }) {
    this.#options = options;
  }

  /** Iterations in a row without progress so far. */
  get noProgressStreak(): number {
    return this.#noProgress;
  }

  /**
   * Record an iteration.
   *
   * @param progress What it showed.
   * @returns Why the run is stalled, or undefined.
   */
  record(progress: IterationProgress): string | undefined {
    const known = progress.newCommits !== null && progress.filesChanged !== null;
    const moved = (progress.newCommits ?? 0) > 0 || progress.filesChanged === true;
    if (moved || progress.waiting) this.#noProgress = 0;
    else if (known) this.#noProgress++;

    const error = progress.error?.trim();
    if (error && error === this.#lastError) this.#sameError++;
    else this.#sameError = error ? 1 : 0;
    this.#lastError = error || undefined;

    if (this.#noProgress >= this.#options.noProgressThreshold) {
      return `No progress (no commits, no file changes) in ${this.#noProgress} iterations in a row`;
    }
    if (error && this.#sameError >= this.#options.sameErrorThreshold) {
      return `The same error ended ${this.#sameError} iterations in a row: ${error}`;
    }
    return undefined;
  }
}
