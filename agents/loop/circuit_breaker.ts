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
  /**
   * The agent is still at it: a probe answer said waiting or working or that
   * agents were active, or background tasks ran when it stopped. Such an
   * iteration never counts, however often it repeats (the iteration cap and
   * the budgets bound the run).
   */
  active: boolean;
  /** The error the iteration ended with, if any. */
  error?: string;
}

/**
 * Counts iterations without progress and repeated errors.
 *
 * An iteration counts when it has no new commits, no file changes and the
 * agent was not active: its probes timed out or gave no parseable answer (the
 * completion-detection design's "genuine timeout"), or no probe ran and
 * nothing moved, or the agent said complete (or called complete_task) without
 * a commit or a change: "the circuit breaker still increments if repeated".
 * Unknown evidence (outside git, or git failing) is not counted either way.
 * Errors are counted apart: the same error ending iterations in a row stops
 * the run whatever the progress.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { CircuitBreaker } from "./circuit_breaker.ts";
 *
 * const breaker = new CircuitBreaker({ noProgressThreshold: 2, sameErrorThreshold: 5 });
 * const idle = { newCommits: 0, filesChanged: false, active: false };
 * assert.equal(breaker.record(idle), undefined);
 * assert.equal(breaker.counted, true);
 * // An agent that says it is waiting or working resets the count.
 * assert.equal(breaker.record({ ...idle, active: true }), undefined);
 * assert.equal(breaker.counted, false);
 * assert.equal(breaker.record(idle), undefined);
 * assert.match(breaker.record(idle) ?? "", /2 iterations in a row/);
 * ```
 */
export class CircuitBreaker {
  #noProgress = 0;
  #sameError = 0;
  #lastError: string | undefined;
  #counted = false;
  #options: { noProgressThreshold: number; sameErrorThreshold: number };

  /** @param options The thresholds. */
  constructor(options: { noProgressThreshold: number; sameErrorThreshold: number }) {
    this.#options = options;
  }

  /** Iterations in a row without progress so far. */
  get noProgressStreak(): number {
    return this.#noProgress;
  }

  /** Whether the last recorded iteration counted as one without progress. */
  get counted(): boolean {
    return this.#counted;
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
    this.#counted = known && !moved && !progress.active;
    if (this.#counted) this.#noProgress++;
    else if (moved || progress.active) this.#noProgress = 0;

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
