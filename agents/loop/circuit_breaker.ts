/**
 * The circuit breaker: stops a loop that makes no progress, or that keeps
 * ending with the same error.
 *
 * @module
 */

/**
 * Rounds of probes in a row that may run out on `waiting` before such rounds
 * count. A round that ran out on `waiting` (every probe of
 * `probe.maxProbes` said waiting or working, the last waiting) with nothing
 * moved is the completion-detection design's genuine timeout; finishline
 * gives the background work two such rounds (up to 2 × 5 × (30 + 60) s with
 * the default probe settings), then counts each further one like a timeout,
 * so an agent that always answers `waiting` stalls the run after 2 +
 * `circuitBreaker.noProgressThreshold` rounds instead of running to the
 * iteration cap.
 */
export const FREE_WAITING_ROUNDS = 2;

/** What one iteration showed. */
export interface IterationProgress {
  /** New commits, or null when unknown. */
  newCommits: number | null;
  /** Whether files changed during the iteration (null when unknown). */
  filesChanged: boolean | null;
  /**
   * The agent is still at it: a probe answer said waiting or working or that
   * agents were active, or background tasks ran when it stopped. Such an
   * iteration does not count, except a round of probes that ran out on
   * `waiting` after {@linkcode FREE_WAITING_ROUNDS} such rounds in a row.
   */
  active: boolean;
  /** Its probes ran out while the agent said waiting: every one was asked, the last said `waiting`. */
  waitedOut?: boolean;
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
 * Rounds of probes that run out on `waiting` are the design's timeout too:
 * after {@linkcode FREE_WAITING_ROUNDS} of them in a row, each further one
 * with nothing moved counts, whatever the agent says.
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
 * @example An agent that always answers "waiting"
 * ```ts
 * import assert from "node:assert/strict";
 * import { CircuitBreaker, FREE_WAITING_ROUNDS } from "./circuit_breaker.ts";
 *
 * const breaker = new CircuitBreaker({ noProgressThreshold: 2, sameErrorThreshold: 5 });
 * const waiting = { newCommits: 0, filesChanged: false, active: true, waitedOut: true };
 * for (let round = 1; round <= FREE_WAITING_ROUNDS; round++) {
 *   assert.equal(breaker.record(waiting), undefined);
 *   assert.equal(breaker.counted, false);
 * }
 * assert.equal(breaker.record(waiting), undefined);
 * assert.equal(breaker.counted, true);
 * assert.match(breaker.record(waiting) ?? "", /still waiting after 4 rounds of probes/);
 * ```
 */
export class CircuitBreaker {
  #noProgress = 0;
  #sameError = 0;
  #lastError: string | undefined;
  #counted = false;
  #waitingRounds = 0;
  #options: { noProgressThreshold: number; sameErrorThreshold: number };

  /** @param options The thresholds. */
  constructor(options: { noProgressThreshold: number; sameErrorThreshold: number }) {
    this.#options = options;
  }

  /** Iterations in a row without progress so far. */
  get noProgressStreak(): number {
    return this.#noProgress;
  }

  /** Rounds of probes in a row that ran out on `waiting` with nothing moved, the last one included. */
  get waitingRounds(): number {
    return this.#waitingRounds;
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
    this.#waitingRounds = progress.waitedOut && !moved ? this.#waitingRounds + 1 : 0;
    const overdue = this.#waitingRounds > FREE_WAITING_ROUNDS;
    const active = progress.active && !overdue;
    this.#counted = known && !moved && !active;
    if (this.#counted) this.#noProgress++;
    else if (moved || active) this.#noProgress = 0;

    const error = progress.error?.trim();
    if (error && error === this.#lastError) this.#sameError++;
    else this.#sameError = error ? 1 : 0;
    this.#lastError = error || undefined;

    if (this.#noProgress >= this.#options.noProgressThreshold) {
      const waiting = overdue
        ? `, the agent still waiting after ${this.#waitingRounds} rounds of probes in a row`
        : "";
      return `No progress (no commits, no file changes) in ${this.#noProgress} iterations in a row${waiting}`;
    }
    if (error && this.#sameError >= this.#options.sameErrorThreshold) {
      return `The same error ended ${this.#sameError} iterations in a row: ${error}`;
    }
    return undefined;
  }
}
